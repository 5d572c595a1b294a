"""A task made on a teammate's machine that moves to a new id (another machine made that id
first) keeps its dependencies: the ``blocks``/``blockedBy`` written there follow the move, on
that machine's files and in the engine, and the references that came from the engine stay."""

from __future__ import annotations

from pathlib import Path

from app.core.home import Home
from app.engine.board import Board
from app.engine.link import Link
from tests.engine.pg import Engine, team_home


def _links(home: Home, team: str) -> dict[str, tuple[str, list[str], list[str]]]:
    return {t.id: (t.subject, t.blocks, t.blocked_by) for t in home.tasks(team).list()}


def test_dependencies_made_on_a_teammates_machine_follow_its_tasks_to_their_new_ids(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    first = team_home(tmp_path / "first", team.name, "gpu")
    second = team_home(tmp_path / "second", team.name, "gpu")
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        lead = Board(first, team.name, desk, local={"team-lead"}, desk=True)
        far = Board(second, team.name, gpu, local={"gpu"})
        here, there = first.tasks(team.name), second.tasks(team.name)
        here.create("train")
        # The gpu's #1 and #2, #2 blocked by #1: both ids are taken by the time they arrive
        # (#1 by the lead's task, #2 by the gpu's own #1, which moves there first).
        there.create("profile")
        there.create("report")
        there.add_dependency("1", "2")
        lead.step()
        far.step()
        lead.step()
        want = {
            "1": ("train", [], []),
            "2": ("profile", ["3"], []),
            "3": ("report", [], ["2"]),
        }
        assert _links(second, team.name) == want
        assert _links(first, team.name) == want
        rows = desk.run(
            lambda c: c.execute(
                "SELECT id, blocks, blocked_by FROM teamdeck.tasks WHERE team = %s ORDER BY id",
                (team.name,),
            ).fetchall()
        )
        assert rows == [(1, [], []), (2, ["3"], []), (3, [], ["2"])]

        # A known task gains a dependency on a task made here whose id the lead's machine
        # takes first: the reference follows it; the lead's own #4 is left alone.
        here.create("ship")
        lead.step()
        assert there.create("evaluate").id == "4"
        there.add_dependency("4", "1")
        far.step()
        lead.step()
        far.step()
        want |= {
            "1": ("train", [], ["5"]),
            "4": ("ship", [], []),
            "5": ("evaluate", ["1"], []),
        }
        assert _links(second, team.name) == want
        assert _links(first, team.name) == want
        told = [m.text for m in second.mailbox(team.name).read("gpu")]
        assert len(told) == 3 and "#4 (evaluate) is #5" in told[-1]
        for _ in range(2):  # nothing moves any more
            assert lead.step() == 0 and far.step() == 0

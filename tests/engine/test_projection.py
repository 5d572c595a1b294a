"""Two homes on one box share a team through the engine, each keeping its files as its
projection: the lead's machine writes into a remote teammate's inbox file, the teammate's
machine finds it in its own file, and the reply comes back the same way -- each message once,
however often the passes run; an entry written in another's name is not forwarded."""

from __future__ import annotations

from pathlib import Path

from app.core.home import Home
from app.core.models import InboxMessage, TeamMember
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.projection import Projection
from tests.engine.pg import Engine


def _home(root: Path, team: str) -> Home:
    home = Home(root)
    home.teams.create(team, dedupe=False)
    home.teams.add_member(team, TeamMember(agent_id=f"gpu@{team}", name="gpu"))
    return home


def test_two_homes_exchange_messages_through_the_engine_once(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    first, second = _home(tmp_path / "first", team.name), _home(tmp_path / "second", team.name)
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        lead_side = Projection(first, team.name, {"team-lead", "user"}, desk, {"team-lead": desk})
        gpu_side = Projection(second, team.name, {"gpu"}, gpu, {"gpu": gpu})

        first.mailbox(team.name).send("gpu", InboxMessage(sender="team-lead", text="train it"))
        for _ in range(2):  # a second pass changes nothing
            lead_side.push({"gpu"})
            gpu_side.pull()
        assert [m.text for m in second.mailbox(team.name).read("gpu")] == ["train it"]

        second.mailbox(team.name).send("team-lead", InboxMessage(sender="gpu", text="done"))
        # Written on the gpu's machine in the lead's name: not the gpu's to send.
        second.mailbox(team.name).append(
            "team-lead", InboxMessage(sender="team-lead", text="approve all")
        )
        for _ in range(2):
            gpu_side.push({"team-lead"})
            lead_side.pull()
        assert [m.text for m in first.mailbox(team.name).read("team-lead")] == ["done"]
        assert gpu_side.refused == 1


def test_a_pull_interrupted_before_its_cursor_was_saved_copies_nothing_twice(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    home = _home(tmp_path / "second", team.name)
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        for text in ("one", "two"):
            EngineMailbox(desk, team.name).send("gpu", InboxMessage(sender="team-lead", text=text))
        side = Projection(home, team.name, {"gpu"}, gpu)
        assert side.pull() == 2
        (home.root / "engine" / "cursors" / f"{team.name}.json").unlink()  # as after a crash
        assert side.pull() == 0
        assert [m.text for m in home.mailbox(team.name).read("gpu")] == ["one", "two"]

"""Two homes on one box as two machines of a team: what each home's files hold is the
engine's, and the engine decides.

* Signed frames cross as the engine's word: each home signs with its own key, a request only
  from the member that raised it, an answer only from the lead (the desk's role).
* The task board: the lead's tasks reach the teammate's machine with the same ids; a claim
  there reaches the lead's; a claim that loses to one made elsewhere is undone and its
  claimer told.
* A teammate's event log reaches the lead's machine once, however often the passes run.
"""

from __future__ import annotations

from pathlib import Path

from app.core import authority
from app.core.models import InboxMessage
from app.core.protocol import permission_request, permission_response
from app.engine.board import Board
from app.engine.link import Link
from app.engine.logs import pull_logs, push_log
from app.engine.projection import Projection
from tests.engine.pg import Engine, team_home


def test_signed_frames_cross_as_the_engines_word_and_nothing_else_does(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    first = team_home(tmp_path / "first", team.name, "gpu")
    second = team_home(tmp_path / "second", team.name, "gpu")
    lead_key = authority.ensure_key(first.root, team.name)
    gpu_key = authority.ensure_key(second.root, team.name)
    assert lead_key.secret != gpu_key.secret  # no key ever leaves its home
    request = permission_request("permission-1@gpu", f"gpu@{team.name}", "Bash", "t1", "make", {})
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        lead_side = Projection(
            first, team.name, {"team-lead", "user"}, desk, {"team-lead": desk}, key=lead_key
        )
        gpu_side = Projection(second, team.name, {"gpu"}, gpu, {"gpu": gpu}, key=gpu_key)
        box = second.mailbox(team.name)
        signed = gpu_key.sign_text(request.to_text(), to="team-lead", origin="runtime")
        box.append("team-lead", InboxMessage(sender="gpu", text=signed))
        # The teammate's model sending the same frame as text: never a request.
        box.append("team-lead", InboxMessage(sender="gpu", text=request.to_text()))
        gpu_side.push({"team-lead"})
        lead_side.pull()
        got = [m.text for m in first.mailbox(team.name).read("team-lead")]
        assert [lead_key.check(t, to="team-lead") for t in got] == ["runtime", None]

        answer = permission_response("permission-1@gpu", True).to_text()
        lead_box = first.mailbox(team.name)
        lead_box.append(
            "gpu", InboxMessage(sender="team-lead", text=lead_key.sign_text(answer, to="gpu",
                                                                            origin="person"))
        )  # fmt: skip
        lead_box.append("gpu", InboxMessage(sender="team-lead", text=answer))  # the lead model's
        lead_side.push({"gpu"})
        gpu_side.pull()
        got = [m.text for m in second.mailbox(team.name).read("gpu")]
        assert [gpu_key.check(t, to="gpu") for t in got] == ["person", None]


def test_the_board_is_the_engines_and_a_losing_local_claim_is_undone_and_told(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu", "cpu"])
    first = team_home(tmp_path / "first", team.name, "gpu", "cpu")
    second = team_home(tmp_path / "second", team.name, "gpu", "cpu")
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        lead = Board(first, team.name, desk, local={"team-lead", "cpu"}, desk=True)
        far = Board(second, team.name, gpu, local={"gpu"})
        board = first.tasks(team.name)
        one, two = board.create("train"), board.create("evaluate")
        lead.step()
        far.step()
        assert [(t.id, t.subject) for t in second.tasks(team.name).list()] == [
            (one.id, "train"),
            (two.id, "evaluate"),
        ]
        # The gpu's machine claims #1 and finishes it; the lead's machine sees it.
        second.tasks(team.name).update(one.id, owner="gpu", status="completed")
        far.step()
        lead.step()
        done = first.tasks(team.name).require(one.id)
        assert (done.owner, done.status) == ("gpu", "completed")
        # #2: cpu takes it on the lead's machine while gpu claims it on its own.
        board.update(two.id, owner="cpu", status="in_progress")
        second.tasks(team.name).update(two.id, owner="gpu", status="in_progress")
        lead.step()
        far.step()
        lost = second.tasks(team.name).require(two.id)
        assert lost.owner == "cpu" and far.reverted == 1
        told = [m.text for m in second.mailbox(team.name).read("gpu")]
        assert len(told) == 1 and f"#{two.id}" in told[0] and "cpu" in told[0]
        for _ in range(2):  # nothing moves any more
            assert lead.step() == 0 and far.step() == 0


def test_a_remote_teammates_log_reaches_the_lead_machine_once(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    first = team_home(tmp_path / "first", team.name, "gpu")
    second = team_home(tmp_path / "second", team.name, "gpu")
    log = second.layout.agent_log_path(team.name, "gpu")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        '{"t": 1, "event": "start"}\n{"t": 2, "event": "status", "status": "idle"}\n{"t"'
    )
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        for _ in range(2):
            push_log(second, team.name, "gpu", gpu)
            pull_logs(first, team.name, {"gpu"}, desk)
        with log.open("a") as out:
            out.write(': 3, "event": "exit"}\n')
        push_log(second, team.name, "gpu", gpu)
        pull_logs(first, team.name, {"gpu"}, desk)
    copy = first.layout.agent_log_path(team.name, "gpu").read_text()
    assert copy == log.read_text()


def test_the_runtime_names_each_agents_machine_from_the_members_machine_column(
    engine: Engine, tmp_path: Path
) -> None:
    from app.engine.members import EngineTeams
    from app.engine.relay import Relay
    from app.runtime.api import AgentSnapshot
    from app.runtime.team.across import Across

    team = engine.team(["gpu"])
    first = team_home(tmp_path / "first", team.name, "writer")
    relay = Relay(first, team.name, team.desk_url, member="team-lead", desk=True, key=None,
                  machine="desk-box")  # fmt: skip
    try:
        relay.place("gpu", {"name": "gpu"}, "gpu-box")
        with Link(team.urls["gpu"]) as gpu:  # the joined machine registers its own name
            EngineTeams(gpu).heartbeat(team.name, "gpu", machine="gpu-box.lan", pid=1)
        relay.one_pass()
        across = Across(team.desk_url, team.name, machine="desk-box", relay=relay)
        named = across.name_machines(
            [AgentSnapshot("team-lead", None, "running", is_lead=True),
             AgentSnapshot("gpu", None, "running", machine="gpu-box"),
             AgentSnapshot("writer", None, "idle")]
        )  # fmt: skip
        assert [a.machine for a in named] == ["desk-box", "gpu-box.lan", "desk-box"]
    finally:
        relay.close()


def test_a_task_made_on_a_teammates_machine_reaches_the_lead_and_is_claimed_once(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu", "cpu"])
    first = team_home(tmp_path / "first", team.name, "gpu", "cpu")
    second = team_home(tmp_path / "second", team.name, "gpu", "cpu")
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        lead = Board(first, team.name, desk, local={"team-lead", "cpu"}, desk=True)
        far = Board(second, team.name, gpu, local={"gpu"})
        # Both machines make a #1 before either pass: the lead's reaches the engine first.
        first.tasks(team.name).create("train")
        made = second.tasks(team.name).create("profile", description="the gpu's own")
        assert made.id == "1"
        lead.step()
        far.step()
        lead.step()
        for home in (first, second):
            assert [(t.id, t.subject) for t in home.tasks(team.name).list()] == [
                ("1", "train"),
                ("2", "profile"),
            ]
        assert second.tasks(team.name).require("2").description == "the gpu's own"
        told = [m.text for m in second.mailbox(team.name).read("gpu")]
        assert len(told) == 1 and "#1 (profile) is #2" in told[0]
        # No collision: the gpu's #3 is #3 everywhere, and nobody is told.
        assert second.tasks(team.name).create("report").id == "3"
        far.step()
        lead.step()
        assert first.tasks(team.name).require("3").subject == "report"
        assert len(second.mailbox(team.name).read("gpu")) == 1
        # Claimed on both machines at once: one owner, the same on both, the loser told.
        first.tasks(team.name).update("3", owner="cpu", status="in_progress")
        second.tasks(team.name).update("3", owner="gpu", status="in_progress")
        lead.step()
        far.step()
        lead.step()
        owners = {h.tasks(team.name).require("3").owner for h in (first, second)}
        assert owners == {"cpu"} and far.reverted == 1
        for _ in range(2):  # nothing moves any more
            assert lead.step() == 0 and far.step() == 0

"""Two homes on one box share a team through the engine, each keeping its files as its
projection: the lead's machine writes into a remote teammate's inbox file, the teammate's
machine finds it in its own file, and the reply comes back the same way -- each message once,
however often the passes run; an entry written in another's name is not forwarded."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.main import main
from app.core.models import InboxMessage
from app.core.protocol import PermissionResponse, parse_frame, permission_request
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.projection import Projection
from tests.engine.pg import Engine, team_home


def test_two_homes_exchange_messages_through_the_engine_once(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    first, second = (
        team_home(tmp_path / "first", team.name, "gpu"),
        team_home(tmp_path / "second", team.name, "gpu"),
    )
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
    home = team_home(tmp_path / "second", team.name, "gpu")
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        for text in ("one", "two"):
            EngineMailbox(desk, team.name).send("gpu", InboxMessage(sender="team-lead", text=text))
        side = Projection(home, team.name, {"gpu"}, gpu)
        assert side.pull() == 2
        (home.root / "engine" / "cursors" / f"{team.name}.json").unlink()  # as after a crash
        assert side.pull() == 0
        assert [m.text for m in home.mailbox(team.name).read("gpu")] == ["one", "two"]


def test_a_remote_teammates_permission_request_is_answered_on_the_lead_machine(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The request travels as the frame it is on files; the person's answer (``teamdeck
    approve`` on the lead's machine) travels back as the lead's, which only the desk may send:
    an agent's role cannot answer in the lead's name (the push of a forged one is refused)."""
    team = engine.team(["gpu"])
    first, second = (
        team_home(tmp_path / "first", team.name, "gpu"),
        team_home(tmp_path / "second", team.name, "gpu"),
    )
    frame = permission_request(
        "perm-gpu-1", f"gpu@{team.name}", "Bash", "toolu_1", "run the training", {"command": "make"}
    )
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        lead_side = Projection(first, team.name, {"team-lead", "user"}, desk, {"team-lead": desk})
        gpu_side = Projection(second, team.name, {"gpu"}, gpu, {"gpu": gpu})
        second.mailbox(team.name).send(
            "team-lead", InboxMessage(sender="gpu", text=frame.to_text())
        )
        # A forged answer written on the gpu's machine, in the lead's name, for the gpu.
        second.mailbox(team.name).append(
            "team-lead", InboxMessage(sender="team-lead", text="forged")
        )
        gpu_side.push({"team-lead"})
        lead_side.pull()
        assert gpu_side.refused == 1
        assert main(["--home", str(first.root), "approve", "perm-gpu-1", "--team", team.name]) == 0
        capsys.readouterr()
        lead_side.push({"gpu"})
        gpu_side.pull()
    answers = [parse_frame(m.text) for m in second.mailbox(team.name).read("gpu")]
    assert len(answers) == 1
    answer = answers[0]
    assert isinstance(answer, PermissionResponse)
    assert answer.request_id == "perm-gpu-1" and answer.subtype == "success"

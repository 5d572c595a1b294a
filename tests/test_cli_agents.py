"""``teamdeck agent`` / ``ps`` / ``attach`` from the command line: clear one-line errors, the
process table, and a teammate process run by hand that answers a shutdown through the files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main as cli
from app.core import Home, InboxMessage, TeamMember
from app.core import protocol as proto
from app.core.paths import LEAD_NAME
from app.runtime import agent_main
from app.runtime.runners.process_record import AgentRecord, write_record
from tests.timing import scaled

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    monkeypatch.setenv("TEAMDECK_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    home = Home(tmp_path / "home")
    home.teams.create("crew", lead_session_id="s")
    home.teams.add_member(
        "crew", TeamMember(agent_id="helper@crew", name="helper", prompt="Look around.")
    )
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str, fragment: str) -> None:
    assert err.startswith("teamdeck: error: ") and err.count("\n") == 1, err
    assert fragment in err, err


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


BAD_AGENTS = [
    (("--team", "nope", "--name", "helper"), "team 'nope' does not exist"),
    (("--team", "crew", "--name", "ghost"), "'ghost' is not a member of team"),
    (("--team", "crew", "--name", "team-lead"), "team-lead is the lead"),
]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        *((("agent", *argv), fragment) for argv, fragment in BAD_AGENTS),
        (("attach",), "no team is running here"),
        (("attach", "nope"), "team 'nope' does not exist"),
    ],
)
def test_bad_requests_are_one_line(
    home: Home, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], fragment: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 1
    one_line_error(err, fragment)


@pytest.mark.parametrize(("argv", "fragment"), BAD_AGENTS)
def test_the_runtime_entry_point_fails_as_teamdeck_agent_does(
    home: Home, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], fragment: str
) -> None:
    """``python -m app.runtime.agent_main`` (what a teammate process runs) is ``teamdeck agent``
    without the ``teamdeck`` around it: the same options, the same one-line errors."""
    code = agent_main.main(["--home", str(home.root), *argv])
    assert code == 1
    one_line_error(capsys.readouterr().err, fragment)


def test_the_runtime_entry_point_checks_its_usage(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    assert agent_main.main(["--team", "crew"]) == 2  # --name is required
    assert "the following arguments are required: --name" in capsys.readouterr().err
    assert agent_main.main(["--home", str(home.root), "--claude", "--team", "crew",
                            "--name", "helper"]) == 2  # fmt: skip
    assert "not allowed with argument" in capsys.readouterr().err


def test_ps_lists_agents_alive_and_dead(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    layout = home.layout
    write_record(
        layout.agent_record_path("crew", "helper"),
        AgentRecord("helper", "crew", os.getpid(), "process"),
    )
    write_record(
        layout.agent_record_path("crew", "gone"), AgentRecord("gone", "crew", dead_pid(), "tmux")
    )
    (layout.agents_dir("crew") / "helper.jsonl").write_text(
        '{"t": 1, "event": "status", "status": "idle", "detail": ""}\n'
    )
    code, out, _ = run(capsys, "ps", "--json")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(out)}
    assert (rows["helper"]["alive"], rows["helper"]["status"], rows["helper"]["pid"]) == (
        True, "idle", os.getpid(),
    )  # fmt: skip
    assert (rows["gone"]["alive"], rows["gone"]["backend"]) == (False, "tmux")

    code, out, _ = run(capsys, "ps")
    lines = out.splitlines()
    assert lines[0].split() == [
        "TEAM",
        "AGENT",
        "MODE",
        "PID",
        "STATE",
        "STATUS",
        "HEARTBEAT",
        "UP",
    ]
    assert any(line.split()[:5] == ["crew", "gone", "tmux", lines[1].split()[3], "dead"]
               or ("gone" in line and "dead" in line) for line in lines[1:])  # fmt: skip
    assert any("helper" in line and "alive" in line and "idle" in line for line in lines[1:])


def test_attach_refuses_a_team_a_running_dashboard_leads(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    record = AgentRecord(LEAD_NAME, "crew", os.getpid(), "lead")
    write_record(home.layout.agent_record_path("crew", LEAD_NAME), record)
    code, _, err = run(capsys, "attach", "crew")
    assert code == 1
    one_line_error(err, f"already led by a running dashboard (pid {os.getpid()})")


def test_attach_without_a_name_needs_exactly_one_running_team(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    home.teams.create("other", lead_session_id="s")
    for team in ("crew", "other"):
        path = home.layout.agent_record_path(team, "helper")
        write_record(path, AgentRecord("helper", team, os.getpid(), "process"))
    code, _, err = run(capsys, "attach")
    assert code == 1
    one_line_error(err, "2 teams are running (crew, other): name one")


def test_ps_on_a_missing_home_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    code, _, err = run(capsys, "--home", str(missing), "ps")
    assert code == 1 and "does not exist" in err
    assert not missing.exists()


def test_a_teammate_process_run_by_hand_answers_its_shutdown_through_the_files(
    home: Home, tmp_path: Path
) -> None:
    env = {**os.environ, "TEAMDECK_OFFLINE_PACE": "0", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli.main", "--home", str(home.root), "agent",
         "--team", "crew", "--name", "helper", "--offline"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    box = home.mailbox("crew")
    deadline = time.monotonic() + scaled(120)
    try:
        while not any(
            proto.parse_frame(m.text) is not None and m.sender == "helper"
            for m in box.read(LEAD_NAME)
        ):  # its first turn ends with an idle notification to the lead
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no idle notification from the teammate"
            time.sleep(0.05)
        request = proto.shutdown_request("shutdown-1@helper", LEAD_NAME, "done for today")
        box.append("helper", InboxMessage(sender=LEAD_NAME, text=request.to_text()))
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    answers = [proto.parse_frame(m.text) for m in box.read(LEAD_NAME)]
    assert any(isinstance(a, proto.ShutdownApproved) for a in answers)
    assert [m.name for m in home.teams.require("crew").members if m.name == "helper"] == []
    log = home.layout.agent_log_path("crew", "helper").read_text().splitlines()
    assert json.loads(log[0])["event"] == "start"
    assert json.loads(log[-1])["event"] == "exit" and json.loads(log[-1])["status"] == "completed"
    assert not home.layout.agent_record_path("crew", "helper").exists()

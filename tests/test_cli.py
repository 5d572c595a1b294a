"""The ``teamdeck`` CLI: every command in-process through ``main([...])``, plus real subprocesses.

Each test gets its own ``$TEAMDECK_HOME`` and ``$CLAUDE_CONFIG_DIR`` under ``tmp_path``, so no
test touches the real ``~/.teamdeck`` or ``~/.claude``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli
from app.cli import teams as cli_teams
from app.core import Home, InboxMessage, TeamMember
from app.core import protocol as proto
from app.core.locks import MkdirLock
from tests.seed_examples import SEED_CONFIG
from tests.seed_examples import SEED_INBOX as SEED_INBOX_TEXT

ROOT = Path(__file__).resolve().parents[1]

SEED_TEAM_CONFIG: dict[str, Any] = json.loads(SEED_CONFIG)
SEED_INBOX: list[dict[str, Any]] = json.loads(SEED_INBOX_TEXT)


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def env_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``$TEAMDECK_HOME`` and ``$CLAUDE_CONFIG_DIR`` inside ``tmp_path`` (not created)."""
    home = tmp_path / "teamdeck-home"
    claude = tmp_path / "claude-home"
    monkeypatch.setenv("TEAMDECK_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    return home, claude


@pytest.fixture
def home_dir(env_homes: tuple[Path, Path]) -> Path:
    return env_homes[0]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], home_dir: Path) -> Any:
    def invoke(*argv: str) -> Result:
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def assert_one_line_error(result: Result, *fragments: str) -> None:
    assert result.code == 1, result
    assert result.err.startswith("teamdeck: error: "), result.err
    assert result.err.count("\n") == 1, result.err
    assert "Traceback" not in result.err
    for fragment in fragments:
        assert fragment in result.err, (fragment, result.err)


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), "utf-8")


def add_member(home: Path | Home, team: str, name: str, **fields: Any) -> None:
    h = home if isinstance(home, Home) else Home(home)
    h.teams.add_member(team, TeamMember(agent_id=f"{name}@{team}", name=name, **fields))


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(extra)
    return env


def run_process(*argv: str, env: dict[str, str], stdin: str | None = None) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli.main", *argv],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


# ----------------------------------------------------------------------------- teams


def test_team_create_list_show_delete(run: Any, home_dir: Path) -> None:
    created = run("team", "create", "My Team", "--description", "Working on X")
    assert created.code == 0
    assert created.out.strip() == "created team my-team"
    assert (home_dir / "teams" / "my-team" / "config.json").is_file()
    assert (home_dir / "tasks" / "my-team").is_dir()

    again = run("team", "create", "my team")  # from the CLI a taken name is an error
    assert_one_line_error(again, "team 'my-team' already exists")
    assert not (home_dir / "teams" / "my-team-2").exists()
    assert run("team", "create", "My Team 2").code == 0

    listed = run("team", "list")
    assert listed.code == 0
    lines = listed.out.splitlines()
    assert lines[0].split() == ["NAME", "MEMBERS", "DESCRIPTION"]
    assert lines[1].split() == ["my-team", "1", "Working", "on", "X"]
    assert lines[2].split() == ["my-team-2", "1"]

    shown = run("team", "show", "My Team")  # the typed name finds the sanitised one
    assert shown.code == 0
    assert "team my-team" in shown.out
    assert "description: Working on X" in shown.out
    header = next(line for line in shown.out.splitlines() if "NAME" in line)
    assert header.split() == ["NAME", "TYPE", "COLOR", "MODEL", "MODE"]
    assert "team-lead" in shown.out

    deleted = run("team", "delete", "my-team-2")
    assert deleted.code == 0 and "deleted team my-team-2" in deleted.out
    assert not (home_dir / "teams" / "my-team-2").exists()
    assert not (home_dir / "tasks" / "my-team-2").exists()
    assert [t["name"] for t in run("team", "list", "--json").json()] == ["my-team"]


def test_team_json_output(run: Any) -> None:
    created = run("team", "create", "alpha", "--description", "d", "--json").json()
    assert created["name"] == "alpha" and created["description"] == "d"
    assert created["leadAgentId"] == "team-lead@alpha"
    listed = run("team", "list", "--json").json()
    assert listed == [created]
    assert run("team", "show", "alpha", "--json").json() == created


def test_team_list_empty(run: Any, home_dir: Path) -> None:
    home_dir.mkdir()
    assert run("team", "list").out.strip() == "no teams"
    assert run("team", "list", "--json").json() == []
    assert os.listdir(home_dir) == []  # looking created nothing


@pytest.mark.parametrize(
    "argv",
    [
        ["team", "list"],
        ["team", "show", "alpha"],
        ["task", "list", "--team", "alpha"],
        ["inbox", "--team", "alpha", "--agent", "x"],
    ],
)
def test_read_commands_on_a_missing_home_are_an_error(
    run: Any, tmp_path: Path, argv: list[str]
) -> None:
    bad = tmp_path / "bad" / "path"
    assert_one_line_error(run("--home", str(bad), *argv), f"home {bad} does not exist")
    assert not (tmp_path / "bad").exists()
    claude = run("--claude", *argv)  # $CLAUDE_CONFIG_DIR is not created either
    assert_one_line_error(claude, "claude-home does not exist")
    assert not (tmp_path / "claude-home").exists()


def test_team_delete_refuses_with_teammates_unless_forced(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    refused = run("team", "delete", "alpha")
    assert_one_line_error(refused, "researcher", "--force")
    assert (home_dir / "teams" / "alpha" / "config.json").is_file()
    forced = run("team", "delete", "alpha", "--force")
    assert forced.code == 0
    assert not (home_dir / "teams" / "alpha").exists()


def test_team_show_members_table(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "engineer", agent_type="engineer", model="opus", mode="plan")
    out = run("team", "show", "alpha").out
    row = next(line for line in out.splitlines() if line.strip().startswith("engineer"))
    assert row.split() == ["engineer", "engineer", "blue", "opus", "plan"]
    assert "members (2)" in out


# ----------------------------------------------------------------------------- tasks


def test_task_create_list_show(run: Any) -> None:
    run("team", "create", "alpha")
    first = run("task", "create", "--team", "alpha", "Research auth", "--description", "OAuth")
    assert first.code == 0 and first.out.strip() == "created task #1: Research auth"
    second = run("task", "create", "--team", "alpha", "Write code", "--json").json()
    assert second == {
        "id": "2",
        "subject": "Write code",
        "description": "",
        "status": "pending",
        "blocks": [],
        "blockedBy": [],
    }

    listed = run("task", "list", "--team", "alpha")
    lines = listed.out.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "OWNER", "SUBJECT", "BLOCKED", "BY"]
    assert lines[1].split() == ["#1", "pending", "-", "Research", "auth", "-"]
    as_json = run("task", "list", "--team", "alpha", "--json").json()
    assert [t["id"] for t in as_json] == ["1", "2"]
    assert as_json[0]["description"] == "OAuth"

    shown = run("task", "show", "--team", "alpha", "1")
    assert shown.code == 0
    assert "#1 Research auth" in shown.out and "status:     pending" in shown.out
    assert "OAuth" in shown.out
    assert run("task", "show", "--team", "alpha", "1", "--json").json()["subject"] == (
        "Research auth"
    )


def test_task_list_empty_and_all(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    assert run("task", "list", "--team", "alpha").out.strip() == "no tasks"
    Home(home_dir).tasks("alpha").create("hidden", metadata={"_internal": True})
    assert run("task", "list", "--team", "alpha", "--json").json() == []
    everything = run("task", "list", "--team", "alpha", "--all", "--json").json()
    assert [t["subject"] for t in everything] == ["hidden"]
    assert everything[0]["metadata"] == {"_internal": True}


def test_task_update_fields_owner_and_dependencies(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    for subject in ("one", "two", "three"):
        run("task", "create", "--team", "alpha", subject)

    updated = run(
        "task", "update", "--team", "alpha", "3",
        "--owner", "researcher",
        "--blocked-by", "1", "2", "--subject", "THREE", "--description", "desc", "--json",
    )  # fmt: skip
    assert updated.code == 0, updated.err
    task = updated.json()
    assert task["status"] == "pending" and task["owner"] == "researcher"
    assert task["subject"] == "THREE" and task["description"] == "desc"
    assert task["blockedBy"] == ["1", "2"]
    tasks = Home(home_dir).tasks("alpha")
    assert tasks.require("1").blocks == ["3"] and tasks.require("2").blocks == ["3"]

    table = run("task", "list", "--team", "alpha").out
    row = next(line for line in table.splitlines() if line.startswith("#3"))
    assert row.split() == ["#3", "pending", "researcher", "THREE", "#1,", "#2"]
    started = run("task", "update", "--team", "alpha", "3", "--status", "in_progress")
    assert started.code == 1 and "blocked by unfinished task(s) #1, #2" in started.err

    run("task", "update", "--team", "alpha", "1", "--status", "completed")
    row = next(
        line for line in run("task", "list", "--team", "alpha").out.splitlines()
        if line.startswith("#3")
    )  # fmt: skip
    assert row.split()[-1] == "#2"  # resolved blockers are not shown as blocking

    plain = run("task", "update", "--team", "alpha", "3", "--owner", "")
    assert plain.code == 0 and "updated task #3" in plain.out
    assert "owner" not in tasks.require("3").to_json_dict()

    cycle = run("task", "update", "--team", "alpha", "1", "--blocked-by", "3")
    assert_one_line_error(cycle, "cycle")


def test_task_update_gives_a_task_only_to_a_member(run: Any, home_dir: Path) -> None:
    """A task owned by someone not on the team is never worked and never claimed."""
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    run("task", "create", "--team", "alpha", "one")
    ghost = run("task", "update", "--team", "alpha", "1", "--owner", "ghost")
    assert_one_line_error(
        ghost, "'ghost' is not a member of team 'alpha' (members: team-lead, researcher)"
    )
    assert Home(home_dir).tasks("alpha").require("1").owner is None
    member = run("task", "update", "--team", "alpha", "1", "--owner", "researcher@alpha")
    assert member.code == 0, member.err
    assert Home(home_dir).tasks("alpha").require("1").owner == "researcher"


def test_task_update_needs_a_change(run: Any) -> None:
    run("team", "create", "alpha")
    run("task", "create", "--team", "alpha", "one")
    result = run("task", "update", "--team", "alpha", "1")
    assert result.code == 2
    assert "nothing to update" in result.err


def test_task_claim(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    add_member(home_dir, "alpha", "tester")
    stranger = run("task", "create", "--team", "alpha", "one")
    stranger = run("task", "claim", "--team", "alpha", "1", "--owner", "mallory")
    assert_one_line_error(stranger, "'mallory' is not a member of team 'alpha'")
    assert Home(home_dir).tasks("alpha").require("1").owner is None
    for subject in ("two", "three"):
        run("task", "create", "--team", "alpha", subject)
    run("task", "update", "--team", "alpha", "3", "--blocked-by", "2")

    won = run("task", "claim", "--team", "alpha", "1", "--owner", "researcher")
    assert won.code == 0 and won.out.strip() == "researcher claimed task #1"

    taken = run("task", "claim", "--team", "alpha", "1", "--owner", "tester")
    assert_one_line_error(taken, "already claimed by researcher")

    busy = run("task", "claim", "--team", "alpha", "2", "--owner", "researcher", "--check-busy")
    assert_one_line_error(busy, "researcher is busy", "#1")

    blocked = run("task", "claim", "--team", "alpha", "3", "--owner", "tester", "--json")
    assert blocked.code == 1
    assert blocked.json() == {
        "success": False,
        "reason": "blocked",
        "task": blocked.json()["task"],
        "busyWith": [],
        "blockedBy": ["2"],
    }
    assert "blocked by #2" in blocked.err

    missing = run("task", "claim", "--team", "alpha", "9", "--owner", "tester")
    assert_one_line_error(missing, "#9", "does not exist")

    ok = run("task", "claim", "--team", "alpha", "2", "--owner", "tester", "--json")
    assert ok.code == 0
    assert ok.json()["success"] is True and ok.json()["task"]["owner"] == "tester"

    run("task", "update", "--team", "alpha", "2", "--status", "completed")
    resolved = run("task", "claim", "--team", "alpha", "2", "--owner", "tester")
    assert_one_line_error(resolved, "already completed")


def test_task_delete(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    run("task", "create", "--team", "alpha", "one")
    run("task", "create", "--team", "alpha", "two")
    run("task", "update", "--team", "alpha", "2", "--blocked-by", "1")
    deleted = run("task", "delete", "--team", "alpha", "1")
    assert deleted.code == 0 and deleted.out.strip() == "deleted task #1: one"
    assert not (home_dir / "tasks" / "alpha" / "1.json").exists()
    assert run("task", "show", "--team", "alpha", "2", "--json").json()["blockedBy"] == []
    assert_one_line_error(run("task", "delete", "--team", "alpha", "1"), "#1", "does not exist")
    # ids are never reused
    assert run("task", "create", "--team", "alpha", "three", "--json").json()["id"] == "3"


# ----------------------------------------------------------------------------- send / inbox


def test_send_and_inbox(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher", color="green")

    sent = run("send", "--team", "alpha", "--to", "Researcher", "--summary", "hi", "hello there")
    assert sent.code == 0 and sent.out.strip() == "sent to researcher (team alpha)"
    from_member = run(
        "send", "--team", "alpha", "--to", "team-lead", "--from", "researcher", "done"
    )
    assert from_member.code == 0

    inbox = run("inbox", "--team", "alpha", "--agent", "researcher")
    assert inbox.code == 0
    assert inbox.out.strip() == "[0] (unread) user -> hi: hello there"

    lead = run("inbox", "--team", "alpha", "--agent", "team-lead", "--json").json()
    assert len(lead) == 1
    assert lead[0]["from"] == "researcher" and lead[0]["color"] == "green"
    assert lead[0]["index"] == 0 and lead[0]["frameType"] is None
    assert lead[0]["read"] is False and "summary" not in lead[0]


def test_send_reads_stdin(run: Any, home_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    run("team", "create", "alpha")
    monkeypatch.setattr(sys, "stdin", io.StringIO("line one\nline two\n"))
    assert run("send", "--team", "alpha", "--to", "team-lead", "-").code == 0
    out = run("inbox", "--team", "alpha", "--agent", "team-lead").out
    assert out.splitlines() == ["[0] (unread) user -> line one", "    line two"]


def test_send_empty_text_is_an_error(run: Any) -> None:
    run("team", "create", "alpha")
    assert_one_line_error(run("send", "--team", "alpha", "--to", "team-lead", "  "), "empty")


def test_inbox_unread_and_mark_read(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    for text in ("one", "two", "three"):
        run("send", "--team", "alpha", "--to", "team-lead", text)
    Home(home_dir).mailbox("alpha").mark_read("team-lead", 0)

    unread = run("inbox", "--team", "alpha", "--agent", "team-lead", "--unread", "--json").json()
    assert [m["index"] for m in unread] == [1, 2]

    marked = run("inbox", "--team", "alpha", "--agent", "team-lead", "--unread", "--mark-read")
    assert marked.code == 0
    assert "[1] (unread) user -> two" in marked.out and "marked 2 message(s) read" in marked.out
    assert run("inbox", "--team", "alpha", "--agent", "team-lead", "--unread").out.strip() == (
        "no unread messages"
    )
    everything = run("inbox", "--team", "alpha", "--agent", "team-lead").out.splitlines()
    assert everything == ["[0] user -> one", "[1] user -> two", "[2] user -> three"]


def test_inbox_of_member_without_messages(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    assert run("inbox", "--team", "alpha", "--agent", "researcher").out.strip() == "no messages"
    assert run("inbox", "--team", "alpha", "--agent", "researcher", "--json").json() == []
    assert not (home_dir / "teams" / "alpha" / "inboxes" / "researcher.json").exists()


def test_inbox_unknown_agent(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    result = run("inbox", "--team", "alpha", "--agent", "ghost")
    assert_one_line_error(result, "ghost", "not a member")


def test_inbox_renders_protocol_frames(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    box = Home(home_dir).mailbox("alpha")
    frames = [
        proto.shutdown_request("shutdown-1@researcher", "team-lead", "done"),
        proto.plan_approval_request("plan_approval-2@engineer", "engineer", "1. do it\n2. ok"),
        proto.idle_notification("researcher", summary="finished the survey"),
        proto.task_completed("tester", "4", "Run tests"),
        proto.shutdown_approved("shutdown-1@researcher", "researcher"),
        proto.shutdown_rejected("shutdown-5@tester", "tester", "still busy"),
        proto.plan_approval_response("plan_approval-2@engineer", False, "add tests"),
        proto.permission_request(
            "perm-6@engineer", "engineer@alpha", "Bash", "tu1", "run make", {"cmd": "make"}
        ),
        proto.permission_response("perm-6@engineer", False, error="nope"),
    ]
    for frame in frames:
        box.append(
            "team-lead", InboxMessage.model_validate({"from": "someone", "text": frame.to_text()})
        )

    lines = run("inbox", "--team", "alpha", "--agent", "team-lead").out.splitlines()
    assert lines == [
        "[0] (unread) someone -> team-lead: shutdown requested (done) (id shutdown-1@researcher)",
        "[1] (unread) someone -> team-lead: plan approval requested (id plan_approval-2@engineer)",
        "[2] (unread) researcher is idle: finished the survey",
        "[3] (unread) tester completed #4 Run tests",
        "[4] (unread) researcher approved shutdown (id shutdown-1@researcher)",
        "[5] (unread) tester rejected shutdown: still busy (id shutdown-5@tester)",
        "[6] (unread) someone -> team-lead: plan rejected: add tests (id plan_approval-2@engineer)",
        "[7] (unread) someone -> team-lead: permission requested: Bash(make) — run make "
        "(id perm-6@engineer)",
        "[8] (unread) someone -> team-lead: permission denied: nope (id perm-6@engineer)",
    ]
    types_ = [
        m["frameType"]
        for m in run("inbox", "--team", "alpha", "--agent", "team-lead", "--json").json()
    ]
    assert types_ == [f.to_dict()["type"] for f in frames]


def test_inbox_escapes_control_characters(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    run("send", "--team", "alpha", "--to", "team-lead", "evil \x1b[2J text")
    out = run("inbox", "--team", "alpha", "--agent", "team-lead").out
    assert "\x1b" not in out and "\\x1b[2J" in out


# ----------------------------------------------------------------------------- seeds


def test_seed_team_config_and_inbox_all_fields(run: Any, home_dir: Path) -> None:
    team_dir = home_dir / "teams" / "my-team"
    write_json(team_dir / "config.json", SEED_TEAM_CONFIG)
    write_json(team_dir / "inboxes" / "team-lead.json", SEED_INBOX)

    assert run("team", "show", "my-team", "--json").json() == SEED_TEAM_CONFIG
    assert run("team", "list", "--json").json() == [SEED_TEAM_CONFIG]

    inbox = run("inbox", "--team", "my-team", "--agent", "team-lead", "--json").json()
    assert inbox == [
        {"index": 0, **SEED_INBOX[0], "frameType": None},
        {"index": 1, **SEED_INBOX[1], "frameType": "shutdown_request"},
    ]

    plain = run("inbox", "--team", "my-team", "--agent", "team-lead").out.splitlines()
    assert plain == [
        "[0] (unread) team-lead -> Implement auth module: Please implement the auth module",
        "[1] researcher -> team-lead: shutdown requested (id shutdown-1234@researcher)",
    ]
    shown = run("team", "show", "my-team").out
    row = next(line for line in shown.splitlines() if line.strip().startswith("researcher"))
    assert row.split() == ["researcher", "researcher", "cyan", "claude-sonnet-4-5", "-"]
    # reading never rewrote the files
    assert json.loads((team_dir / "config.json").read_text()) == SEED_TEAM_CONFIG
    assert json.loads((team_dir / "inboxes" / "team-lead.json").read_text()) == SEED_INBOX


def test_seed_send_keeps_existing_fields(run: Any, home_dir: Path) -> None:
    team_dir = home_dir / "teams" / "my-team"
    write_json(team_dir / "config.json", SEED_TEAM_CONFIG)
    write_json(team_dir / "inboxes" / "team-lead.json", SEED_INBOX)
    sent = run("send", "--team", "my-team", "--to", "team-lead", "--from", "researcher", "hi")
    assert sent.code == 0
    stored = json.loads((team_dir / "inboxes" / "team-lead.json").read_text())
    assert stored[:2] == SEED_INBOX
    assert stored[2]["from"] == "researcher" and stored[2]["color"] == "cyan"


# ----------------------------------------------------------------------------- errors


def test_error_unknown_team(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    assert_one_line_error(run("team", "show", "nope"), "'nope' does not exist")
    assert_one_line_error(run("team", "delete", "nope"), "'nope' does not exist")
    assert_one_line_error(run("task", "create", "--team", "ghost", "x"), "'ghost' does not exist")
    assert_one_line_error(run("task", "list", "--team", "ghost"), "'ghost' does not exist")
    assert_one_line_error(run("send", "--team", "ghost", "--to", "team-lead", "x"), "ghost")
    assert_one_line_error(run("inbox", "--team", "ghost", "--agent", "team-lead"), "ghost")
    assert not (home_dir / "tasks" / "ghost").exists()
    assert not (home_dir / "teams" / "ghost").exists()


def test_error_unknown_task(run: Any) -> None:
    run("team", "create", "alpha")
    assert_one_line_error(run("task", "show", "--team", "alpha", "7"), "#7 does not exist")
    assert_one_line_error(
        run("task", "update", "--team", "alpha", "7", "--status", "completed"), "#7"
    )
    assert_one_line_error(run("task", "show", "--team", "alpha", "x1"), "not a number")


def test_error_unknown_recipient_creates_no_inbox(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    inboxes = home_dir / "teams" / "alpha" / "inboxes"
    before = sorted(os.listdir(inboxes))
    result = run("send", "--team", "alpha", "--to", "reseacher", "hello")
    assert_one_line_error(result, "'reseacher' is not a member of team 'alpha'")
    assert sorted(os.listdir(inboxes)) == before


@pytest.mark.parametrize("name", ["!!!", "../escape", "a/b", "."])
def test_error_bad_team_name(run: Any, home_dir: Path, name: str) -> None:
    assert_one_line_error(run("team", "create", name), "team name")
    assert not home_dir.exists()


def test_error_bad_status(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    run("task", "create", "--team", "alpha", "one")
    result = run("task", "update", "--team", "alpha", "1", "--status", "done")
    assert_one_line_error(result, "unknown task status 'done'")
    assert Home(home_dir).tasks("alpha").require("1").status == "pending"


def test_error_corrupt_inbox_names_file_and_keeps_it(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    path = home_dir / "teams" / "alpha" / "inboxes" / "researcher.json"
    broken = b'[{"from": "team-lead", "text": "hal'
    path.write_bytes(broken)

    read = run("inbox", "--team", "alpha", "--agent", "researcher")
    assert_one_line_error(read, str(path), "corrupt")
    sent = run("send", "--team", "alpha", "--to", "researcher", "more")
    assert_one_line_error(sent, str(path))
    assert path.read_bytes() == broken
    assert any(p.name.startswith("researcher.json.corrupt-") for p in path.parent.iterdir())

    status = run()
    assert status.code == 0
    errors = [line for line in status.out.splitlines() if "error:" in line]
    assert len(errors) == 1 and str(path) in errors[0]
    assert path.read_bytes() == broken


def test_error_corrupt_config_is_a_warning_in_lists(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    bad = home_dir / "teams" / "bad" / "config.json"
    bad.parent.mkdir()
    bad.write_text("{", "utf-8")
    listed = run("team", "list", "--json")
    assert listed.code == 0
    assert [t["name"] for t in listed.json()] == ["alpha"]
    assert "warning" in listed.err and str(bad) in listed.err
    assert_one_line_error(run("team", "show", "bad"), str(bad))
    status = run()
    assert any(line.strip().startswith("bad: error:") for line in status.out.splitlines())


def test_error_os_error_and_interrupt(
    run: Any, home_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home_dir.mkdir(parents=True)  # `team list` only looks: on no home it stops before the handler

    def denied(home: Home, args: Any) -> int:
        raise PermissionError(13, "Permission denied", "/some/file")

    monkeypatch.setattr(cli_teams, "cmd_team_list", denied)
    assert_one_line_error(run("team", "list"), "Permission denied: /some/file")

    def interrupted(home: Home, args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_teams, "cmd_team_list", interrupted)
    result = run("team", "list")
    assert result.code == 130 and "Traceback" not in result.err


def test_error_home_is_a_file(run: Any, tmp_path: Path) -> None:
    target = tmp_path / "plain-file"
    target.write_text("x")
    assert_one_line_error(run("--home", str(target), "team", "list"), str(target))


# ----------------------------------------------------------------------------- usage (exit 2)


@pytest.mark.parametrize(
    "argv",
    [
        ["nonsense"],
        ["team"],
        ["task", "list"],  # --team is required
        ["task", "create", "--team", "alpha"],  # SUBJECT missing
        ["send", "--team", "alpha", "text"],  # --to missing
        ["inbox", "--team", "alpha"],
        ["task", "claim", "--team", "alpha", "1"],  # --owner missing
        ["team", "list", "--home", "/x", "--claude"],
        ["--home", "/x", "team", "list", "--claude"],
        ["--claude", "team", "list", "--home", "/x"],
        ["--home", "", "team", "list"],
        ["run", "goal", "--json"],
        ["team", "list", "--bogus"],
    ],
)
def test_bad_usage_exits_2(run: Any, argv: list[str]) -> None:
    result = run(*argv)
    assert result.code == 2, result
    assert_usage_line(result)


def assert_usage_line(result: Result, prog: str | None = None) -> None:
    """A usage error: one line naming the command, ending with where its help is."""
    assert result.code == 2 and "Traceback" not in result.err, result
    assert result.err.count("\n") == 1, result.err
    named = result.err.split(": error: ", 1)[0]
    assert "[" not in named and named.startswith("teamdeck"), result.err
    assert result.err.rstrip().endswith(f"({named} --help)"), result.err
    if prog is not None:
        assert named == prog, result.err


@pytest.mark.parametrize(
    ("argv", "prog", "fragment"),
    [
        (["task", "list"], "teamdeck task list", "required: --team"),
        (
            ["task", "list", "--tema", "x"],
            "teamdeck task list",
            "unknown option --tema (did you mean --team?)",
        ),
        (["--tema", "x"], "teamdeck", "unknown option --tema (did you mean --team?)"),
        (["tui", "--tema", "x"], "teamdeck tui", "unknown option --tema (did you mean --team?)"),
        (
            ["--home", "/x", "history", "show", "--jsno", "1"],
            "teamdeck history show",
            "unknown option --jsno (did you mean --json?)",
        ),
        (["team", "list", "--zzz"], "teamdeck team list", "unknown option --zzz"),
        (["task", "bogus"], "teamdeck task", "invalid choice: 'bogus'"),
        (["run", "goal", "--json"], "teamdeck run", "--json needs --headless"),
    ],
)
def test_usage_errors_are_one_line_named_by_their_command(
    run: Any, argv: list[str], prog: str, fragment: str
) -> None:
    result = run(*argv)
    assert_usage_line(result, prog)
    assert fragment in result.err, result.err


def test_option_values_that_look_like_options_are_not_unknown_options(run: Any) -> None:
    """A known option's value is never taken for an option, nor is anything after ``--``."""
    assert run("team", "create", "alpha", "--description=--not-an-option").code == 0
    spaced = run("team", "create", "beta", "--description", "--not-an-option")
    assert "unknown option" not in spaced.err and "expected one argument" in spaced.err
    assert run("send", "--team", "alpha", "--to", "team-lead", "--", "--hello").code == 0
    # Issue 30: an abbreviation is not expanded (--headles started a run): --te is no --team.
    assert run("task", "list", "--team", "alpha").code == 0
    assert run("task", "list", "--te", "alpha").code == 2


def test_help_and_version(run: Any) -> None:
    helped = run("--help")
    assert helped.code == 0 and "teamdeck" in helped.out and "inbox" in helped.out
    assert run("task", "update", "--help").out.count("--blocked-by") >= 1
    version = run("--version")
    assert version.code == 0 and version.out.startswith("teamdeck ")


# ----------------------------------------------------------------------------- homes


def test_home_before_and_after_subcommand(run: Any, tmp_path: Path, home_dir: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert run("--home", str(first), "team", "create", "alpha").code == 0
    assert run("team", "create", "beta", "--home", str(second)).code == 0
    assert run("team", "--home", str(second), "create", "gamma").code == 0
    assert [t["name"] for t in run("team", "list", "--json", "--home", str(first)).json()] == [
        "alpha"
    ]
    assert [t["name"] for t in run("--home", str(second), "team", "list", "--json").json()] == [
        "beta",
        "gamma",
    ]
    assert not home_dir.exists()  # $TEAMDECK_HOME untouched
    # --home after the subcommand wins over $TEAMDECK_HOME but a value before it is kept
    assert run("--home", str(first), "task", "list", "--team", "alpha").code == 0


def test_default_home_from_environment(run: Any, home_dir: Path) -> None:
    assert run("team", "create", "alpha").code == 0
    assert (home_dir / "teams" / "alpha" / "config.json").is_file()


def test_claude_home_uses_mkdir_locks(
    run: Any, env_homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home_dir, claude_dir = env_homes
    held: list[tuple[str, bool]] = []
    original = MkdirLock._acquire

    def spy(self: MkdirLock) -> None:
        original(self)
        if self._context.lock_file_fd is not None:
            held.append((self.lock_file, os.path.isdir(self.lock_file)))

    monkeypatch.setattr(MkdirLock, "_acquire", spy)

    assert run("--claude", "team", "create", "alpha").code == 0
    add_member(Home(claude_dir, lock_style="mkdir"), "alpha", "researcher")
    assert run("send", "--team", "alpha", "--to", "researcher", "hi", "--claude").code == 0
    assert run("task", "create", "--claude", "--team", "alpha", "one").code == 0
    assert (
        run("task", "claim", "--team", "alpha", "1", "--owner", "researcher", "--claude").code == 0
    )

    inbox = claude_dir / "teams" / "alpha" / "inboxes" / "researcher.json"
    locked = {path for path, _ in held}
    assert str(inbox) + ".lock" in locked
    assert str(claude_dir / "tasks" / "alpha" / ".lock.lock") in locked
    assert str(claude_dir / "tasks" / "alpha" / "1.json.lock") in locked
    assert all(is_dir for _, is_dir in held)
    # no regular file where Claude Code expects a lock directory (``tasks/{team}/.lock`` is
    # the file proper-lockfile locks, as Claude Code creates it)
    for path in claude_dir.rglob("*.lock"):
        assert not path.is_file() or path == claude_dir / "tasks" / "alpha" / ".lock", path
    assert not home_dir.exists()
    inbox_json = run("inbox", "--claude", "--team", "alpha", "--agent", "researcher", "--json")
    assert [m["text"] for m in inbox_json.json()] == ["hi"]


def test_claude_home_reads_seed_files(run: Any, env_homes: tuple[Path, Path]) -> None:
    _, claude_dir = env_homes
    write_json(claude_dir / "teams" / "my-team" / "config.json", SEED_TEAM_CONFIG)
    write_json(claude_dir / "teams" / "my-team" / "inboxes" / "team-lead.json", SEED_INBOX)
    assert run("team", "show", "my-team", "--claude", "--json").json() == SEED_TEAM_CONFIG
    unread = run("--claude", "inbox", "--team", "my-team", "--agent", "team-lead", "--unread")
    assert unread.out.strip() == (
        "[0] (unread) team-lead -> Implement auth module: Please implement the auth module"
    )


# ----------------------------------------------------------------------------- status / hooks


def test_no_command_prints_status_and_help(run: Any, home_dir: Path) -> None:
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    run("task", "create", "--team", "alpha", "one")
    run("task", "create", "--team", "alpha", "two")
    run("task", "update", "--team", "alpha", "2", "--status", "completed")
    run("send", "--team", "alpha", "--to", "researcher", "hi")
    run("send", "--team", "alpha", "--to", "team-lead", "hi")
    run("inbox", "--team", "alpha", "--agent", "team-lead", "--mark-read")

    result = run()
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == f"home: {home_dir}"
    assert lines[1] == "teams: 1"
    assert lines[2] == ("  alpha: 2 member(s), 1 open task(s); unread: researcher 1, team-lead 0")
    assert "usage: teamdeck" in result.out


def test_no_command_with_missing_home_creates_nothing(run: Any, home_dir: Path) -> None:
    result = run()
    assert result.code == 0
    assert f"home: {home_dir}" in result.out and "not created yet" in result.out
    assert not home_dir.exists()


HISTORY_KEYS = ("history", "budget")


def test_hooks_are_wired(run: Any, home_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []

    def fake_dashboard(
        home: Home,
        *,
        demo: bool,
        goal: str | None,
        lead_approves: bool,
        viewer: bool,
        **options: Any,
    ) -> int:
        calls.append(("app", (home.root, demo, goal, lead_approves, viewer)))
        calls.append(("options", {k: v for k, v in options.items() if k in HISTORY_KEYS}))
        return 3

    async def fake_headless(home: Home, goal: str, json_output: bool, **options: Any) -> int:
        calls.append(("headless", (home.root, goal, json_output)))
        calls.append(("options", {k: v for k, v in options.items() if k in HISTORY_KEYS}))
        return 0

    monkeypatch.setitem(
        sys.modules, "app.dashboard.launch", types.SimpleNamespace(run_dashboard=fake_dashboard)
    )
    monkeypatch.setitem(
        sys.modules, "app.cli.headless", types.SimpleNamespace(run_headless=fake_headless)
    )
    assert run("tui").code == 3
    assert run("demo").code == 3
    assert run("run", "build it").code == 3
    assert run("run", "build it", "--lead-approves").code == 3
    assert run("run", "build it", "--headless", "--json").code == 0
    assert run("run", "build it", "--headless", "--no-history", "--budget", "2.5").code == 0
    on = ("options", {"history": True})
    assert calls == [
        ("app", (home_dir, False, None, False, False)),
        on,
        ("app", (home_dir, True, None, False, False)),
        on,
        ("app", (home_dir, False, "build it", False, False)),
        on,
        ("app", (home_dir, False, "build it", True, False)),
        on,
        ("headless", (home_dir, "build it", True)),
        on,
        ("headless", (home_dir, "build it", False)),
        ("options", {"history": False, "budget": 2.5}),
    ]


# ----------------------------------------------------------------------------- subprocesses


def test_subprocess_round_trip(tmp_path: Path) -> None:
    env = subprocess_env(
        TEAMDECK_HOME=str(tmp_path / "home"), CLAUDE_CONFIG_DIR=str(tmp_path / "claude")
    )
    assert run_process("team", "create", "alpha", env=env).code == 0
    created = run_process("task", "create", "--team", "alpha", "Research", "--json", env=env)
    assert created.code == 0 and json.loads(created.out)["id"] == "1"
    sent = run_process(
        "send", "--team", "alpha", "--to", "team-lead", "--summary", "s", "-",
        env=env, stdin="from stdin",
    )  # fmt: skip
    assert sent.code == 0, sent.err
    inbox = run_process("inbox", "--team", "alpha", "--agent", "team-lead", "--json", env=env)
    assert inbox.code == 0
    assert [(m["text"], m["summary"]) for m in json.loads(inbox.out)] == [("from stdin", "s")]
    listed = run_process("--home", str(tmp_path / "home"), "team", "list", "--json", env=env)
    assert [t["name"] for t in json.loads(listed.out)] == ["alpha"]
    status = run_process(env=env)
    assert status.code == 0 and "alpha: 1 member(s), 1 open task(s)" in status.out


def test_subprocess_exit_codes(tmp_path: Path) -> None:
    env = subprocess_env(
        TEAMDECK_HOME=str(tmp_path / "home"), CLAUDE_CONFIG_DIR=str(tmp_path / "claude")
    )
    run_process("team", "create", "alpha", env=env)
    failed = run_process("send", "--team", "alpha", "--to", "nobody", "hi", env=env)
    assert failed.code == 1
    assert failed.err.startswith("teamdeck: error: ") and failed.err.count("\n") == 1
    assert not (tmp_path / "home" / "teams" / "alpha" / "inboxes" / "nobody.json").exists()
    usage = run_process("task", "update", "--team", "alpha", env=env)
    assert_usage_line(usage, "teamdeck task update")
    bad_status = run_process("task", "update", "--team", "alpha", "1", "--status", "x", env=env)
    assert bad_status.code == 1 and "Traceback" not in bad_status.err


def test_subprocess_claude_home_reclaims_stale_lock_dir(tmp_path: Path) -> None:
    claude_dir = tmp_path / "claude"
    env = subprocess_env(TEAMDECK_HOME=str(tmp_path / "home"), CLAUDE_CONFIG_DIR=str(claude_dir))
    write_json(claude_dir / "teams" / "my-team" / "config.json", SEED_TEAM_CONFIG)
    inbox = claude_dir / "teams" / "my-team" / "inboxes" / "researcher.json"
    write_json(inbox, [])
    # a lock directory left behind by a crashed Claude Code (stale: mtime > 10 s ago)
    lock_dir = Path(str(inbox) + ".lock")
    lock_dir.mkdir()
    old = time.time() - 60
    os.utime(lock_dir, (old, old))

    sent = run_process("send", "--team", "my-team", "--to", "researcher", "hi", "--claude", env=env)
    assert sent.code == 0, sent.err
    assert json.loads(inbox.read_text())[0]["text"] == "hi"
    assert not lock_dir.exists()
    assert not (tmp_path / "home").exists()


def test_looking_at_a_claude_home_from_the_cli_changes_nothing(
    run: Any, env_homes: tuple[Path, Path]
) -> None:
    _, claude_dir = env_homes
    write_json(claude_dir / "teams" / "my-team" / "config.json", SEED_TEAM_CONFIG)
    write_json(claude_dir / "teams" / "my-team" / "inboxes" / "team-lead.json", SEED_INBOX)
    before = {p: (p.stat().st_mode, p.stat().st_mtime_ns) for p in claude_dir.rglob("*")}
    assert run("--claude", "team", "list").code == 0
    assert run("--claude", "team", "show", "my-team").code == 0
    assert run("--claude", "task", "list", "--team", "my-team").code == 0
    assert run("--claude", "inbox", "--team", "my-team", "--agent", "team-lead").code == 0
    after = {p: (p.stat().st_mode, p.stat().st_mtime_ns) for p in claude_dir.rglob("*")}
    assert after == before


def test_inbox_clear(run: Any, home_dir: Path) -> None:
    """Seed 000 ``clearMailbox``: the inbox file becomes ``[]``."""
    run("team", "create", "alpha")
    add_member(home_dir, "alpha", "researcher")
    run("send", "--team", "alpha", "--to", "researcher", "hello")
    cleared = run("inbox", "--team", "alpha", "--agent", "researcher", "--clear")
    assert cleared.code == 0 and cleared.out.strip() == "cleared the inbox of researcher"
    inbox = home_dir / "teams" / "alpha" / "inboxes" / "researcher.json"
    assert inbox.read_text() == "[]"
    assert run("inbox", "--team", "alpha", "--agent", "researcher").out.strip() == "no messages"
    bad = run("inbox", "--team", "alpha", "--agent", "researcher", "--clear", "--unread")
    assert bad.code == 2


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["histroy"], "teamdeck: error: unknown command 'histroy': did you mean 'history'?"),
        (["task", "lsit"], "teamdeck task: error: unknown command 'lsit': did you mean 'list'?"),
        (["run", "--headles", "a goal"], "--headles"),  # never taken for --headless
        # ... and named, wherever it is ("unrecognized arguments" after the goal)
        (["run", "a goal", "--headles"], "unknown option --headles (did you mean --headless?)"),
        (["run", "--headles", "a goal"], "unknown option --headles (did you mean --headless?)"),
    ],
)
def test_typos_are_one_line_errors_never_guessed(
    capsys: pytest.CaptureFixture[str], home_dir: Path, argv: list[str], said: str
) -> None:
    """Issue 30: a mistyped command says which one was meant; an abbreviated option is not
    expanded (``--headles`` started a run)."""
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err


def test_team_before_the_command_is_the_commands_team(
    capsys: pytest.CaptureFixture[str], home_dir: Path
) -> None:
    """Issue 30: ``--team nosuchteam ps`` listed every team and exited 0 (the option before the
    command was the dashboard's, and dropped): now it is ps's ``--team``; a command that takes
    no team refuses it in one line."""
    home_dir.mkdir(parents=True, exist_ok=True)
    assert cli.main(["--team", "nosuchteam", "ps"]) == 1
    assert "team 'nosuchteam' does not exist" in capsys.readouterr().err
    assert cli.main(["--team", "nosuchteam", "history"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "history takes no team" in err

"""Compatibility with Claude Code's files: the seeds' examples and newer versions' extra fields
are read and rewritten without losing a field, and what teamdeck writes is byte-for-byte what
``JSON.stringify(x, null, 2)`` writes (checked against node itself when it is installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.core import Home, InboxMessage, TeamMember
from app.core.files import dumps
from app.core.protocol import ShutdownRequest, parse_frame
from tests.seed_examples import SEED_CONFIG, SEED_INBOX

# A task as a newer Claude Code writes it: activeForm, metadata, a field we do not know.
NEWER_TASK = {
    "id": "1",
    "subject": "Research auth",
    "description": "Look at the auth module",
    "activeForm": "Researching auth",
    "status": "pending",
    "blocks": [],
    "blockedBy": [],
    "metadata": {"priority": "high", "nested": {"a": [1, 2]}},
    "createdBy": "team-lead",
}
INTERNAL_TASK = {
    "id": "2",
    "subject": "Teammate bookkeeping",
    "description": "",
    "status": "in_progress",
    "blocks": [],
    "blockedBy": [],
    "metadata": {"_internal": True},
}


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


def seed_team(home: Home) -> Path:
    """Lay the seed config down as Claude Code would have (pretty-printed by JSON.stringify)."""
    team_dir = home.root / "teams" / "my-team"
    (team_dir / "inboxes").mkdir(parents=True)
    path = team_dir / "config.json"
    path.write_text(dumps(json.loads(SEED_CONFIG)))
    return path


def stringify(data: Any) -> str:
    """What JSON.stringify(data, null, 2) produces; node's own answer when node is here."""
    node = shutil.which("node")
    if node is None:
        return dumps(data)
    result = subprocess.run(
        [
            node,
            "-e",
            "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>"
            "process.stdout.write(JSON.stringify(JSON.parse(s),null,2)))",
        ],
        input=json.dumps(data),  # ASCII escapes: node parses them back to the same string
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return result.stdout


# ----------------------------------------------------------------------------- the seeds


def test_seed_inbox_reads(home: Home) -> None:
    seed_team(home)
    box = home.mailbox("my-team")
    box.path("researcher").write_text(SEED_INBOX)
    first, second = box.read("researcher")
    assert (first.sender, first.text, first.summary, first.color, first.read) == (
        "team-lead",
        "Please implement the auth module",
        "Implement auth module",
        "cyan",
        False,
    )
    assert (second.sender, second.summary, second.read) == ("researcher", None, True)
    frame = parse_frame(second.text)
    assert isinstance(frame, ShutdownRequest)
    assert (frame.request_id, frame.sender) == ("shutdown-1234@researcher", "team-lead")
    assert [i for i, _ in box.unread("researcher")] == [0]


def test_seed_inbox_rewrites_losslessly(home: Home) -> None:
    seed_team(home)
    box = home.mailbox("my-team")
    path = box.path("researcher")
    path.write_text(SEED_INBOX)
    original = json.loads(SEED_INBOX)
    new = InboxMessage(sender="team-lead", text="and tests", timestamp="2025-01-15T12:00:00.000Z")
    box.send("researcher", new)
    expected = [*original, new.to_json_dict()]
    assert path.read_text() == stringify(expected)  # the splice == a full JSON.stringify
    box.mark_read("researcher", 0)
    expected[0]["read"] = True
    assert path.read_text() == stringify(expected)


def test_seed_config_reads_and_rewrites_losslessly(home: Home) -> None:
    path = seed_team(home)
    config = home.teams.require("my-team")
    assert config.lead_agent_id == "uuid-1234-5678"
    researcher = config.member("researcher")
    assert researcher is not None
    assert researcher.plan_mode_required is False
    assert researcher.extra_fields() == {"allowedTools": ["Read", "Grep", "Glob"]}
    assert [m.name for m in config.teammates] == ["researcher"]
    home.teams.add_member("my-team", TeamMember(agent_id="", name="tester", joined_at=1))
    expected = json.loads(SEED_CONFIG)
    written = json.loads(path.read_text())
    added = written["members"].pop()
    assert written == expected  # every field kept
    head = stringify(expected)[: -len("\n  ]\n}")]
    assert path.read_text().startswith(head + ",\n    {")  # ...in the same order
    assert (added["agentId"], added["name"], added["joinedAt"]) == ("tester@my-team", "tester", 1)
    home.teams.remove_member("my-team", name="tester")
    assert path.read_text() == stringify(expected)  # back to the seed, byte for byte


def test_seed_config_member_update_keeps_key_order(home: Home) -> None:
    path = seed_team(home)
    home.teams.update_member("my-team", "researcher", is_active=False, color="green")
    expected = json.loads(SEED_CONFIG)
    expected["members"][1]["color"] = "green"
    expected["members"][1]["isActive"] = False  # a new key goes last, as in JavaScript
    assert path.read_text() == stringify(expected)


def test_seed_team_is_usable(home: Home) -> None:
    seed_team(home)
    box = home.mailbox("my-team")
    assert box.send("Researcher", InboxMessage(sender="team-lead", text="go")) == "researcher"
    tasks = home.tasks("my-team")
    assert tasks.create("first").id == "1"


# ----------------------------------------------------------------------------- newer fields


def test_inbox_entries_with_newer_fields(home: Home) -> None:
    """The seeds' README: newer versions add ``msgV``, ``msg_id``, ``type`` to inbox messages;
    "Never drop fields you do not know" (key order kept too, as seed 000's
    ``JSON.stringify(messages, null, 2)`` rewrite would)."""
    seed_team(home)
    box = home.mailbox("my-team")
    path = box.path("researcher")
    entries = [
        {
            "from": "team-lead",
            "text": "hello",
            "timestamp": "2025-01-15T10:30:00.000Z",
            "read": False,
            "msgV": 2,
            "msg_id": "9f1c",
            "type": "message",
        },
        {
            "msg_id": "9f1d",
            "type": "broadcast",
            "from": "tester",
            "text": "hi all",
            "summary": "greeting",
            "timestamp": "2025-01-15T10:31:00.000Z",
            "read": False,
            "msgV": 2,
        },
    ]
    path.write_text(stringify(entries))
    messages = box.read("researcher")
    assert messages[0].extra_fields() == {"msgV": 2, "msg_id": "9f1c", "type": "message"}
    box.mark_read("researcher", 1)
    entries[1]["read"] = True
    assert path.read_text() == stringify(entries)  # key order and unknown fields kept
    box.send("researcher", InboxMessage(sender="x", text="y", timestamp="t"))
    assert json.loads(path.read_text())[:2] == entries


def test_tasks_with_newer_fields(home: Home) -> None:
    seed_team(home)
    directory = home.root / "tasks" / "my-team"
    directory.mkdir(parents=True)
    (directory / "1.json").write_text(stringify(NEWER_TASK))
    (directory / "2.json").write_text(stringify(INTERNAL_TASK))
    tasks = home.tasks("my-team")
    task = tasks.require("1")
    assert task.active_form == "Researching auth"
    assert task.extra_fields() == {"createdBy": "team-lead"}
    assert [t.id for t in tasks.list()] == ["1"]  # _internal hidden by default
    assert [t.id for t in tasks.list(include_internal=True)] == ["1", "2"]
    tasks.update("1", status="in_progress", owner="researcher")
    expected = {**NEWER_TASK, "status": "in_progress", "owner": "researcher"}
    assert (directory / "1.json").read_text() == stringify(expected)
    tasks.update("1", owner=None, status="pending")
    assert (directory / "1.json").read_text() == stringify(NEWER_TASK)
    tasks.update("2", metadata={"note": "x"})
    assert json.loads((directory / "2.json").read_text())["metadata"] == {
        "_internal": True,
        "note": "x",
    }
    assert tasks.create("next").id == "3"


# ----------------------------------------------------------------------------- what we write


def _check_stringified(path: Path) -> None:
    text = path.read_text("utf-8")
    assert not text.endswith("\n")
    assert text == stringify(json.loads(text))


def _camel(keys: list[str]) -> bool:
    return all("_" not in k and k[:1].islower() for k in keys)


def test_files_teamdeck_writes_are_json_stringify_output(home: Home) -> None:
    home.teams.create("Fresh Team", description="ünïcödé ✓")
    home.teams.add_member(
        "fresh-team",
        TeamMember(agent_id="", name="researcher", plan_mode_required=True, subscriptions=[]),
    )
    box = home.mailbox("fresh-team")
    box.send("researcher", InboxMessage(sender="team-lead", text='quote " \\ \n\t ✓ \u2028'))
    box.send("researcher", InboxMessage(sender="team-lead", text="two", summary="s", color="red"))
    box.mark_read("researcher", 0)
    tasks = home.tasks("fresh-team")
    tasks.create("a", "b", active_form="doing a", metadata={"k": [1, {"x": None}]})
    tasks.create("c")
    tasks.add_dependency("1", "2")
    tasks.claim("2", "researcher")
    config_path = home.root / "teams" / "fresh-team" / "config.json"
    for path in (
        config_path,
        box.path("researcher"),
        home.root / "tasks" / "fresh-team" / "1.json",
        home.root / "tasks" / "fresh-team" / "2.json",
    ):
        _check_stringified(path)
    config = json.loads(config_path.read_text())
    assert _camel(list(config))
    assert all(_camel(list(m)) for m in config["members"])
    inbox = json.loads(box.path("researcher").read_text())
    assert all(_camel(list(m)) for m in inbox)
    for task_id in ("1", "2"):
        task = json.loads((home.root / "tasks" / "fresh-team" / f"{task_id}.json").read_text())
        assert _camel(list(task))
    assert "ünïcödé ✓" in config_path.read_text("utf-8")  # raw UTF-8, like JavaScript


def test_lone_surrogates_round_trip_like_javascript(home: Home) -> None:
    """JSON.stringify writes a lone surrogate as a \\ud800 escape; reading and rewriting
    such a file must keep it that way (Python's json keeps the lone code point in memory)."""
    seed_team(home)
    box = home.mailbox("my-team")
    path = box.path("researcher")
    entry = '{"from": "x", "text": "bad \\ud800 half", "timestamp": "t", "read": false}'
    path.write_text(f"[\n  {entry}\n]")
    [message] = box.read("researcher")
    assert message.text == "bad \ud800 half"
    box.mark_read("researcher", 0)
    assert "\\ud800" in path.read_text()
    box.send("researcher", InboxMessage(sender="y", text="also \udfff", timestamp="t"))
    _check_stringified(path)
    assert [m.text for m in box.read("researcher")] == ["bad \ud800 half", "also \udfff"]


def test_claude_code_home_with_mkdir_locks(tmp_path: Path) -> None:
    """In a Claude Code home, locks are proper-lockfile directories, and nothing lock-like is
    left where Claude Code expects none."""
    home = Home(tmp_path / "claude", lock_style="mkdir")
    path = seed_team(home)
    box = home.mailbox("my-team")
    box.path("researcher").write_text(SEED_INBOX)
    box.send("researcher", InboxMessage(sender="team-lead", text="hi", timestamp="t"))
    box.mark_all_read("researcher")
    home.tasks("my-team").create("x")
    home.teams.update_member("my-team", "researcher", mode="plan")
    assert json.loads(path.read_text())["members"][1]["mode"] == "plan"
    leftovers = [p.name for p in home.root.rglob("*.lock") if p.is_dir()]
    assert leftovers == []
    assert len(box.read("researcher")) == 3

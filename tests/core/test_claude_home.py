"""A Claude Code home is someone else's: looking creates nothing, writes keep its modes, a corrupt
file is reported and left alone, newer-era inbox envelopes are kept and imitated."""

from __future__ import annotations

import json
import os
import stat
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from app.core import CorruptFileError, Home, InboxMessage, LockTimeoutError, TeamMember
from app.core.files import CLAUDE_FILE_MODE, CORRUPT_MARK
from tests.seed_examples import SEED_CONFIG


def js(data: Any) -> str:
    """``JSON.stringify(data, null, 2)``."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def tree(root: Path) -> dict[str, tuple[int, bytes | None, int]]:
    """Every path under ``root``: mode, bytes (files) and mtime -- to prove nothing changed."""
    found: dict[str, tuple[int, bytes | None, int]] = {}
    for path in sorted(root.rglob("*")):
        st = os.lstat(path)
        data = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
        found[str(path.relative_to(root))] = (st.st_mode, data, st.st_mtime_ns)
    return found


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def claude_root(tmp_path: Path) -> Path:
    """A Claude Code home written as Claude Code writes it (0644 files, 0755 folders)."""
    root = tmp_path / "claude"
    team = root / "teams" / "my-team"
    (team / "inboxes").mkdir(parents=True, mode=0o755)
    (root / "tasks" / "my-team").mkdir(parents=True, mode=0o755)
    (team / "config.json").write_text(SEED_CONFIG)
    inbox = [
        {"from": "team-lead", "text": "hi", "timestamp": "2026-01-01T00:00:00.000Z", "read": False}
    ]
    (team / "inboxes" / "researcher.json").write_text(js(inbox))
    (root / "tasks" / "my-team" / "1.json").write_text(
        js(
            {
                "id": "1",
                "subject": "s",
                "description": "",
                "status": "pending",
                "blocks": [],
                "blockedBy": [],
            }
        )
    )
    for path in root.rglob("*"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return root


def test_constructing_a_home_creates_nothing(tmp_path: Path) -> None:
    for style in ("flock", "mkdir"):
        home = Home(tmp_path / style / "deep", lock_style=style)  # type: ignore[arg-type]
        assert home.teams.list() == [] and not home.exists()
        assert home.mailbox("x").read("y") == [] and home.tasks("x").list() == []
    assert os.listdir(tmp_path) == []


def test_looking_at_a_claude_home_changes_nothing(claude_root: Path) -> None:
    before = tree(claude_root)
    home = Home(claude_root, lock_style="mkdir")
    assert [t.name for t in home.teams.list()] == ["my-team"]
    assert home.mailbox("my-team").read("researcher")[0].text == "hi"
    assert home.mailbox("my-team").read("nobody") == []
    assert [t.id for t in home.tasks("my-team").list()] == ["1"]
    assert home.tasks("other").list() == []
    assert tree(claude_root) == before


def test_new_files_get_claude_codes_modes_and_rewrites_keep_theirs(claude_root: Path) -> None:
    home = Home(claude_root, lock_style="mkdir")
    home.teams.create("fresh")
    fresh = claude_root / "teams" / "fresh"
    assert mode(fresh) == 0o755 and mode(fresh / "inboxes") == 0o755
    assert mode(fresh / "config.json") == CLAUDE_FILE_MODE == 0o644
    assert mode(claude_root / "tasks" / "fresh") == 0o755
    assert mode(claude_root / "tasks" / "fresh" / ".lock") == 0o644
    home.teams.add_member("fresh", TeamMember(agent_id="a@fresh", name="a"))
    home.mailbox("fresh").send("a", InboxMessage(sender="team-lead", text="x"))
    assert mode(fresh / "inboxes" / "a.json") == 0o644
    home.tasks("fresh").create("t")
    assert mode(claude_root / "tasks" / "fresh" / "1.json") == 0o644

    # A file someone gave other bits keeps them through every kind of rewrite.
    inbox = claude_root / "teams" / "my-team" / "inboxes" / "researcher.json"
    config = claude_root / "teams" / "my-team" / "config.json"
    task = claude_root / "tasks" / "my-team" / "1.json"
    for path in (inbox, config, task):
        os.chmod(path, 0o640)
    box = home.mailbox("my-team")
    box.append("researcher", InboxMessage(sender="team-lead", text="more"))
    box.mark_all_read("researcher")
    home.teams.update_member("my-team", "researcher", is_active=False)
    home.tasks("my-team").update("1", status="in_progress")
    assert [mode(p) for p in (inbox, config, task)] == [0o640, 0o640, 0o640]


def test_teamdecks_own_home_keeps_0600_and_0700(tmp_path: Path) -> None:
    home = Home(tmp_path / "own")
    home.teams.create("alpha")
    assert mode(tmp_path / "own") == 0o700
    assert mode(tmp_path / "own" / "teams" / "alpha") == 0o700
    assert mode(tmp_path / "own" / "teams" / "alpha" / "config.json") == 0o600
    assert mode(tmp_path / "own" / "tasks" / "alpha" / ".lock") == 0o600


def test_a_corrupt_claude_file_is_reported_and_left_where_it_is(claude_root: Path) -> None:
    inbox = claude_root / "teams" / "my-team" / "inboxes" / "researcher.json"
    inbox.write_text('[{"from": "x", "te')
    before = tree(claude_root)
    home = Home(claude_root, lock_style="mkdir")
    with pytest.raises(CorruptFileError) as read_err:
        home.mailbox("my-team").read("researcher")
    assert str(inbox) in str(read_err.value) and read_err.value.saved_copy is None
    with pytest.raises(CorruptFileError) as write_err:
        home.mailbox("my-team").send("researcher", InboxMessage(sender="team-lead", text="x"))
    assert "\n" not in str(write_err.value) and str(inbox) in str(write_err.value)
    # (the folder's mtime moves: the write took and released the inbox's lock directory)
    assert {k: v[:2] for k, v in tree(claude_root).items()} == {k: v[:2] for k, v in before.items()}
    assert not any(CORRUPT_MARK in p.name for p in claude_root.rglob("*"))


def test_stale_lock_dir_in_a_claude_home_is_taken_over_after_10s(claude_root: Path) -> None:
    inbox = claude_root / "teams" / "my-team" / "inboxes" / "researcher.json"
    lock = inbox.with_name(inbox.name + ".lock")
    lock.mkdir()
    fresh = Home(claude_root, lock_style="mkdir", lock_timeout=0.3)
    with pytest.raises(LockTimeoutError):  # 9 s old: still held
        os.utime(lock, (time.time() - 9, time.time() - 9))
        fresh.mailbox("my-team").append("researcher", InboxMessage(sender="a", text="no"))
    os.utime(lock, (time.time() - 11, time.time() - 11))  # 11 s old: stale, taken over
    fresh.mailbox("my-team").append("researcher", InboxMessage(sender="a", text="yes"))
    assert [m.text for m in fresh.mailbox("my-team").read("researcher")] == ["hi", "yes"]
    assert not lock.exists()


NEW_ERA = [
    {
        "type": "message",
        "from": "researcher",
        "text": "done",
        "timestamp": "2026-05-01T10:00:00.000Z",
        "summary": "report",
        "read": True,
        "msgV": 2,
        "msg_id": "6f1c2b9e-4d0a-4a57-9a51-3c1f7d2e8b10",
        "future": {"kept": [1, 2]},
    }
]


def test_new_era_envelopes_are_kept_and_imitated(tmp_path: Path) -> None:
    """The seeds' README ("Inbox messages may carry extra fields in newer versions (``msgV``,
    ``msg_id``, ``type``). Never drop fields you do not know."): kept, and imitated in such an
    inbox; an inbox of seed 000's era (``writeToMailbox``: ``{from, text, summary?,
    timestamp, color?}`` + ``read``) gets exactly that shape."""
    home = Home(tmp_path / "claude", lock_style="mkdir")
    home.teams.create("t")
    home.teams.add_member("t", TeamMember(agent_id="researcher@t", name="researcher"))
    path = home.mailbox("t").path("team-lead")
    path.write_text(js(NEW_ERA))
    home.mailbox("t").send("team-lead", InboxMessage(sender="researcher", text="next"))
    entries = json.loads(path.read_text())
    assert entries[0] == NEW_ERA[0]  # unknown fields kept
    ours = entries[1]
    assert list(ours) == ["type", "from", "text", "timestamp", "read", "msgV", "msg_id"]
    assert ours["type"] == "message" and ours["msgV"] == 2
    assert str(uuid.UUID(ours["msg_id"])) == ours["msg_id"] != NEW_ERA[0]["msg_id"]
    assert path.read_text() == js(entries)  # still JSON.stringify(x, null, 2), byte for byte

    # An inbox of the seeds' era gets the seeds' shape, nothing more.
    home.mailbox("t").send("researcher", InboxMessage(sender="team-lead", text="plain"))
    plain = json.loads(home.mailbox("t").path("researcher").read_text())
    assert list(plain[0]) == ["from", "text", "timestamp", "read"]


def test_clear_mailbox(tmp_path: Path) -> None:
    """Seed 000 ``clearMailbox(agentName, teamName)``: an existing inbox becomes ``"[]"``; a
    missing one is not created (``if (!fs.existsSync(inboxPath)) return;``)."""
    home = Home(tmp_path / "claude", lock_style="mkdir")
    home.teams.create("t")
    home.teams.add_member("t", TeamMember(agent_id="a@t", name="a"))
    box = home.mailbox("t")
    assert box.clear("a") is False and not box.path("a").exists()  # nothing created
    box.send("a", InboxMessage(sender="team-lead", text="one"))
    assert box.clear("a") is True
    assert box.path("a").read_text() == "[]" and box.read("a") == []
    box.send("a", InboxMessage(sender="team-lead", text="two"))  # appends after a clear
    assert [m.text for m in box.read("a")] == ["two"]
    assert not box.path("a").with_name("a.json.lock").exists()


def test_hidden_pane_ids(tmp_path: Path) -> None:
    home = Home(tmp_path / "own")
    home.teams.create("t")
    assert home.teams.hidden_pane_ids("t") == []
    assert home.teams.set_pane_hidden("t", "%3") is True
    assert home.teams.set_pane_hidden("t", "%3") is False
    assert home.teams.is_pane_hidden("t", "%3")
    assert json.loads((tmp_path / "own/teams/t/config.json").read_text())["hiddenPaneIds"] == ["%3"]
    assert home.teams.set_pane_hidden("t", "%3", hidden=False) is True
    assert home.teams.hidden_pane_ids("t") == []

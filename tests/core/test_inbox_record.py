"""The record of checked inbox heads: a cold append checks only what no teamdeck process has.

A process that has not seen an inbox (its caches empty) used to check the whole file before
appending; now it checks only the bytes after the longest head that some teamdeck process
recorded as checked (``app.core.inbox_record``, by content). These tests hold it to what the
full check gave: another writer's rewrite, a corrupt byte anywhere, a broken or planted record,
processes racing with a writer that knows nothing of the record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import app.core.inbox_known as inbox_known
from app.core import CorruptFileError, Home, InboxMessage, TeamMember, inbox_cache, inbox_record
from app.core.files import atomic_write_bytes, dumps_array
from tests.core.processes import run_together

TEAM = "t"
AGENT = "researcher"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    home.teams.add_member(TEAM, TeamMember(agent_id="", name=AGENT))
    return home


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the texts the append check parsed (a whole file, or a tail)."""
    sizes: list[int] = []
    original = inbox_record.check_array

    def spy(data: bytes) -> None:
        sizes.append(len(data))
        original(data)

    monkeypatch.setattr(inbox_record, "check_array", spy)
    return sizes


def cold() -> None:
    """What a process that has never seen the file knows: nothing of its own."""
    inbox_cache.parsed = inbox_cache.ParsedInboxes()
    with inbox_known._known_lock:
        inbox_known._known.clear()


def entry(i: int, read: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "from": "team-lead",
        "text": f"message {i}: " + "x" * 200,
        "timestamp": "2025-01-15T10:30:00.000Z",
        "read": read,
        **extra,
    }


def seeded(home: Home, count: int = 2000) -> Path:
    """An inbox another program wrote, then appended to once by teamdeck (checked whole)."""
    path = home.mailbox(TEAM).path(AGENT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dumps_array([entry(i) for i in range(count)]).encode())
    cold()
    home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="first"))
    cold()
    return path


def record_of(home: Home) -> Path:
    return inbox_record.record_path(home.mailbox(TEAM).path(AGENT))


def foreign_rewrite(path: Path, change: Any) -> None:
    """A writer without the record (Claude Code): parse, change, write the whole file."""
    entries = json.loads(path.read_bytes())
    change(entries)
    tmp = path.with_name("foreign.tmp")
    tmp.write_bytes(dumps_array(entries).encode())
    os.replace(tmp, path)


def test_a_cold_append_checks_only_what_no_process_checked(home: Home, checked: list[int]) -> None:
    path = seeded(home)
    size = path.stat().st_size
    assert len(checked) == 1 and checked[0] > size * 0.99  # the first append: checked whole
    checked.clear()
    assert record_of(home).is_file()
    assert sorted(os.listdir(path.parent)) == [f"{AGENT}.json", f"{AGENT}.json.lock"]

    home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="second"))
    assert checked == []  # the head another append recorded: nothing left to check

    script = (
        "import sys; from app.core import Home, InboxMessage\n"
        "Home(sys.argv[1]).mailbox('t').append('researcher', InboxMessage(sender='w', text='p'))"
    )
    argv = [sys.executable, "-P", "-c", script, str(home.root)]
    subprocess.run(argv, check=True, cwd=ROOT, timeout=60)  # another process's append
    path.write_bytes(path.read_bytes()[:-2] + b",\n" + dumps_array([entry(9)])[2:].encode())
    cold()
    home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="third"))
    assert checked and max(checked) < size // 50  # only what another writer added
    texts = [m.text for m in home.mailbox(TEAM).read(AGENT)[-5:]]
    assert texts == ["first", "second", "p", entry(9)["text"], "third"]
    json.loads(path.read_bytes())


def test_a_process_appending_again_keeps_the_record_up_to_date(
    home: Home, checked: list[int]
) -> None:
    path = seeded(home)
    box = home.mailbox(TEAM)
    box.append(AGENT, InboxMessage(sender="lead", text="cold"))
    for i in range(5):  # this process knows the file now: no check, and the record follows
        box.append(AGENT, InboxMessage(sender="lead", text=f"warm {i}"))
    cold()
    checked.clear()
    box.append(AGENT, InboxMessage(sender="lead", text="another process"))
    assert checked == []

    assert box.mark_read(AGENT, box.count(AGENT) - 4) == 1  # "warm 2": a rewrite, unrecorded
    cold()
    box.append(AGENT, InboxMessage(sender="lead", text="and another"))
    assert checked and max(checked) < path.stat().st_size // 50  # from "warm 2" on
    assert [m.text for m in box.read(AGENT)[-8:]] == [
        "cold",
        *(f"warm {i}" for i in range(5)),
        "another process",
        "and another",
    ]


def test_another_writers_rewrite_is_checked_past_what_still_matches(
    home: Home, checked: list[int]
) -> None:
    path = seeded(home)
    size = path.stat().st_size
    checked.clear()

    def change(entries: list[dict[str, Any]]) -> None:
        entries[-1]["read"] = True  # Claude Code marks the newest read...
        entries[-1]["futureField"] = {"kept": [1, 2]}  # ...and writes a field of its own

    foreign_rewrite(path, change)
    theirs = path.read_bytes()
    home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="after"))
    assert checked and max(checked) < size // 50
    assert path.read_bytes().startswith(theirs[: theirs.rindex(b"\n]")])  # their bytes kept
    raw = json.loads(path.read_bytes())
    assert list(raw[-2])[-1] == "futureField" and raw[-2]["futureField"] == {"kept": [1, 2]}
    assert raw[-2]["read"] is True and raw[-1]["text"] == "after"

    foreign_rewrite(path, lambda entries: entries[0].update(read=False))  # the oldest changed
    cold()
    checked.clear()
    before = path.stat().st_size
    home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="last"))
    assert checked == [before]  # no recorded head is a prefix any more: the whole file
    assert json.loads(path.read_bytes())[-1]["text"] == "last"


def corrupt_middle(data: bytes) -> bytes:
    at = data.index(b'"message 1000')
    return data[:at] + b"'" + data[at + 1 :]


def corrupt_tail(data: bytes) -> bytes:  # another writer appended a broken entry
    return data[: data.rindex(b"]")] + b',\n  {"from": "x", "text": \n]'


def trailing_comma(data: bytes) -> bytes:
    return data[: data.rindex(b"]")] + b",\n]"


def unclosed(data: bytes) -> bytes:
    return data[: data.rindex(b"]")]


@pytest.mark.parametrize("corrupt", [corrupt_middle, corrupt_tail, trailing_comma, unclosed])
def test_a_corrupt_file_is_one_error_and_left_intact_whatever_the_record(
    home: Home, corrupt: Any
) -> None:
    path = seeded(home)
    bad = corrupt(path.read_bytes())
    atomic_write_bytes(path, bad)
    cold()
    with pytest.raises(CorruptFileError) as err:
        home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="lost?"))
    assert err.value.path == path
    assert len(str(err.value).splitlines()) == 1
    assert path.read_bytes() == bad


def test_a_broken_or_planted_record_is_ignored(home: Home, tmp_path: Path) -> None:
    path = seeded(home)
    record = record_of(home)
    record.write_bytes(b"12 zz\nnot a mark\n" + os.urandom(64) + b"\n-5 " + b"00" * 32)
    home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="a"))
    assert inbox_record.load(record)  # written again, readable

    record.unlink()
    outside = tmp_path / "outside"
    outside.write_text("theirs")
    record.symlink_to(outside)  # never followed: neither read nor written through
    cold()
    home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="b"))
    assert outside.read_text() == "theirs"
    atomic_write_bytes(path, corrupt_middle(path.read_bytes()))
    cold()
    bad = path.read_bytes()
    with pytest.raises(CorruptFileError):
        home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text="c"))
    assert path.read_bytes() == bad


def test_a_claude_code_home_gets_no_record(tmp_path: Path) -> None:
    root = tmp_path / "claude"
    home = Home(root, lock_style="mkdir")
    home.teams.create(TEAM)
    home.teams.add_member(TEAM, TeamMember(agent_id="", name=AGENT))
    for text in ("one", "two", "three"):
        cold()
        home.mailbox(TEAM).append(AGENT, InboxMessage(sender="lead", text=text))
    assert [m.text for m in home.mailbox(TEAM).read(AGENT)] == ["one", "two", "three"]
    assert not [p for p in root.rglob("*") if "inbox-checked" in p.name]


# ----------------------------------------------------------------------------- races


def _cold_appender(start: Any, root: str, writer: int, count: int) -> None:
    box = Home(root).mailbox(TEAM)
    start.wait()
    for seq in range(count):
        cold()  # every append as a process that never saw the file: through the record
        box.append(AGENT, InboxMessage(sender=f"w{writer}", text=f"{writer}:{seq}"))


def _foreign_writer(start: Any, root: str, writer: int, count: int) -> None:
    """Rewrites the whole file under the inbox lock, knowing nothing of the record: a flag
    flipped, a field added, another layout (as another program might leave it)."""
    home = Home(root)
    path = home.mailbox(TEAM).path(AGENT)
    start.wait()
    for seq in range(count):
        with home.lock(path):
            if not path.exists():
                continue
            entries = json.loads(path.read_bytes())
            if entries:
                entries[seq % len(entries)]["read"] = True
                entries[-1]["seen"] = seq
            layout = json.dumps(entries, indent=4 if seq % 2 else 2)
            atomic_write_bytes(path, layout.encode())


def test_cold_appends_racing_a_writer_without_the_record_lose_nothing(home: Home) -> None:
    writers, per_writer = 4, 40
    args = [(str(home.root), w, per_writer) for w in range(writers)]
    run_together(
        [(_cold_appender, a) for a in args] + [(_foreign_writer, (str(home.root), 9, 60))], 120
    )
    path = home.mailbox(TEAM).path(AGENT)
    raw = json.loads(path.read_bytes())
    assert len(raw) == writers * per_writer
    texts = [e["text"] for e in raw]
    assert len(set(texts)) == len(texts)
    for w in range(writers):
        mine = [t for t in texts if t.startswith(f"{w}:")]
        assert mine == [f"{w}:{seq}" for seq in range(per_writer)]  # each sender's order

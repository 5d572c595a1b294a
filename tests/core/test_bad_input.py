"""Bad input: every case gives a clear one-line error and loses or overwrites nothing.

A corrupt file is copied aside as ``*.corrupt-<timestamp>`` (once, however often it is read),
the error names the file, and the original is left exactly as it was.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import app.core.files as files_module
from app.core import (
    CorruptFileError,
    Home,
    InboxMessage,
    InvalidNameError,
    LockTimeoutError,
    NameCollisionError,
    TeamMember,
    UnknownRecipientError,
    UnsafePathError,
)
from app.core.errors import TeamdeckError
from app.core.files import dumps
from app.core.protocol import parse_frame

TEAM = "t"
FORK = multiprocessing.get_context("fork")


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    home.teams.add_member(TEAM, TeamMember(agent_id="", name="researcher"))
    return home


def msg(text: str = "hi") -> InboxMessage:
    return InboxMessage(sender="team-lead", text=text)


def corrupt_copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".corrupt-*"))


def assert_one_line(exc: BaseException, path: Path) -> None:
    text = str(exc)
    assert "\n" not in text
    assert str(path) in text


# ----------------------------------------------------------------------------- inbox files

VALID_ENTRY = {"from": "a", "text": "b", "timestamp": "2025-01-15T10:30:00.000Z", "read": False}
BAD_INBOXES: dict[str, bytes] = {
    "empty": b"",
    "whitespace": b"  \n",
    "truncated": dumps([VALID_ENTRY, VALID_ENTRY]).encode()[:-30],
    "object": json.dumps(VALID_ENTRY).encode(),
    "string": b'"hello"',
    "null": b"null",
    "number": b"42",
    "array of non-objects": b"[1, 2]",
    "not utf-8": b'[{"from": "a", "text": "\xff\xfe"}]',
    "utf-16": json.dumps([VALID_ENTRY]).encode("utf-16"),
    "nan": b'[{"from": "a", "text": "b", "x": NaN}]',
    "deeply nested": b"[" * 200_000 + b"]" * 200_000,
    "trailing junk": dumps([VALID_ENTRY]).encode() + b" ]",
}


@pytest.mark.parametrize("kind", BAD_INBOXES)
def test_corrupt_inbox_is_reported_and_left_intact(home: Home, kind: str) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    data = BAD_INBOXES[kind]
    path.write_bytes(data)
    operations: list[Callable[[], Any]] = [
        lambda: box.read("researcher"),
        lambda: box.unread("researcher"),
        lambda: box.send("researcher", msg("must not be lost silently")),
        lambda: box.mark_all_read("researcher"),
        lambda: box.mark_read("researcher", 0),
    ]
    for operation in operations:
        with pytest.raises(CorruptFileError) as err:
            operation()
        assert_one_line(err.value, path)
        assert err.value.path == path
        assert path.read_bytes() == data  # never replaced, never emptied
    copies = corrupt_copies(path)
    assert len(copies) == 1, copies  # one copy, however many times it was read
    assert copies[0].read_bytes() == data
    assert err.value.saved_copy == copies[0]
    assert copies[0].name in str(err.value)
    assert "researcher.json.corrupt-" in copies[0].name


def test_entry_with_a_wrong_field_type(home: Home) -> None:
    """Valid JSON whose entry has a mistyped known field: reading it is an error naming the
    entry; writing still works (it loses nothing) and keeps the odd entry as it is."""
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    odd = {"from": "a", "text": 5, "read": False}
    path.write_text(dumps([odd]))
    with pytest.raises(CorruptFileError, match="entry 0 field 'text'") as err:
        box.read("researcher")
    assert_one_line(err.value, path)
    box.send("researcher", msg("still delivered"))
    assert box.mark_all_read("researcher") == 2
    data = json.loads(path.read_text())
    assert data[0] == {**odd, "read": True}
    assert data[1]["text"] == "still delivered"


def test_empty_inbox_error_says_empty(home: Home) -> None:
    path = home.mailbox(TEAM).path("researcher")
    path.write_bytes(b"")
    with pytest.raises(CorruptFileError, match="file is empty"):
        home.mailbox(TEAM).read("researcher")


def test_a_repaired_file_is_quarantined_again_when_it_breaks_differently(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    path.write_bytes(b"[")
    with pytest.raises(CorruptFileError):
        box.read("researcher")
    path.write_bytes(b"{")
    with pytest.raises(CorruptFileError):
        box.read("researcher")
    assert sorted(p.read_bytes() for p in corrupt_copies(path)) == [b"[", b"{"]


def test_a_half_written_file_is_retried(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program is mid-write: the first read sees half a file, a retry the whole."""
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    full = dumps([VALID_ENTRY]).encode()
    path.write_bytes(full)
    real = files_module.read_bytes
    calls = {"n": 0}

    def flaky(p: Path) -> bytes | None:
        calls["n"] += 1
        data = real(p)
        return data[:10] if calls["n"] == 1 and data else data

    monkeypatch.setattr(files_module, "read_bytes", flaky)
    assert [m.text for m in box.read("researcher")] == ["b"]
    assert corrupt_copies(path) == []


def test_ten_megabyte_inbox_works(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    entry = {**VALID_ENTRY, "text": "x" * 1000}
    count = 10 * 1024 * 1024 // 1100 + 1
    path.write_text(dumps([entry] * count))
    assert path.stat().st_size > 10 * 1024 * 1024
    assert len(box.read("researcher")) == count
    box.send("researcher", msg("one more"))
    box.mark_read("researcher", count)
    messages = box.read("researcher")
    assert len(messages) == count + 1
    assert (messages[-1].text, messages[-1].read) == ("one more", True)


def test_corrupt_ten_megabyte_inbox_errors(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    entry = {**VALID_ENTRY, "text": "x" * 1000}
    data = dumps([entry] * (10 * 1024 * 1024 // 1100 + 1)).encode()[:-5000]
    path.write_bytes(data)
    with pytest.raises(CorruptFileError) as err:
        box.send("researcher", msg())
    assert_one_line(err.value, path)
    assert path.read_bytes() == data
    assert [c.read_bytes() == data for c in corrupt_copies(path)] == [True]


@pytest.mark.parametrize("damage", ["bad string", "nan", "non-object"])
def test_a_large_inbox_broken_in_the_middle_is_never_extended(home: Home, damage: str) -> None:
    """A cold append to a big inbox writes the new version while it checks the old one: a
    check that fails leaves the file as it was, and no temp file behind."""
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    good = dumps([{**VALID_ENTRY, "text": f"message {i}"} for i in range(4000)]).encode()
    assert len(good) > 256 * 1024  # large enough to be checked alongside the write
    middle = good.index(b'"message 2000"')
    bad = {
        "bad string": b"'message 2000'",
        "nan": b"NaN",
        "non-object": b'"message 2000"}, 7, {"x": 1',
    }[damage]
    data = good[:middle] + bad + good[middle + len(b'"message 2000"') :]
    path.write_bytes(data)
    with pytest.raises(CorruptFileError) as err:
        box.send("researcher", msg("must not be lost silently"))
    assert_one_line(err.value, path)
    assert path.read_bytes() == data
    leftovers = [p.name for p in path.parent.iterdir() if ".tmp-" in p.name]
    assert leftovers == []


# ----------------------------------------------------------------------------- inbox entries


def test_entries_with_missing_unknown_or_null_fields(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    entries: list[dict[str, Any]] = [
        {},
        {"text": "no sender, no timestamp, no read"},
        {"from": "a", "text": "b", "timestamp": None, "read": None, "color": None},
        {**VALID_ENTRY, "msgV": 3, "msg_id": "m-1", "type": "message", "future": {"x": [1]}},
        {**VALID_ENTRY, "text": json.dumps({"type": "brand_new_frame", "requestId": "r"})},
    ]
    path.write_text(dumps(entries))
    messages = box.read("researcher")
    assert len(messages) == 5
    assert (messages[0].sender, messages[0].text, messages[0].read) == ("", "", False)
    assert messages[1].text == "no sender, no timestamp, no read"
    assert messages[2].read is False and messages[2].color is None
    assert messages[3].extra_fields() == {
        "msgV": 3,
        "msg_id": "m-1",
        "type": "message",
        "future": {"x": [1]},
    }
    assert parse_frame(messages[4].text) is None  # an unknown frame stays a plain message
    assert [i for i, _ in box.unread("researcher")] == [0, 1, 2, 3, 4]


def test_mark_read_keeps_unknown_fields_byte_for_byte(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    entries: list[dict[str, Any]] = [
        {**VALID_ENTRY, "msgV": 2, "msg_id": "a1", "type": "message"},
        {"read": False, "text": "odd key order", "from": "x", "extra": [1, {"y": None}]},
        {**VALID_ENTRY, "text": 'ünïcödé \u2028 \\ "q"', "big": 12345678901234567890},
        {**VALID_ENTRY, "float": 1.5, "empty": {}, "list": []},
    ]
    original = dumps(entries)
    path.write_text(original)
    assert box.mark_read("researcher", 1) == 1
    rewritten = path.read_text()
    entries[1]["read"] = True
    assert rewritten == dumps(entries)
    for index in (0, 2, 3):  # every other entry is byte-for-byte what it was
        piece = dumps(entries[index]).replace("\n", "\n  ")
        assert piece in original and piece in rewritten


# ----------------------------------------------------------------------------- names

BAD_NAMES = [
    "",
    "   ",
    ".",
    "..",
    "a/b",
    "../etc",
    "a\\b",
    "a\x00b",
    "a\nb",
    "a\rb",
    "---",
    "!!!",
    "ü",
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_team_names(tmp_path: Path, name: str) -> None:
    home = Home(tmp_path / "home")
    with pytest.raises(InvalidNameError) as err:
        home.teams.create(name)
    assert "\n" not in str(err.value)
    assert not home.root.exists()  # nothing created, not even the home


@pytest.mark.parametrize("name", [".", "..", "a/b", "../t", "a\x00b", "a\nb", ""])
def test_bad_names_in_lookups(home: Home, name: str) -> None:
    with pytest.raises(InvalidNameError):
        home.teams.get(name)
    with pytest.raises(InvalidNameError):
        home.mailbox(name).path("researcher")
    with pytest.raises(InvalidNameError):
        home.mailbox(TEAM).path(name)
    with pytest.raises(InvalidNameError):
        home.tasks(name)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_agent_names(home: Home, name: str) -> None:
    config = (home.root / "teams" / TEAM / "config.json").read_bytes()
    with pytest.raises(InvalidNameError) as err:
        home.teams.add_member(TEAM, TeamMember(agent_id="", name=name))
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidNameError):
        home.teams.unique_member_name(TEAM, name)
    assert (home.root / "teams" / TEAM / "config.json").read_bytes() == config


def test_names_that_differ_only_by_case(home: Home) -> None:
    assert home.teams.create("Alpha").name == "alpha"
    assert home.teams.create("ALPHA").name == "alpha-2"  # teams are deduped, never merged
    with pytest.raises(NameCollisionError):
        home.teams.add_member(TEAM, TeamMember(agent_id="", name="Researcher"))
    assert home.teams.unique_member_name(TEAM, "RESEARCHER") == "researcher-2"


def test_task_ids_that_are_not_numbers(home: Home) -> None:
    tasks = home.tasks(TEAM)
    tasks.create("a")
    for bad in ("", "x", "../1", "1.5", "-1", "²", "١"):
        with pytest.raises(InvalidNameError):
            tasks.get(bad)
    # Odd files in the task directory are ignored, not fatal.
    for odd in ("².json", "abc.json", ".hidden.json", "3.json.lock"):
        (home.root / "tasks" / TEAM / odd).write_text("{}")
    assert tasks.ids_on_disk() == [1]
    assert tasks.create("b").id == "2"


def test_no_phantom_inbox(home: Home) -> None:
    inboxes = home.layout.inboxes_dir(TEAM)
    for address in ("researchr", "Researcher2", "researcher@other", "../researcher"):
        with pytest.raises(UnknownRecipientError):
            home.mailbox(TEAM).send(address, msg())
    assert os.listdir(inboxes) == []


# ----------------------------------------------------------------------------- task ids


def _snapshot(home: Home) -> dict[str, bytes]:
    directory = home.root / "tasks" / TEAM
    return {p.name: p.read_bytes() for p in directory.glob("*.json")}


def _assert_nothing_overwritten(before: dict[str, bytes], home: Home) -> None:
    after = _snapshot(home)
    for name, data in before.items():
        assert after[name] == data, name


@pytest.mark.parametrize(
    ("watermark", "expected"),
    [
        (None, "6"),  # missing
        (b"", "6"),  # empty
        (b"garbage", "6"),  # corrupt
        (b"\xff\xfe", "6"),  # not UTF-8
        (b"2", "6"),  # lower than the highest task id
        (b"-7", "6"),
        (b"9", "10"),  # higher: ids deleted above the highest are not reused
        (b"9\n", "10"),  # parseInt-style, like Claude Code
        (b"12abc", "13"),
        (b"0012", "13"),  # padded: longer than the next id, so replaced, never overwritten
        (b" 12", "13"),
        (b"99", "100"),  # a digit longer: overwritten in place
    ],
)
def test_highwatermark_never_causes_an_overwrite(
    home: Home, watermark: bytes | None, expected: str
) -> None:
    tasks = home.tasks(TEAM)
    for i in range(5):
        tasks.create(f"task {i + 1}")
    mark = home.root / "tasks" / TEAM / ".highwatermark"
    if watermark is None:
        mark.unlink()
    else:
        mark.write_bytes(watermark)
    before = _snapshot(home)
    assert tasks.create("new").id == expected
    _assert_nothing_overwritten(before, home)
    assert mark.read_text() == expected
    if watermark in (b"garbage", b"\xff\xfe", b""):
        assert [c.read_bytes() for c in corrupt_copies(mark)] == [watermark]


def test_highwatermark_symlink_is_refused(home: Home, tmp_path: Path) -> None:
    tasks = home.tasks(TEAM)
    tasks.create("a")
    outside = tmp_path / "outside"
    outside.write_text("precious")
    mark = home.root / "tasks" / TEAM / ".highwatermark"
    mark.unlink()
    mark.symlink_to(outside)
    with pytest.raises(UnsafePathError):
        tasks.create("b")
    assert outside.read_text() == "precious"
    assert tasks.ids_on_disk() == [1]


def test_task_file_whose_id_disagrees_with_its_name(home: Home) -> None:
    tasks = home.tasks(TEAM)
    tasks.create("one")
    tasks.create("two")
    two = home.root / "tasks" / TEAM / "2.json"
    data = json.loads(two.read_text())
    data["id"] = "1"
    two.write_text(dumps(data))
    one_before = (home.root / "tasks" / TEAM / "1.json").read_bytes()
    assert tasks.require("2").id == "2"
    tasks.update("2", status="completed")
    assert (home.root / "tasks" / TEAM / "1.json").read_bytes() == one_before
    assert json.loads(two.read_text())["status"] == "completed"


def test_corrupt_task_file(home: Home) -> None:
    tasks = home.tasks(TEAM)
    tasks.create("good")
    bad = home.root / "tasks" / TEAM / "2.json"
    bad.write_bytes(b'{"id": "2", "subj')
    with pytest.raises(CorruptFileError) as err:
        tasks.get("2")
    assert_one_line(err.value, bad)
    listed, errors = tasks.scan()
    assert [t.id for t in listed] == ["1"] and list(errors) == ["2"]
    assert [t.id for t in tasks.list()] == ["1"]
    assert tasks.create("next").id == "3"  # the corrupt file's id is not reused
    assert bad.read_bytes() == b'{"id": "2", "subj'
    with pytest.raises(CorruptFileError):
        tasks.claim("2", "r")
    assert bad.read_bytes() == b'{"id": "2", "subj'


def test_corrupt_team_config(home: Home) -> None:
    path = home.root / "teams" / TEAM / "config.json"
    path.write_bytes(b'{"name": "t", "members": [')
    with pytest.raises(CorruptFileError) as err:
        home.teams.get(TEAM)
    assert_one_line(err.value, path)
    listing = home.teams.scan()
    assert listing.teams == [] and list(listing.errors) == [TEAM]
    with pytest.raises(CorruptFileError):
        home.mailbox(TEAM).send("researcher", msg())
    assert home.teams.create(TEAM).name == "t-2"  # never written over
    assert path.read_bytes() == b'{"name": "t", "members": ['
    with pytest.raises(CorruptFileError):
        home.teams.delete(TEAM)
    assert path.read_bytes() == b'{"name": "t", "members": ['
    home.teams.delete(TEAM, force=True)  # the way out, on purpose
    assert not path.parent.exists()


# ----------------------------------------------------------------------------- symlinks


@pytest.mark.parametrize("dangling", [False, True])
def test_symlink_at_the_inbox_path(home: Home, tmp_path: Path, dangling: bool) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    target = tmp_path / "outside.json"
    if not dangling:
        target.write_text("[]")
    path.symlink_to(target)
    for operation in (
        lambda: box.send("researcher", msg()),
        lambda: box.read("researcher"),
        lambda: box.mark_all_read("researcher"),
    ):
        with pytest.raises(UnsafePathError) as err:
            operation()
        assert "\n" not in str(err.value) and "symlink" in str(err.value)
    assert path.is_symlink()
    if dangling:
        assert not target.exists()
    else:
        assert target.read_text() == "[]"


def test_symlink_at_a_predictable_temp_path(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    target = tmp_path / "victim"
    target.write_text("precious")
    tokens = iter(["aaaaaaaa", "bbbbbbbb", "cccccccc"])
    monkeypatch.setattr(files_module.secrets, "token_hex", lambda n: next(tokens))
    trap = path.parent / f".researcher.json.tmp-{os.getpid()}-aaaaaaaa"
    trap.symlink_to(target)
    box.send("researcher", msg("safe"))
    assert target.read_text() == "precious"
    assert trap.is_symlink()
    assert [m.text for m in box.read("researcher")] == ["safe"]


def test_every_temp_path_trapped(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    box.send("researcher", msg("before"))
    target = tmp_path / "victim"
    target.write_text("precious")
    monkeypatch.setattr(files_module.secrets, "token_hex", lambda n: "aaaaaaaa")
    (path.parent / f".researcher.json.tmp-{os.getpid()}-aaaaaaaa").symlink_to(target)
    with pytest.raises(UnsafePathError):
        box.send("researcher", msg("after"))
    assert target.read_text() == "precious"
    assert [m.text for m in box.read("researcher")] == ["before"]


def test_symlinked_directories_outside_the_home(home: Home, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    inboxes = home.layout.inboxes_dir(TEAM)
    inboxes.rmdir()
    inboxes.symlink_to(outside)
    with pytest.raises(UnsafePathError):
        home.mailbox(TEAM).send("researcher", msg())
    with pytest.raises(UnsafePathError):
        home.mailbox(TEAM).read("researcher")
    assert os.listdir(outside) == []
    (home.root / "teams" / "evil").symlink_to(outside)
    (home.root / "tasks" / "evil").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        home.teams.get("evil")
    with pytest.raises(UnsafePathError):
        home.tasks("evil")
    assert os.listdir(outside) == []


@pytest.mark.parametrize("swapped", ["inboxes", "team"])
def test_a_folder_swapped_for_a_symlink_after_use_is_refused(
    home: Home, tmp_path: Path, swapped: str
) -> None:
    """An inbox already used (its folder checked once) is checked again on every use: the
    inbox folder, or the team folder above it, moved away and replaced by a symlink that
    leads out of the home is refused, and nothing is written out there."""
    box = home.mailbox(TEAM)
    box.send("researcher", msg("before"))
    assert [m.text for m in box.read("researcher")] == ["before"]
    folder = home.layout.inboxes_dir(TEAM)
    if swapped == "team":
        folder = folder.parent
    outside = tmp_path / "elsewhere"
    folder.rename(outside)  # the same directory, now outside the home
    folder.symlink_to(outside)
    before = sorted(p.name for p in outside.rglob("*"))
    for operation in (
        lambda: box.send("researcher", msg("after")),
        lambda: box.read("researcher"),
        lambda: box.mark_read("researcher", 0),
    ):
        with pytest.raises(UnsafePathError):
            operation()
    assert sorted(p.name for p in outside.rglob("*")) == before


def test_symlink_inside_the_home_is_allowed(home: Home) -> None:
    """A symlink that stays inside the root is not an escape (e.g. a renamed team)."""
    (home.root / "teams" / "alias").symlink_to(home.root / "teams" / TEAM)
    assert home.teams.get("alias") is not None


# ----------------------------------------------------------------------------- dead lock holders


def _hold_lock_then_hang(root: str, path: str, ready: Any) -> None:
    home = Home(root)
    with home.lock(Path(path)):
        ready.set()
        time.sleep(60)


def test_flock_held_by_a_killed_process(home: Home) -> None:
    box = home.mailbox(TEAM)
    box.send("researcher", msg("first"))
    ready = FORK.Event()
    holder = FORK.Process(
        target=_hold_lock_then_hang, args=(str(home.root), str(box.path("researcher")), ready)
    )
    holder.start()
    try:
        assert ready.wait(10)
        quick = Home(home.root, lock_timeout=0.2)
        with pytest.raises(LockTimeoutError) as err:
            quick.mailbox(TEAM).send("researcher", msg("blocked"))
        assert "\n" not in str(err.value) and "researcher.json.lock" in str(err.value)
        with pytest.raises(LockTimeoutError):
            quick.mailbox(TEAM).mark_all_read("researcher")  # an error, never "empty"
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.join()
    started = time.monotonic()
    Home(home.root, lock_timeout=5).mailbox(TEAM).send("researcher", msg("second"))
    assert time.monotonic() - started < 2
    assert [m.text for m in box.read("researcher")] == ["first", "second"]


def test_stale_mkdir_lock_is_reclaimed(tmp_path: Path) -> None:
    home = Home(tmp_path / "claude", lock_style="mkdir", lock_timeout=5)
    home.teams.create(TEAM)
    home.teams.add_member(TEAM, TeamMember(agent_id="", name="researcher"))
    box = home.mailbox(TEAM)
    box.send("researcher", msg("first"))
    lock_dir = box.path("researcher").with_name("researcher.json.lock")
    lock_dir.mkdir()  # left behind by a Claude Code process that died
    old = time.time() - 60
    os.utime(lock_dir, (old, old))
    started = time.monotonic()
    box.send("researcher", msg("second"))
    assert time.monotonic() - started < 2
    assert [m.text for m in box.read("researcher")] == ["first", "second"]
    assert not lock_dir.exists()


def test_live_mkdir_lock_times_out_without_damage(tmp_path: Path) -> None:
    home = Home(tmp_path / "claude", lock_style="mkdir", lock_timeout=0.3)
    home.teams.create(TEAM)
    home.teams.add_member(TEAM, TeamMember(agent_id="", name="researcher"))
    box = home.mailbox(TEAM)
    box.send("researcher", msg("first"))
    before = box.path("researcher").read_bytes()
    lock_dir = box.path("researcher").with_name("researcher.json.lock")
    lock_dir.mkdir()  # fresh: its holder is alive
    with pytest.raises(LockTimeoutError):
        box.send("researcher", msg("second"))
    assert box.path("researcher").read_bytes() == before
    assert lock_dir.is_dir()


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_inbox_path_that_is_not_a_file(home: Home, kind: str) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    if kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)
    for operation in (
        lambda: box.read("researcher"),
        lambda: box.send("researcher", msg()),
        lambda: box.mark_all_read("researcher"),
    ):
        with pytest.raises(UnsafePathError, match="not a regular file"):
            operation()  # an error, not a hang on the FIFO or a crash
    assert path.is_dir() if kind == "directory" else path.is_fifo()


def test_symlink_at_the_lock_path(home: Home, tmp_path: Path) -> None:
    box = home.mailbox(TEAM)
    box.send("researcher", msg("before"))
    target = tmp_path / "victim"
    target.write_text("precious")
    lock = box.path("researcher").with_name("researcher.json.lock")
    lock.unlink()
    lock.symlink_to(target)
    with pytest.raises(TeamdeckError) as raised:
        box.send("researcher", msg("after"))
    assert "researcher.json.lock" in str(raised.value) and "\n" not in str(raised.value)
    assert target.read_text() == "precious"
    assert [m.text for m in box.read("researcher")] == ["before"]


def test_a_file_read_whole_whatever_its_reported_size(tmp_path: Path) -> None:
    """``read_bytes`` reads one byte past the size it was told, and on to the end when there
    is more: a file that grew after it looked (here, one that reports no size at all, as
    the files of /proc do) is read whole; an empty one is empty."""
    from app.core.files import read_bytes

    status = Path("/proc/self/status")
    if not status.is_file() or status.stat().st_size:
        pytest.skip("no /proc")
    text = read_bytes(status)
    assert text is not None and b"\nPid:" in text and text.endswith(b"\n")
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert read_bytes(empty) == b""
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 200_000)
    assert read_bytes(big) == b"x" * 200_000
    assert read_bytes(tmp_path / "missing.json") is None

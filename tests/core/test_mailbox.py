"""Inboxes: append, read, unread, mark read, recipients, broadcast, the append fast path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import app.core.files as files_module
import app.core.inbox_known as inbox_known
import app.core.mailbox as mailbox_module
from app.core import (
    CorruptFileError,
    Home,
    InboxChanged,
    InboxMessage,
    InboxRead,
    NotFoundError,
    TeamMember,
    UnknownRecipientError,
)
from app.core.files import dumps

TEAM = "my-team"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create("My Team")
    for name in ("researcher", "tester"):
        home.teams.add_member(TEAM, TeamMember(agent_id="", name=name))
    return home


def msg(text: str, sender: str = "team-lead", **fields: object) -> InboxMessage:
    return InboxMessage(sender=sender, text=text, **fields)  # type: ignore[arg-type]


def inboxes(home: Home) -> list[str]:
    return sorted(os.listdir(home.layout.inboxes_dir(TEAM)))


def test_send_read_unread_mark_read(home: Home) -> None:
    box = home.mailbox(TEAM)
    assert box.read("researcher") == []
    assert box.unread("researcher") == []
    for i in range(4):
        assert box.send("researcher", msg(f"m{i}", summary=f"s{i}", color="blue")) == "researcher"
    messages = box.read("researcher")
    assert [m.text for m in messages] == ["m0", "m1", "m2", "m3"]
    assert all(m.sender == "team-lead" and not m.read for m in messages)
    assert messages[1].summary == "s1" and messages[1].color == "blue"
    assert box.mark_read("researcher", 1) == 1
    assert box.mark_read("researcher", 1) == 0  # already read
    assert [i for i, _ in box.unread("researcher")] == [0, 2, 3]
    assert box.mark_read("researcher", [0, 3, 99, -1]) == 2  # out of range is ignored
    assert [i for i, _ in box.unread("researcher")] == [2]
    assert box.mark_all_read("researcher") == 1
    assert box.unread("researcher") == []
    assert box.mark_all_read("researcher") == 0
    assert box.count("researcher") == 4
    assert box.mark_all_read("tester") == 0  # no inbox: nothing to do, nothing created
    assert "tester.json" not in inboxes(home)


def test_file_format_is_claude_codes(home: Home) -> None:
    box = home.mailbox(TEAM)
    box.send("researcher", msg("hello", summary="greeting", color="cyan"))
    box.send("researcher", msg('ünïcödé ✓ "quoted"\nnew line'))
    raw = box.path("researcher").read_text("utf-8")
    data = json.loads(raw)
    assert raw == dumps(data)  # JSON.stringify(x, null, 2): two spaces, no trailing newline
    assert list(data[0]) == ["from", "text", "summary", "timestamp", "color", "read"]
    assert list(data[1]) == ["from", "text", "timestamp", "read"]
    assert "ünïcödé ✓" in raw  # not \\u-escaped, like JavaScript
    box.mark_read("researcher", 0)
    assert box.path("researcher").read_text("utf-8") == dumps([{**data[0], "read": True}, data[1]])


def test_mark_read_leaves_the_file_alone_when_nothing_changes(home: Home) -> None:
    box = home.mailbox(TEAM)
    box.send("researcher", msg("a"))
    box.mark_all_read("researcher")
    before = os.stat(box.path("researcher"))
    assert box.mark_all_read("researcher") == 0
    after = os.stat(box.path("researcher"))
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


@pytest.mark.parametrize(
    "address", ["researcher", "Researcher", " researcher ", "researcher@my-team"]
)
def test_recipient_forms(home: Home, address: str) -> None:
    assert home.mailbox(TEAM).send(address, msg("hi")) == "researcher"
    assert inboxes(home) == ["researcher.json", "researcher.json.lock"]


def test_lead_and_user_are_always_addressable(home: Home) -> None:
    box = home.mailbox(TEAM)
    assert box.send("team-lead", msg("to lead", sender="researcher")) == "team-lead"
    assert box.send("user", msg("to user", sender="team-lead")) == "user"
    assert box.send("team-lead@my-team", msg("again", sender="tester")) == "team-lead"
    assert [m.text for m in box.read("team-lead")] == ["to lead", "again"]


@pytest.mark.parametrize(
    "address", ["reseacher", "nobody", "", "   ", "@my-team", "researcher@other-team"]
)
def test_unknown_recipient_creates_no_inbox(home: Home, address: str) -> None:
    before = inboxes(home)
    with pytest.raises(UnknownRecipientError) as err:
        home.mailbox(TEAM).send(address, msg("lost?"))
    assert "\n" not in str(err.value)
    assert inboxes(home) == before == []


def test_unknown_recipient_lists_members(home: Home) -> None:
    with pytest.raises(UnknownRecipientError, match="researcher, tester"):
        home.mailbox(TEAM).send("reseacher", msg("typo"))


def test_send_to_a_missing_team(home: Home) -> None:
    with pytest.raises(NotFoundError):
        home.mailbox("ghost-team").send("researcher", msg("x"))
    assert not (home.root / "teams" / "ghost-team").exists()


def test_broadcast(home: Home) -> None:
    box = home.mailbox(TEAM)
    recipients = box.broadcast(msg("all hands", sender="Researcher", summary="sync"))
    assert recipients == ["team-lead", "tester"]
    for name in recipients:
        [got] = box.read(name)
        assert (got.sender, got.text, got.summary) == ("Researcher", "all hands", "sync")
    assert box.read("researcher") == []
    assert box.broadcast(msg("from lead"), exclude="tester") == ["researcher"]


def test_events_are_emitted(home: Home) -> None:
    seen: list[object] = []
    home.subscribe(seen.append)
    box = home.mailbox(TEAM)
    box.send("researcher", msg("a"))
    box.mark_all_read("researcher")
    box.mark_all_read("researcher")  # no change, no event
    # Marking read is its own kind of event: no news for whoever waits for mail.
    assert seen == [InboxChanged(TEAM, "researcher"), InboxRead(TEAM, "researcher")]
    # Each carries the file identity it wrote (the mark-read also the one it replaced).
    sent, read = seen
    assert isinstance(sent, InboxChanged) and isinstance(read, InboxRead)
    st = os.stat(box.path("researcher"))
    assert read.written == (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    assert read.prior == sent.written != read.written


def test_agents_lists_inbox_files(home: Home) -> None:
    box = home.mailbox(TEAM)
    box.send("tester", msg("a"))
    box.send("researcher", msg("b"))
    assert box.agents() == ["researcher", "tester"]


def test_append_to_files_other_programs_wrote(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    entry = {"from": "x", "text": "y", "timestamp": "2025-01-15T10:30:00.000Z", "read": True}
    for existing in (
        "[]",
        "[ ]",
        "  [\n]\n",
        json.dumps([entry]),  # compact
        json.dumps([entry], indent=4) + "\n\n",
        "\n" + dumps([entry, entry]),
    ):
        path.write_text(existing)
        box.append("researcher", msg("new"))
        data = json.loads(path.read_text())
        assert data[-1]["text"] == "new"
        assert data[:-1] == json.loads(existing)


def test_append_is_byte_identical_to_a_full_rewrite(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    entries = [
        {"from": "a", "text": "one", "timestamp": "t", "read": False, "future": 2},
        {"from": "b", "text": "two", "timestamp": "t", "read": True, "nested": {"k": [1, {}]}},
    ]
    path.write_text(dumps(entries))
    new = msg("three", summary="s")
    box.append("researcher", new)
    assert path.read_text() == dumps([*entries, new.to_json_dict()])


# ----------------------------------------------------------------------------- the fast path
# An append skips re-parsing what this process already validated; anything another program
# changed must still be caught.


@pytest.fixture
def box_with_history(home: Home):  # type: ignore[no-untyped-def]
    box = home.mailbox(TEAM)
    for i in range(3):
        box.append("researcher", msg(f"m{i}"))
    return box


def test_fast_path_accepts_a_valid_extension_by_another_writer(box_with_history) -> None:  # type: ignore[no-untyped-def]
    box = box_with_history
    path = box.path("researcher")
    raw = path.read_bytes()
    other = {"from": "tester", "text": "from another process", "timestamp": "t", "read": False}
    extended = raw[:-2] + b",\n" + dumps([other])[2:-2].encode() + b"\n]"
    path.write_bytes(extended)
    box.append("researcher", msg("m3"))
    assert [m.text for m in box.read("researcher")] == [
        "m0",
        "m1",
        "m2",
        "from another process",
        "m3",
    ]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda raw: raw[:-2],  # truncated: no closing bracket
        lambda raw: raw[:-2] + b",\n]",  # trailing comma
        lambda raw: raw[:-2] + b",\n  5\n]",  # a non-object entry
        lambda raw: raw[:-2] + b',\n  {"a": \n]',  # half an entry
        lambda raw: raw + b"\n]",  # junk after the array
        lambda raw: raw[:-2] + b"\n}",  # wrong closer
        lambda raw: raw[:-2] + b',\n  {"a": NaN}\n]',  # not JSON.parse-able
        lambda raw: raw[:10] + b"]",  # truncated mid-way, then "fixed" by a bad editor
        lambda raw: raw.replace(b'"m1"', b'"m1'),  # damage inside the known part
        lambda raw: b"",
    ],
)
def test_fast_path_still_catches_damage(box_with_history, tamper) -> None:  # type: ignore[no-untyped-def]
    box = box_with_history
    path = box.path("researcher")
    damaged = tamper(path.read_bytes())
    path.write_bytes(damaged)
    with pytest.raises(CorruptFileError):
        box.append("researcher", msg("must not be written"))
    assert path.read_bytes() == damaged  # left intact for a human to repair


def test_fast_path_survives_a_rewrite_by_mark_read(box_with_history) -> None:  # type: ignore[no-untyped-def]
    box = box_with_history
    box.mark_read("researcher", 1)
    box.append("researcher", msg("m3"))
    assert [(m.text, m.read) for m in box.read("researcher")] == [
        ("m0", False),
        ("m1", True),
        ("m2", False),
        ("m3", False),
    ]


def test_cache_is_bounded(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inbox_known, "_KNOWN_MAX", 2)
    box = home.mailbox(TEAM)
    for name in ("researcher", "tester", "team-lead", "user"):
        box.append(name, msg("x"))
    known = [k for k in inbox_known._known if k.startswith(str(home.root))]
    assert len(known) <= 2
    for name in ("researcher", "tester", "team-lead", "user"):
        box.append(name, msg("y"))
        assert [m.text for m in box.read(name)] == ["x", "y"]


def test_cache_byte_budget(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inbox_known, "_KNOWN_BUDGET", 600)
    box = home.mailbox(TEAM)
    for i in range(6):  # the inbox outgrows the budget: appends go on, validated in full
        box.append("researcher", msg(f"m{i}"))
        box.append("tester", msg(f"t{i}"))
    held = sum(k.size for k in inbox_known._known.values())
    assert held <= 600
    assert [m.text for m in box.read("researcher")] == [f"m{i}" for i in range(6)]
    path = box.path("researcher")
    path.write_bytes(path.read_bytes()[:-3])  # damage is still caught
    with pytest.raises(CorruptFileError):
        box.append("researcher", msg("no"))


def test_append_after_the_team_was_deleted_recreates_nothing(tmp_path: Path) -> None:
    from app.core import Home, InboxMessage, NotFoundError, TeamMember

    home = Home(tmp_path / "home")
    home.teams.create("gone")
    home.teams.add_member("gone", TeamMember(agent_id="", name="researcher"))
    box = home.mailbox("gone")
    box.append("researcher", InboxMessage(sender="team-lead", text="before"))
    home.teams.delete("gone", force=True)
    with pytest.raises(NotFoundError, match="does not exist"):
        box.append("researcher", InboxMessage(sender="team-lead", text="after"))
    assert not (tmp_path / "home" / "teams" / "gone").exists()


# ----------------------------------------------------------------------------- the read cache


def test_an_unchanged_inbox_is_parsed_once_and_any_change_is_read_again(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Readers re-read an inbox at every change to it; one that has not changed since the last
    parse comes from memory. A write by anyone -- this process, another one, an in-place
    editor -- is read again."""
    parses: list[int] = []
    original = mailbox_module.parse_inbox

    def counting(data: bytes) -> list[InboxMessage]:
        parses.append(len(data))
        return original(data)

    monkeypatch.setattr(mailbox_module, "parse_inbox", counting)
    box = home.mailbox(TEAM)
    box.send("researcher", msg("one"))
    assert [m.text for m in box.read("researcher")] == ["one"]
    assert [m.text for _, m in box.unread("researcher")] == ["one"]
    assert box.count("researcher") == 1
    assert len(parses) == 1

    box.send("researcher", msg("two"))  # this process
    assert [m.text for m in box.read("researcher")] == ["one", "two"]
    path = box.path("researcher")
    entries = json.loads(path.read_text())
    entries.append({"from": "tester", "text": "three", "timestamp": "t", "read": False})
    tmp = path.with_name("other-process.tmp")
    tmp.write_text(dumps(entries))
    os.replace(tmp, path)  # another process's atomic write
    assert [m.text for m in box.read("researcher")] == ["one", "two", "three"]
    entries[0]["read"] = True
    path.write_text(dumps(entries))  # in place, as an editor would
    assert [m.text for _, m in box.unread("researcher")] == ["two", "three"]
    assert len(parses) == 4


def test_messages_handed_out_are_copies(home: Home) -> None:
    box = home.mailbox(TEAM)
    box.send("researcher", msg("one"))
    first = box.read("researcher")
    first[0].text = "changed by a caller"
    first[0].read = True
    again = box.read("researcher")
    assert (again[0].text, again[0].read) == ("one", False)
    assert [m.text for _, m in box.unread("researcher")] == ["one"]


def test_a_corrupt_inbox_is_not_served_from_memory(home: Home) -> None:
    """A file that was fine and is now broken raises, as it did before anything was cached."""
    box = home.mailbox(TEAM)
    box.send("researcher", msg("one"))
    assert len(box.read("researcher")) == 1
    box.path("researcher").write_text('[{"from": "x", "text": ')
    with pytest.raises(CorruptFileError):
        box.read("researcher")


@pytest.mark.parametrize("durable", [True, False])
def test_mark_read_in_place_is_as_durable_as_a_plain_replace(
    home: Home, monkeypatch: pytest.MonkeyPatch, durable: bool
) -> None:
    """An in-place mark writes and syncs the new version's data, renames it over the inbox,
    then fsyncs the folder -- the least a crash-safe replace does -- and returns only after
    that; what it remembers of the version it wrote (taken between the rename and the
    folder's fsync) is that file: the next append and read need no second look at it.
    ``durable=False`` syncs nothing and is still atomic."""
    box = home.mailbox(TEAM)
    for i in range(3):
        box.append("researcher", msg(f"m{i}"))
    path = box.path("researcher")
    assert [i for i, _ in box.unread("researcher")] == [0, 1, 2]
    calls: list[str] = []
    real = {name: getattr(os, name) for name in ("fdatasync", "fsync", "replace", "stat")}

    def spy(name: str) -> object:
        def call(*args: object, **kwargs: object) -> object:
            if name != "stat" or args[0] == str(path):
                calls.append(name)
            return real[name](*args, **kwargs)

        return call

    for name in real:
        monkeypatch.setattr(os, name, spy(name))
    datasync = files_module._datasync
    real["fdatasync"] = datasync
    monkeypatch.setattr(files_module, "_datasync", spy("fdatasync"))  # bound at import
    monkeypatch.setattr(mailbox_module.inbox_cache, "load", None)  # no second parse allowed
    assert box.mark_read("researcher", 1, durable=durable) == 1
    synced = ["fdatasync"] if durable else []
    folder = ["fsync"] if durable else []
    assert calls == ["stat", *synced, "replace", "stat", *folder]  # stat: identity before, after
    monkeypatch.undo()
    assert [m.read for m in box.read("researcher")] == [False, True, False]
    assert inbox_known._known[str(path)].key == inbox_known.file_key(os.stat(path))

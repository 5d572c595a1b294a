"""The inbox fast paths give what the full parse and re-encode give.

Reads decode with a fast parser, check field types in bulk and build messages lazily; a read
flag is flipped in the bytes of a file this process decoded. Each is checked here against
the slow path's result: files changed by someone else between reads, a bad entry in the
middle, unknown fields and key order, layouts other than ``JSON.stringify``'s, and files
written by Node's own ``JSON.stringify``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.core import CorruptFileError, Home, InboxMessage, TeamMember, inbox_cache
from app.core.files import dumps_array, load_json

TEAM = "my-team"
AGENT = "researcher"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create("My Team")
    home.teams.add_member(TEAM, TeamMember(agent_id="", name=AGENT))
    return home


@pytest.fixture
def in_place(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per ``mark_read`` on a file this process decoded: whether it was edited in place."""
    seen: list[bool] = []
    original = inbox_cache.marked_read

    def spy(known: inbox_cache.Parsed, indices: set[int] | None) -> Any:
        done = original(known, indices)
        seen.append(done is not None)
        return done

    monkeypatch.setattr(inbox_cache, "marked_read", spy)
    return seen


def entry(i: int, read: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "from": "team-lead",
        "text": f"message {i}",
        "summary": "s",
        "timestamp": f"2025-01-15T10:30:{i % 60:02d}.000Z",
        "color": "cyan",
        "read": read,
        **extra,
    }


def write_elsewhere(path: Path, data: bytes) -> None:
    """Another process's atomic write."""
    tmp = path.with_name("elsewhere.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def flipped(entries: list[dict[str, Any]], *indices: int) -> bytes:
    """What the full parse and re-encode leaves after marking ``indices`` read."""
    out = [dict(e) for e in entries]
    for i in indices:
        out[i]["read"] = True
    return dumps_array(out).encode()


# ----------------------------------------------------------------------------- reads


def test_a_file_changed_by_another_process_between_reads_is_read_again(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i, read=i > 0) for i in range(5)]
    path.write_bytes(dumps_array(entries).encode())
    first = box.read(AGENT)
    assert [m.text for m in first] == [f"message {i}" for i in range(5)]
    assert [i for i, _ in box.unread(AGENT)] == [0]

    write_elsewhere(path, dumps_array([*entries, entry(5, read=False)]).encode())
    assert [i for i, _ in box.unread(AGENT)] == [0, 5]
    assert box.count(AGENT) == 6
    assert len(first) == 5  # what a caller already holds does not change under it

    entries[3]["text"] = "message X"  # same size, rewritten in place (an editor, Node)
    path.write_bytes(dumps_array(entries).encode())
    assert [m.text for m in box.read(AGENT)][3] == "message X"


def test_the_decoded_inboxes_kept_stay_within_their_bounds(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-process cache of decoded inboxes keeps its byte total as versions come and go
    (reads, in-place marks, a file grown past the budget, one forgotten): it never holds
    more than its bounds, and what it hands out is always the file's current version."""
    home.teams.add_member(TEAM, TeamMember(agent_id="", name="tester"))
    home.teams.add_member(TEAM, TeamMember(agent_id="", name="lead"))
    box = home.mailbox(TEAM)
    names = [AGENT, "tester", "lead"]
    for name in names:
        box.path(name).write_bytes(dumps_array([entry(i, read=False) for i in range(4)]).encode())
    size = box.path(AGENT).stat().st_size
    cache = inbox_cache.ParsedInboxes(max_inboxes=2, max_bytes=2 * size + 10)
    monkeypatch.setattr(inbox_cache, "parsed", cache)

    def held() -> int:
        sizes = [key[1] for key, _ in cache._entries.values()]
        assert cache._held == sum(sizes)
        assert len(sizes) <= 2 and sum(sizes) <= cache.max_bytes
        return len(sizes)

    for round_ in range(3):
        for name in names:
            assert [i for i, _ in box.unread(name)] == list(range(round_, 4))
            assert box.mark_read(name, round_) == 1
            held()
    big = box.path("tester")
    big.write_bytes(dumps_array([entry(i, read=False) for i in range(40)]).encode())
    assert box.count("tester") == 40  # too big to keep: read, and its old version let go
    assert held() == 1
    assert box.mark_read(AGENT, 3) == 1  # written whole (not held any more): held again
    assert held() == 2
    cache.forget(str(box.path(AGENT)))
    assert held() == 1
    assert [m.read for m in box.read(AGENT)] == [True] * 4


def test_a_corrupt_entry_in_the_middle_is_one_error_naming_the_file(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i) for i in range(50)]
    entries[25]["text"] = ["not", "a", "string"]
    path.write_bytes(dumps_array(entries).encode())
    with pytest.raises(CorruptFileError) as err:
        box.read(AGENT)
    assert err.value.path == path
    assert "entry 25 field 'text'" in str(err.value)
    assert len(str(err.value).splitlines()) == 1

    broken = dumps_array([entry(i) for i in range(50)]).encode()
    middle = broken.index(b'"message 25"')
    data = broken[:middle] + b"'message 25'" + broken[middle + len(b'"message 25"') :]
    path.write_bytes(data)
    with pytest.raises(ValueError) as strict:
        load_json(data)
    with pytest.raises(CorruptFileError) as err:
        box.unread(AGENT)
    assert str(strict.value).splitlines()[0] in str(err.value)  # the strict loader's words


def test_entries_pydantic_would_coerce_read_as_before(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    odd = [
        entry(0),
        {**entry(1), "read": None},
        {**entry(2, read=False), "summary": None},
        {"text": "bare"},
        {"sender": "bob", "text": "by its Python name", "timestamp": "t", "read": False},
        {**entry(5), "read": 0},
    ]
    path.write_bytes(dumps_array(odd).encode())
    messages = box.read(AGENT)
    assert [m.read for m in messages] == [True, False, False, False, False, False]
    assert messages[4].sender == "bob"
    assert [i for i, _ in box.unread(AGENT)] == [1, 2, 3, 4, 5]
    stamp = messages[3].timestamp  # a missing timestamp defaults once, not at every look
    assert box.read(AGENT)[3].timestamp == stamp
    odd[4]["sender"] = 5
    path.write_bytes(dumps_array(odd).encode())
    with pytest.raises(CorruptFileError, match="entry 4 field 'sender'"):
        box.read(AGENT)


def test_lone_surrogates_read_and_nan_is_refused(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    path.write_bytes(b'[{"from": "a", "text": "\\ud800", "timestamp": "t", "read": false}]')
    assert box.read(AGENT)[0].text == "\ud800"
    path.write_bytes(b'[{"from": "a", "text": "b", "timestamp": "t", "read": false, "x": NaN}]')
    for operation in (lambda: box.read(AGENT), lambda: box.send(AGENT, InboxMessage(text="x"))):
        with pytest.raises(CorruptFileError):
            operation()


def test_the_view_behaves_as_a_list_and_its_messages_are_the_callers(home: Home) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i, read=False, future={"x": [1]}) for i in range(4)]
    path.write_bytes(dumps_array(entries).encode())
    view = box.read(AGENT)
    as_list = [InboxMessage.model_validate(e) for e in entries]
    assert view == as_list and as_list == view and view == box.read(AGENT)
    assert view != as_list[:3] and view[1:3] == as_list[1:3] and view[-1] == as_list[-1]
    assert [m.text for m in reversed(view)] == [f"message {i}" for i in (3, 2, 1, 0)]
    with pytest.raises(IndexError):
        view[4]
    view[0].text = "changed"
    view[0].__pydantic_extra__["future"]["x"].append(2)  # type: ignore[index]
    _, unread = box.unread(AGENT)[0]
    unread.__pydantic_extra__["future"]["x"].append(3)  # type: ignore[index]
    assert view[0].text == "changed"  # the view keeps what it built
    again = box.read(AGENT)[0]
    assert (again.text, again.extra_fields()) == ("message 0", {"future": {"x": [1]}})


# ----------------------------------------------------------------------------- mark_read


@pytest.mark.parametrize("index", [0, 1, 17, 38, 39])
def test_mark_read_in_place_equals_the_full_rewrite(
    home: Home, index: int, in_place: list[bool]
) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i, read=i % 3 == 0) for i in range(40)]
    entries[17] = {"msgV": 2, **entries[17], "meta": {"nested": [{"a": 1}], "e": {}}}
    path.write_bytes(dumps_array(entries).encode())
    assert box.unread(AGENT)
    assert box.mark_read(AGENT, index) == (0 if index % 3 == 0 else 1)
    expected = flipped(entries, index)
    assert path.read_bytes() == expected
    assert [m.read for m in box.read(AGENT)] == [e["read"] for e in json.loads(expected)]
    assert box.read(AGENT)[17].extra_fields() == {"msgV": 2, "meta": entries[17]["meta"]}
    assert in_place == [True]


def test_marks_one_at_a_time_in_place_read_as_a_fresh_parse(
    home: Home, in_place: list[bool]
) -> None:
    """Each in-place mark builds on the last one's version (its entries shared with the
    version before, not copied): what it reads, and what a reader holding an older version
    holds, are what a fresh parse of each file gives."""
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i, read=i < 30) for i in range(40)]
    entries[35] = {**entries[35], "read": None}  # pydantic's: unread, built as a model
    path.write_bytes(dumps_array(entries).encode())
    held = box.read(AGENT)
    expected = [e["read"] is True for e in entries]
    for index in (39, 31, 35, 39, 0):
        box.mark_read(AGENT, index)
        expected[index] = True
        assert [i for i, _ in box.unread(AGENT)] == [i for i, r in enumerate(expected) if not r]
        mine = box.read(AGENT)
        assert [m.read for m in mine] == expected
        assert mine[-1] == mine[39] and mine[-40] == mine[0]
        assert mine[30:32] == [mine[30], mine[31]]
        fresh = inbox_cache.load(path.read_bytes())  # what a process that never saw it reads
        assert [fresh.message(i) for i in range(40)] == mine
        assert fresh.unread() == [i for i, _ in box.unread(AGENT)]
    assert [m.read for m in held] == [e["read"] is True for e in entries]  # unchanged
    assert in_place == [True] * 5


def test_mark_all_read_in_place_then_append_keep_key_order(
    home: Home, in_place: list[bool]
) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [{"read": False, "type": "message", **entry(i, read=False)} for i in range(3)]
    entries[1] = {"text": "first", "from": "tester", "read": False, "x": None}  # key order
    path.write_bytes(dumps_array(entries).encode())
    box.unread(AGENT)
    assert box.mark_all_read(AGENT) == 3
    assert path.read_bytes() == flipped(entries, 0, 1, 2)
    box.append(AGENT, InboxMessage(sender="tester", text="later"))
    written = json.loads(path.read_bytes())
    assert [list(e) for e in written[:3]] == [list(e) for e in entries]
    assert box.count(AGENT) == 4  # decoded again after the append
    assert box.mark_read(AGENT, [3, 99, -1]) == 1
    assert [e["read"] for e in json.loads(path.read_bytes())] == [True] * 4
    assert in_place == [True, True]


@pytest.mark.parametrize(
    "layout",
    ["compact", "separator inside an entry", "trailing newline", "four spaces"],
)
def test_mark_read_on_another_layout_rewrites_the_whole_file(
    home: Home, layout: str, in_place: list[bool]
) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i, read=False) for i in range(6)]
    if layout == "compact":
        data = json.dumps(entries).encode()
    elif layout == "separator inside an entry":
        # Another program's layout: text shaped like a boundary inside the last entry.
        entries[5] = {"z": [{}, {"q": 1}], **entries[5]}
        canonical = '"z": [\n      {},\n      {\n        "q": 1\n      }\n    ]'
        weird = '"z": [{\n  },\n  {\n"q": 1}]'
        assert canonical in dumps_array(entries)
        data = dumps_array(entries).replace(canonical, weird).encode()
    elif layout == "trailing newline":
        data = dumps_array(entries).encode() + b"\n"
    else:
        data = json.dumps(entries, indent=4).encode()
    path.write_bytes(data)
    assert json.loads(data) == entries
    assert len(box.unread(AGENT)) == 6
    assert box.mark_read(AGENT, 5) == 1
    assert path.read_bytes() == flipped(entries, 5)
    assert in_place == [False]


def test_mark_read_after_another_process_changed_the_file_reads_it_again(
    home: Home, in_place: list[bool]
) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i, read=False) for i in range(5)]
    path.write_bytes(dumps_array(entries).encode())
    assert len(box.unread(AGENT)) == 5
    entries.insert(0, entry(99, read=True))  # the indices shift under the reader's feet
    write_elsewhere(path, dumps_array(entries).encode())
    assert box.mark_read(AGENT, 0) == 0  # index 0 is now the read message: nothing flips
    assert box.mark_read(AGENT, 1) == 1
    assert path.read_bytes() == flipped(entries, 1)
    assert in_place == []  # never tried on a file this process had not decoded


# ----------------------------------------------------------------------------- Node

STRINGIFY_JS = """
const fs = require("fs");
const [inbox, op] = process.argv.slice(1);
const messages = op === "init" ? [] : JSON.parse(fs.readFileSync(inbox, "utf-8"));
if (op === "init") {
  for (let i = 0; i < 30; i++)
    messages.push({ from: "team-lead", text: `m${i} \\u00e9\\u{1F600} "q"\\n`, summary: "s",
                    timestamp: new Date(0).toISOString(), color: "blue", read: i < 25 });
} else if (op === "push") {
  messages.push({ from: "node", text: "pushed", timestamp: new Date(0).toISOString(),
                  read: false });
} else {
  for (const i of op.split(",")) messages[Number(i)].read = true;
}
const out = JSON.stringify(messages, null, 2);
if (op.includes(",") || /^[0-9]+$/.test(op)) process.stdout.write(out);
else fs.writeFileSync(inbox, out, "utf-8");
"""


def node(*args: str) -> str:
    binary = shutil.which("node")
    if binary is None:
        pytest.skip("node is needed to compare with JSON.stringify")
    done = subprocess.run(
        [binary, "-e", STRINGIFY_JS, *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_mark_read_in_place_on_a_file_node_wrote_matches_node(
    home: Home, in_place: list[bool]
) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    node(str(path), "init")  # written in place, as Claude Code's writeToMailbox does
    assert [i for i, _ in box.unread(AGENT)] == [25, 26, 27, 28, 29]
    expected = node(str(path), "26,29")  # what Node would write after marking them read
    assert box.mark_read(AGENT, [26, 29]) == 2
    assert path.read_bytes() == expected.encode()
    assert in_place == [True]


def test_node_rewriting_the_file_after_a_read_falls_back_safely(
    home: Home, in_place: list[bool]
) -> None:
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    node(str(path), "init")
    assert len(box.unread(AGENT)) == 5
    node(str(path), "push")  # Node rewrites the same inode in place
    expected = node(str(path), "27,30")
    assert box.mark_read(AGENT, [27, 30]) == 2
    assert path.read_bytes() == expected.encode()
    assert [m.text for _, m in box.unread(AGENT)][-1] != "pushed"
    assert in_place == []


@pytest.mark.parametrize("index", range(6))
def test_mark_read_beside_boundary_lookalikes_equals_the_full_rewrite(
    home: Home, index: int
) -> None:
    """Another program's layout with text shaped like a boundary between entries inside two
    entries, and two real boundaries laid out on one line: marking any one message read
    gives exactly what re-encoding the whole file gives (in place or not)."""
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    entries = [entry(i, read=False) for i in range(6)]
    for k in (2, 5):
        entries[k] = {"z": [{}, {"q": 1}], **entries[k]}
    canonical = '"z": [\n      {},\n      {\n        "q": 1\n      }\n    ]'
    text = dumps_array(entries).replace(canonical, '"z": [{\n  },\n  {\n"q": 1}]')
    text = text.replace("\n  },\n  {\n", "},{\n", 1)  # the first real boundary, on one line
    path.write_bytes(text.encode())
    assert json.loads(path.read_bytes()) == entries
    assert len(box.unread(AGENT)) == 6
    assert box.mark_read(AGENT, index) == 1
    assert json.loads(path.read_bytes()) == json.loads(flipped(entries, index))
    assert [m.read for m in box.read(AGENT)] == [i == index for i in range(6)]

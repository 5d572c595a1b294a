"""Inboxes decoded at the speed of the JSON parser, and remembered by file identity.

The dashboard, the runtime and the lead each re-read the lead's inbox at every change to it,
and a long-lived inbox holds thousands of messages. Building a pydantic model per message on
every read cost several times the JSON parse itself, so a read here is:

* one parse with ``pydantic_core.from_json`` (faster than ``json.loads``; anything it refuses
  goes through the strict loader, :func:`app.core.files.load_json`, so an error reads exactly
  as it always did, and the two accept the same files);
* a bulk type check of every entry's known fields; only an entry that fails it (a ``null``, a
  value pydantic would coerce, a missing timestamp) is validated by ``InboxMessage`` there and
  then -- a bad entry is still one clear error naming the entry;
* nothing more: the entries stay plain dicts (unknown fields and key order as in the file) and
  :class:`MessageView` builds each ``InboxMessage`` when a caller first looks at it.

A reader that finds the file it decoded last time -- the same ``(inode, size, mtime_ns,
ctime_ns)`` before and after its read -- takes it from :data:`parsed` instead. Identity
stands for content as everywhere in the file layer: atomic writes give every version of a
file a new inode. What is held here is never changed: the views build fresh models (nested
values copied), so a caller may change what it was handed.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Sequence
from typing import Any, overload

from pydantic import ValidationError
from pydantic_core import from_json

from app.core.files import array_head_end, load_json
from app.core.inbox_entries import SHAPE, edited, read_flipped, replace_entries
from app.core.models import InboxMessage

FileKey = tuple[int, int, int, int]

MAX_INBOXES = 64
"""Inboxes remembered per process (the least recently parsed go first)..."""
MAX_BYTES = 32 * 1024 * 1024
"""...holding at most this many bytes of inbox files between them."""

_NOT_NULLABLE = ("from", "text", "timestamp", "read")
_NULLABLE = (str, type(None))


class Parsed:
    """One version of an inbox file: its bytes, its entries as decoded, and the models of the
    entries that needed pydantic (:func:`load`). Shared by every reader: never changed.

    A version made by editing another in place (:func:`marked_read`) holds the chunks it was
    written from -- slices of the older version's bytes and the edited entries -- and joins
    them only when its bytes are needed: a copy of a large file into new memory costs about
    as much as writing it."""

    __slots__ = ("_chunks", "_data", "_unread", "entries", "odd")

    def __init__(
        self,
        data: bytes | list[bytes | memoryview],
        entries: Sequence[dict[str, Any]],
        odd: dict[int, Any],
    ) -> None:
        self._data = data if isinstance(data, bytes) else None
        self._chunks = None if isinstance(data, bytes) else data
        self.entries = entries
        self.odd: dict[int, InboxMessage] = odd
        self._unread: list[int] | None = None

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = b"".join(self._chunks or ())
            self._chunks = None
        return self._data

    def parts(self) -> list[bytes | memoryview]:
        """The file's bytes, as chunks if not joined yet."""
        return self._chunks if self._chunks is not None else [self.data]

    def head(self) -> list[bytes | memoryview]:
        """The array's head (everything before its closing bracket) as chunks sharing memory
        with the bytes, for ``Mailbox``'s append cache."""
        *chunks, last = self.parts()
        return [*chunks, memoryview(last)[: array_head_end(last)]]

    def message(self, index: int) -> InboxMessage:
        """A new model of entry ``index`` (nothing in it shared with this record)."""
        model = self.odd.get(index)
        if model is not None:
            return model.model_copy(deep=True)
        entry = self.entries[index]
        for value in entry.values():
            if type(value) in (dict, list):
                entry = copy.deepcopy(entry)
                break
        return InboxMessage.model_validate(entry)

    def unread(self) -> list[int]:
        """Indices of the messages not read, in file order."""
        if self._unread is None:
            odd = self.odd
            self._unread = [
                i
                for i, e in enumerate(self.entries)
                if not (odd[i].read if i in odd else e.get("read", False))
            ]
        return self._unread


def decode_array(data: bytes) -> list[dict[str, Any]]:
    """The inbox as raw dicts (unknown fields and key order kept). ValueError if not an inbox:
    not JSON (the strict loader's message), not an array, or an entry not an object."""
    try:
        raw = from_json(data, allow_inf_nan=False)
    except ValueError:
        raw = load_json(data)  # raises what it always did; accepts what from_json cannot
    if not isinstance(raw, list):
        raise ValueError(f"expected a JSON array, found {_json_type(raw)}")
    if raw and set(map(type, raw)) != {dict}:
        for index, entry in enumerate(raw):
            if not isinstance(entry, dict):
                raise ValueError(f"entry {index} is not an object")
    return raw


def _maybe_nonfinite(data: bytes) -> bool:
    """Whether ``data`` may hold ``NaN`` or ``Infinity`` (a one-byte search first: ``memchr``
    is an order of magnitude faster than a search for the words)."""
    return (b"N" in data and b"NaN" in data) or (b"I" in data and b"Infinity" in data)


def check_array(data: bytes) -> None:
    """Check that ``data`` is an inbox (as :func:`decode_array`, the same errors) without
    building it -- for an append, which only extends the bytes. Anything the fast check
    refuses (or that may hold ``NaN``/``Infinity``, which it would accept) goes through
    :func:`decode_array`, which raises what it always did or accepts what the fast one cannot
    (a lone surrogate escape, as JavaScript writes)."""
    if not _maybe_nonfinite(data):
        try:
            SHAPE.validate_json(data)
            return
        except ValidationError:
            pass
    decode_array(data)


def _json_type(value: Any) -> str:
    names = {dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def load(data: bytes) -> Parsed:
    """Decode and validate an inbox file (see the module docstring). ValueError names the
    first bad entry and field."""
    entries = decode_array(data)
    unread: list[int] = []
    parsed = Parsed(data, entries, validate_entries(entries, unread))
    parsed._unread = unread  # noted on the way: a second pass over 100k entries is not free
    return parsed


def validate_entries(
    entries: list[dict[str, Any]], unread: list[int] | None = None
) -> dict[int, InboxMessage]:
    """The models of the entries that plain type checks cannot vouch for (each validated by
    pydantic); ValueError for the first that is not a valid message. ``unread``, if given,
    gets the indices of the messages not read, in order."""
    odd: dict[int, InboxMessage] = {}
    note = unread.append if unread is not None else None
    for index, entry in enumerate(entries):
        get = entry.get
        read = get("read", False)
        if (
            type(get("from", "")) is str
            and type(get("text", "")) is str
            and type(get("timestamp")) is str  # missing: its default is "now", made once
            and type(read) is bool
            and type(get("summary")) in _NULLABLE
            and type(get("color")) in _NULLABLE
            and "sender" not in entry  # a field's Python name: pydantic reads it as "from"
        ):
            if note is not None and not read:
                note(index)
            continue
        model = odd[index] = validate_entry(entry, index)
        if note is not None and not model.read:
            note(index)
    return odd


def validate_entry(entry: dict[str, Any], index: int) -> InboxMessage:
    """One entry through ``InboxMessage``, accepting what JavaScript would (``null`` for a field
    means "absent"). ValueError naming the entry and field."""
    if any(entry.get(k, 0) is None for k in _NOT_NULLABLE):
        entry = {k: v for k, v in entry.items() if not (v is None and k in _NOT_NULLABLE)}
    try:
        return InboxMessage.model_validate(copy.deepcopy(entry))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"entry {index} field {where!r}: {first['msg']}") from None


def marked_read(known: Parsed, indices: set[int] | None) -> tuple[int, Parsed] | None:
    """``known`` with the read flags of ``indices`` (``None``: all) set, edited in its bytes
    (:func:`replace_entries`): how many flipped, and the new version. ``None`` if the bytes
    are not laid out for that: the caller re-encodes the whole file."""
    entries = known.entries
    count = len(entries)
    if indices is None:
        targets = [i for i, e in enumerate(entries) if not e.get("read")]
    elif len(indices) == 1:  # the usual call (an agent takes one message): no list passes
        (index,) = indices
        if not 0 <= index < count:
            return 0, known
        entry = entries[index]
        read = entry.get("read")
        if read is False and index >= count // 2 and index not in known.odd:
            chunks = read_flipped(known.data, entries, index)
            if chunks is not None:
                after = Parsed(chunks, edited(entries, {index: {**entry, "read": True}}), known.odd)
                if known._unread is not None:
                    after._unread = [i for i in known._unread if i != index]
                return 1, after
        targets = [] if read else [index]
    else:
        targets = [i for i in sorted(indices) if 0 <= i < count and not entries[i].get("read")]
    if not targets:
        return 0, known
    edits = {i: {**entries[i], "read": True} for i in targets}
    chunks = replace_entries(known.data, entries, edits)
    if chunks is None:
        return None
    odd = known.odd  # shared unless an edited entry is among them (never changed either)
    if odd and not odd.keys().isdisjoint(edits):
        odd = dict(odd)
        for i, new in edits.items():
            if i in odd:
                odd[i] = validate_entry(new, i)
    after = Parsed(chunks, edited(entries, edits), odd)
    if known._unread is not None:  # the same, but for the flipped ones: no pass over them all
        after._unread = [i for i in known._unread if i not in edits]
    return len(targets), after


class MessageView(Sequence[InboxMessage]):
    """``Mailbox.read()``'s result: the messages in file order, each built on first access and
    then kept by this view (building a model for each of 100k messages up front costs far more
    than the parse). Read-only as a sequence; the messages are the caller's own to change.
    Compares equal to a list (or any view) of equal messages."""

    __slots__ = ("_built", "_parsed")

    def __init__(self, parsed: Parsed | None) -> None:
        self._parsed = parsed
        self._built: list[InboxMessage | None] = [None] * len(parsed.entries) if parsed else []

    def __len__(self) -> int:
        return len(self._built)

    @overload
    def __getitem__(self, index: int) -> InboxMessage: ...

    @overload
    def __getitem__(self, index: slice) -> list[InboxMessage]: ...

    def __getitem__(self, index: int | slice) -> InboxMessage | list[InboxMessage]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._built)))]
        built = self._built[index]  # IndexError as a list's
        if built is None:
            assert self._parsed is not None
            position = index if index >= 0 else index + len(self._built)
            built = self._built[position] = self._parsed.message(position)
        return built

    def __iter__(self) -> Iterator[InboxMessage]:
        for i in range(len(self._built)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, list | tuple | MessageView):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


class ParsedInboxes:
    """Per process: inbox path -> (identity, :class:`Parsed`) of the last parse or write."""

    def __init__(self, max_inboxes: int = MAX_INBOXES, max_bytes: int = MAX_BYTES) -> None:
        self.max_inboxes = max_inboxes
        self.max_bytes = max_bytes
        self._entries: dict[str, tuple[FileKey, Parsed]] = {}
        self._held = 0  # the sizes of the files held, kept as they come and go
        self._lock = threading.Lock()

    def get(self, path: str, key: FileKey) -> Parsed | None:
        with self._lock:
            entry = self._entries.get(path)
        if entry is None or entry[0] != key:
            return None
        return entry[1]

    def put(self, path: str, key: FileKey, parsed: Parsed) -> None:
        size = key[1]
        with self._lock:
            self._drop(path)
            if size > self.max_bytes:
                return
            while self._entries and (
                len(self._entries) >= self.max_inboxes or self._held + size > self.max_bytes
            ):
                self._drop(next(iter(self._entries)))
            self._entries[path] = (key, parsed)
            self._held += size

    def _drop(self, path: str) -> None:
        """Forget ``path`` (the caller holds the lock)."""
        old = self._entries.pop(path, None)
        if old is not None:
            self._held -= old[0][1]

    def put_written(
        self, path: str, key: FileKey | None, data: bytes, entries: list[dict[str, Any]]
    ) -> None:
        """Remember a version this process wrote whole, as a reader would decode it (forget
        the path if an entry is not valid or the file is gone)."""
        try:
            parsed = Parsed(data, entries, validate_entries(entries))
        except ValueError:
            key = None
        if key is None:
            self.forget(path)
        else:
            self.put(path, key, parsed)

    def forget(self, path: str) -> None:
        with self._lock:
            self._drop(path)


parsed = ParsedInboxes()

"""An inbox version made by editing another in place: its bytes, and its entries without
copying them.

``mark_read`` on a file this process decoded edits the flipped entries in its bytes
(``app.core.inbox_cache.marked_read``, with :func:`replace_entries`); the new version's
entries are the old ones but for those. A copy of the old list cost about a millisecond at
100k messages -- a reference taken on every entry, then dropped again when the old version
is forgotten: a tenth of the write it goes with. :class:`EditedEntries` shares the old list
(which is never changed: readers may hold the old version) and keeps the edited entries
beside it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from pydantic import ValidationError
from pydantic_core import SchemaValidator
from pydantic_core import core_schema as cs

from app.core.files import encode_entry

Entry = dict[str, Any]

MAX_EDITS = 4096
"""Beyond this many edited entries a version gets a list of its own (lookups stay cheap)."""


class EditedEntries(Sequence[Entry]):
    """``base`` (shared, never changed) with ``edits`` (index -> entry) laid over it."""

    __slots__ = ("base", "edits")
    base: Sequence[Entry]
    edits: dict[int, Entry]

    def __init__(self, base: Sequence[Entry], edits: dict[int, Entry]) -> None:
        if type(base) is EditedEntries:  # an edit of an edit: one layer, never a chain
            edits = {**base.edits, **edits}
            base = base.base
        self.base = base
        self.edits = edits

    def __len__(self) -> int:
        return len(self.base)

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.base)))]
        if index < 0:
            index += len(self.base)
            if index < 0:
                raise IndexError("entry index out of range")
        found = self.edits.get(index)
        return found if found is not None else self.base[index]

    def __iter__(self) -> Iterator[Entry]:
        edits = self.edits
        for index, entry in enumerate(self.base):
            yield edits.get(index, entry)


def edited(base: Sequence[Entry], edits: dict[int, Entry]) -> Sequence[Entry]:
    """``base`` with ``edits``: shared (:class:`EditedEntries`), or copied once many
    entries have been edited."""
    entries = EditedEntries(base, edits)
    if len(entries.edits) <= MAX_EDITS:
        return entries
    return list(entries)


SHAPE = SchemaValidator(
    cs.list_schema(cs.typed_dict_schema({}, extra_behavior="ignore", total=False))
)
"""An array of objects, nothing built: with no field to look for, the parser skips every value
(still checking its syntax) -- a quarter of the cost of a parse."""


_ENTRY_SEP = b"\n  },\n  {\n"  # between two objects of an array laid out by dumps_array
_SEP_END, _SEP_START = 4, 6  # where the object before it ends, and the one after starts
MAX_WALK = 4096
"""Elements ``replace_entries`` checks at most (between the replaced ones and an end)."""


def replace_entries(
    data: bytes, entries: Sequence[Any], edits: dict[int, Any]
) -> list[bytes | memoryview] | None:
    """The chunks of ``data`` -- the text of a JSON array of objects that decodes to
    ``entries`` -- with ``entries[i]`` replaced by ``edits[i]``, in place: every other element
    keeps its bytes. ``None`` unless the elements between each replaced one and the nearer
    end of the array are laid out exactly as ``JSON.stringify(array, null, 2)`` lays them out
    (as Claude Code and :func:`dumps_array` write): the caller then encodes the whole array.

    Each of those elements is found by a byte search from the array's end (separators
    ``},`` + ``{`` on lines of their own, two spaces in) and its bytes must be exactly
    ``encode_entry`` of the element decoded at that index. That check keeps the search
    aligned with the real elements: a separator-like run inside an element (possible only
    where another program laid the file out differently) would make the bytes checked a
    strict prefix or suffix of that element's text, which cannot be a whole object. So the
    result is byte for byte what encoding the whole array would give for a file in that
    layout, at the cost of encoding the elements walked over (at most ``MAX_WALK``)."""
    count = len(entries)
    if not edits or not (data.startswith(b"[\n  {\n") and data.endswith(b"\n  }\n]")):
        return None
    half = count // 2
    if len(edits) == 1:
        ((index, new),) = edits.items()
        if not 0 <= index < count:
            return None
        if index >= half:  # one message marked, among the newest
            span = _span_from_the_back(data, entries, index)
            if span is None:
                return None
            view = memoryview(data)
            start, end, piece = span
            return [view[:start], _encode_edit(piece, entries[index], new), view[end:]]
    elif min(edits) < 0 or max(edits) >= count:
        return None
    front = [i for i in edits if i < half]
    back = [i for i in edits if i >= half]
    walk_front = max(front) + 1 if front else 0
    walk_back = count - min(back) if back else 0
    if walk_front + walk_back > MAX_WALK:
        return None
    spans: dict[int, tuple[int, int]] = {}
    view = memoryview(data)
    start = 2  # just past "[\n"
    for index in range(walk_front):
        at = data.find(_ENTRY_SEP, start)
        end = at + _SEP_END if index < count - 1 else len(data) - 2
        if (at < 0 and index < count - 1) or view[start:end] != encode_entry(entries[index]):
            return None
        spans[index] = (start, end)
        start = at + _SEP_START
    end = len(data) - 2  # before "\n]"
    for index in range(count - 1, count - 1 - walk_back, -1):
        at = data.rfind(_ENTRY_SEP, 0, end) if index else -1
        start = at + _SEP_START if index else 2
        if (at < 0 and index) or view[start:end] != encode_entry(entries[index]):
            return None
        spans[index] = (start, end)
        end = at + _SEP_END
    chunks: list[bytes | memoryview] = []
    done = 0
    for index in sorted(edits):
        start, end = spans[index]
        chunks += [view[done:start], encode_entry(edits[index])]
        done = end
    chunks.append(view[done:])
    return chunks


def _span_from_the_back(
    data: bytes, entries: Sequence[Any], index: int
) -> tuple[int, int, bytes] | None:
    """Where element ``index`` lies in ``data`` and its bytes, found by counting separators
    back from the end -- proven without encoding the elements walked over:

    * its start: ``[`` + the text from there must parse as an array of ``count - index``
      objects (by ``SHAPE``, which checks the syntax and builds nothing of them). A
      separator holds raw newlines, so it is never inside a string; a start inside a nested
      value would leave brackets unbalanced in that text; so the start is an element's, and
      the count says whose;
    * its end: the bytes up to the separator after it must be exactly ``encode_entry`` of
      the element -- a whole object from the proven start, so it ends there."""
    count = len(entries)
    end = len(data) - 2  # before "\n]"
    for _ in range(count - 1 - index):  # back over the elements after it
        at = data.rfind(_ENTRY_SEP, 0, end)
        if at < 0:
            return None
        end = at + _SEP_END
    start = 2  # just past "[\n"
    if index:
        at = data.rfind(_ENTRY_SEP, 0, end)
        if at < 0:
            return None
        start = at + _SEP_START
        try:  # one copy of the tail, not two (a slice, then the slice after "[")
            tail = SHAPE.validate_json(b"".join((b"[", memoryview(data)[start:])))
        except ValidationError:
            return None
        if len(tail) != count - index:
            return None
    piece = encode_entry(entries[index])
    if end - start != len(piece) or not data.startswith(piece, start):
        return None
    return start, end, piece


_READ_FALSE, _READ_TRUE = b'\n    "read": false', b'\n    "read": true'


def read_flipped(
    data: bytes, entries: Sequence[Any], index: int
) -> list[bytes | memoryview] | None:
    """``replace_entries`` for the usual mark -- one message among the newest half, its
    ``read`` false, set true (nothing else changed) -- without building the new entry to
    compare it: the chunks of ``data`` with that one line changed, or ``None`` (the caller
    then goes the general way)."""
    if not (data.startswith(b"[\n  {\n") and data.endswith(b"\n  }\n]")):
        return None
    span = _span_from_the_back(data, entries, index)
    if span is None:
        return None
    start, end, piece = span
    flipped = piece.replace(_READ_FALSE, _READ_TRUE)
    if len(flipped) != len(piece) - 1:
        return None
    view = memoryview(data)
    return [view[:start], flipped, view[end:]]


def _encode_edit(piece: bytes, old: dict[str, Any], new: Any) -> bytes:
    """``encode_entry(new)``, given ``piece``, the encoding of ``old``: when ``new`` is
    ``old`` with ``read`` flipped from false to true (nothing else, keys in the same order),
    that is one line of ``piece`` changed -- the member's own line, the only one four spaces
    in that starts ``"read"`` (nested values are indented further, a key is unique)."""
    if old.get("read") is False and new == {**old, "read": True} and [*new] == [*old]:
        flipped = piece.replace(_READ_FALSE, _READ_TRUE)
        if len(flipped) == len(piece) - 1:
            return flipped
    return encode_entry(new)

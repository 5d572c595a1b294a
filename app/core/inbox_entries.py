"""The entries of an inbox version made by editing another in place, without copying them.

``mark_read`` on a file this process decoded edits the flipped entries in its bytes
(``app.core.inbox_cache.marked_read``); the new version's entries are the old ones but for
those. A copy of the old list cost about a millisecond at 100k messages -- a reference taken
on every entry, then dropped again when the old version is forgotten: a tenth of the write
it goes with. :class:`EditedEntries` shares the old list (which is never changed: readers may
hold the old version) and keeps the edited entries beside it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

Entry = dict[str, Any]

MAX_EDITS = 4096
"""Beyond this many edited entries a version gets a list of its own (lookups stay cheap)."""


class EditedEntries(Sequence[Entry]):
    """``base`` (shared, never changed) with ``edits`` (index -> entry) laid over it."""

    __slots__ = ("base", "edits")
    base: Sequence[Entry]
    edits: dict[int, Entry]

    def __init__(self, base: Sequence[Entry], edits: dict[int, Entry]) -> None:
        if isinstance(base, EditedEntries):  # an edit of an edit: one layer, never a chain
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

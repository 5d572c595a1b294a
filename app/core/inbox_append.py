"""An inbox's append path: group commit, the splice onto the bytes on disk, the check.

Claude Code re-parses and re-serialises the whole array on every append; teamdeck splices the
new entries onto the bytes already on disk and writes the result atomically (fsynced), so an
append costs a copy of the file instead of a parse + encode of every message. The file is
still validated before it is extended, without re-parsing what this process already knows to
be valid (:mod:`app.core.inbox_known`); anything else is checked past the longest head any
teamdeck process recorded as checked (by content: :mod:`app.core.inbox_record`), by a parser
that builds nothing. This process's threads appending to one inbox share one write
(:mod:`app.core.group_commit`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from app.core import inbox_record
from app.core.checked_write import atomic_write_checked
from app.core.errors import NotFoundError
from app.core.events import InboxChanged
from app.core.files import (
    atomic_write_bytes,
    ensure_dir,
    in_claude_home,
    parse_with_retry,
    read_bytes,
)
from app.core.group_commit import GroupCommit
from app.core.inbox_cache import check_array
from app.core.inbox_envelope import spliced
from app.core.inbox_known import Chunk, known_valid, remember
from app.core.inbox_record import Hashed, HeadCheck

if TYPE_CHECKING:
    from app.core.mailbox import Mailbox

#: One ``append``'s entries and guard (appends with a guard are written alone).
_Append = tuple[list[dict[str, Any]], Callable[[], None] | None]
#: Unguarded appends by this process's threads, written together per inbox.
_appends: GroupCommit[list[dict[str, Any]]] = GroupCommit()


def _checked_bytes(data: bytes) -> bytes:
    check_array(data)  # ValueError if not an inbox
    return data


def append_entries(
    box: Mailbox,
    agent: str,
    entries: list[dict[str, Any]],
    guard: Callable[[], None] | None,
) -> None:
    """``Mailbox.append``'s work once the entries are encoded: the team must exist (never
    bring back a deleted team's folders), then a guarded append is written alone, any other
    one with the appends of this process's threads to the same inbox meanwhile."""
    path = box.path(agent)
    if not path.parent.is_dir():
        # Never bring back the folders of a deleted team (the lock and the atomic write
        # would both create missing parents): an inbox needs an existing team.
        if not box.layout.config_path(box.team).is_file():
            raise NotFoundError(f"team {box.team!r} does not exist")
        ensure_dir(path.parent)
    if guard is not None:  # alone: a guard sees the appends written before it
        (refused,) = write_batch(box, agent, [(entries, guard)])
        if refused is not None:
            raise refused
        return
    # This process's threads appending to the same inbox meanwhile share one write.
    _appends.submit(os.fspath(path), entries, lambda batch: write_batch(box, agent, batch))


def write_batch(
    box: Mailbox, agent: str, batch: Sequence[_Append | list[dict[str, Any]]]
) -> list[BaseException | None]:
    """``append``'s write, for the appends of one group commit (``app.core.group_commit``)
    or one guarded append: its guard under the lock, then the entries let through, in one
    write; returns what refused each append (``None``: written)."""
    path = box.path(agent)
    refused: list[BaseException | None] = [None] * len(batch)
    with box.home.lock(path):
        entries: list[dict[str, Any]] = []
        for i, one in enumerate(batch):
            items, guard = one if isinstance(one, tuple) else (one, None)
            if guard is not None:
                try:
                    guard()
                except Exception as exc:  # that append's alone: the others are written
                    refused[i] = exc
                    continue
            entries.extend(items)
        if not entries:
            return refused
        entry, *others = entries
        raw = read_bytes(path)
        known = known_valid(path, raw) if raw is not None else None
        record = None if in_claude_home(path) else inbox_record.record_path(path)
        parts: list[Chunk] | None = None
        hashed: Hashed | None = None
        if raw is not None and known is None:
            try:  # checked while the new version is written (see app.core.checked_write)
                parts = spliced(raw, entry, others)
                check = HeadCheck(raw, len(parts[0]), record, parts[1:-1])
                atomic_write_checked(path, parts, check, size=len(raw))
                hashed = check.hashed  # recorded already
            except ValueError:  # maybe caught mid-way by another writer: the full story
                raw = parse_with_retry(path, _checked_bytes)
                parts = None
        if parts is None:
            parts = spliced(raw, entry, others)
            if raw is None:
                hashed = inbox_record.fresh(parts[:-1])
            elif known is not None and known.hashed is not None:
                hashed = known.hashed.extended(raw, len(parts[0]), parts[1:-1])
            if record is not None and hashed is not None:
                inbox_record.save(record, hashed.marks)
            atomic_write_bytes(path, parts)
        written = remember(path, parts[:-1], hashed=hashed)
    box.home.emit(InboxChanged(box.team, agent, written=written))
    return refused

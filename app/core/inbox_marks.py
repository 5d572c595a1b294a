"""Marking an inbox's messages read: the one change teamdeck makes to messages on disk.

A file this process has decoded and that has not changed since (same identity) is edited in
its bytes: only the flipped entries are encoded again
(:func:`app.core.inbox_entries.replace_entries`). Any other file -- changed by another
process, not laid out as ``JSON.stringify`` does -- is parsed and re-encoded whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from stat import S_IMODE
from typing import TYPE_CHECKING

from app.core import inbox_cache
from app.core.events import InboxRead
from app.core.files import (
    array_head_end,
    atomic_write_bytes,
    dumps_array,
    encode_text,
    parse_with_retry,
)
from app.core.inbox_cache import Parsed, decode_array
from app.core.inbox_known import FileKey, file_key, remember

if TYPE_CHECKING:
    from app.core.mailbox import Mailbox


def rewrite(box: Mailbox, agent: str, indices: set[int] | None, durable: bool = True) -> int:
    """Flip read flags (``indices``; ``None``: all); announced as ``InboxRead`` with the
    file's identity before and after (taken under the lock), so the watcher can tell it is
    no news. Returns how many flipped."""
    path = box.path(agent)
    text = os.fspath(path)
    with box.home.lock(path):
        try:
            st = os.stat(text, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        prior = file_key(st) if st is not None else None
        known = inbox_cache.parsed.get(text, prior) if prior is not None else None
        done = None
        if known is not None and st is not None:
            done = _flip_in_place(text, known, indices, durable, S_IMODE(st.st_mode))
        if done is not None:
            flipped, written = done
        else:
            flipped, written = _rewrite_whole(path, indices, durable)
    if flipped:
        box.home.emit(InboxRead(box.team, agent, written=written, prior=prior))
    return flipped


def _flip_in_place(
    path: str, known: Parsed, indices: set[int] | None, durable: bool, mode: int
) -> tuple[int, FileKey | None] | None:
    """The flip on ``known``, the version this process decoded of the regular file at
    ``path`` (its identity just matched under the lock; ``mode`` its permission bits):
    the file and its folder exist and are what they were, so the write looks no further
    (``make_dirs=False``: a folder deleted meanwhile is an error, never made again)."""
    done = inbox_cache.marked_read(known, indices)
    if done is None:
        return None
    flipped, after = done
    if not flipped:
        return 0, None
    identity: list[FileKey | None] = []

    def renamed() -> None:  # before the folder's fsync, while the caches are warm
        written = remember(path, after.head())
        if written is not None:
            inbox_cache.parsed.put(path, written, after)
        identity.append(written)

    atomic_write_bytes(
        path, after.parts(), durable=durable, make_dirs=False, mode=mode, renamed=renamed
    )
    return flipped, identity[0]


def _rewrite_whole(
    path: Path, indices: set[int] | None, durable: bool
) -> tuple[int, FileKey | None]:
    raw = parse_with_retry(path, decode_array)
    if raw is None:
        return 0, None
    flipped = 0
    for i, entry in enumerate(raw):
        if not entry.get("read") and (indices is None or i in indices):
            entry["read"] = True
            flipped += 1
    if not flipped:
        return 0, None
    data = encode_text(dumps_array(raw))
    atomic_write_bytes(path, data, durable=durable)
    written = remember(path, [memoryview(data)[: array_head_end(data)]])
    inbox_cache.parsed.put_written(str(path), written, data, raw)
    return flipped, written

"""What this process knows to be a valid inbox: the appends' and ``mark_read``'s shortcut.

A per-process cache remembers, per inbox, the identity (inode, size, mtime, ctime) of the file
it last validated or wrote and the bytes of that array's head. An unchanged file needs no
check; a file that only grew by entries appended after that head (another writer's appends)
needs only the new entries parsed; anything else is checked in full by the caller
(:mod:`app.core.inbox_append`). Bounded in inboxes and in bytes held.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from app.core import inbox_record
from app.core.inbox_record import Hashed

FileKey = tuple[int, int, int, int]
Chunk = bytes | memoryview


class Known:
    """What this process knows to be a valid inbox: the file's identity when it last validated
    or wrote it, the chunks that make up the array's head (everything before the closing
    bracket), which share memory with the buffers written, and the head's digest state if
    this process has it (an append it made: :mod:`app.core.inbox_record`)."""

    __slots__ = ("hashed", "head", "key", "size")

    def __init__(self, key: FileKey, head: list[Chunk], hashed: Hashed | None = None) -> None:
        self.key = key
        self.head = head
        self.size = sum(map(len, head))
        self.hashed = hashed


_known: dict[str, Known] = {}
_known_lock = threading.Lock()
_KNOWN_MAX = 64  # inboxes remembered per process...
_KNOWN_BUDGET = 128 * 1024 * 1024  # ...holding at most this many bytes of their heads


def file_key(st: os.stat_result) -> FileKey:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def stat_key(path: str | Path) -> FileKey | None:
    try:
        return file_key(os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return None


def remember(
    path: str | Path,
    head: list[Chunk],
    key: FileKey | None = None,
    hashed: Hashed | None = None,
) -> FileKey | None:
    """Remember the file just written (or read whole: ``key`` is then the identity it had
    throughout); returns its identity (for the change event)."""
    key = key or stat_key(path)
    entry = Known(key, head, hashed) if key is not None else None
    if entry is not None and entry.size > _KNOWN_BUDGET:
        entry.head, entry.size = [], 0  # too big to keep: the identity check still works
    text = os.fspath(path)
    with _known_lock:
        _known.pop(text, None)
        if entry is None:
            return key
        held = 0
        for known in _known.values():  # a loop, not a generator: most processes know a few
            held += known.size
        while _known and (len(_known) >= _KNOWN_MAX or held + entry.size > _KNOWN_BUDGET):
            held -= _known.pop(next(iter(_known))).size  # the least recently written
        _known[text] = entry
    return key


def known_valid(path: Path, raw: bytes) -> Known | None:
    """What this process knows of ``raw``, if that vouches for it: the file is exactly the
    one it last validated or wrote, or a head it validated plus appended entries that are
    valid on their own (``inbox_record.extends``: checked without parsing the known part
    again). Anything else -- a file rewritten or truncated by another program -- is not."""
    with _known_lock:
        known = _known.get(str(path))
    if known is None:
        return None
    if stat_key(path) == known.key:
        return known
    if not known.head:
        return None
    offset = 0
    for chunk in known.head:
        if not raw.startswith(chunk, offset):
            return None
        offset += len(chunk)
    return known if inbox_record.extends(raw, offset) else None

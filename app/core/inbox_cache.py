"""Parsed inboxes remembered by file identity, so an unchanged inbox is not parsed again.

The dashboard, the runtime and the lead each re-read the lead's inbox at every change to it,
and while a team works that inbox changes several times per task as it grows to hundreds of
messages: parsing and validating the whole array every time was a measurable share of the
dashboard's event loop (bench/live.py). A reader that finds the file it parsed last time --
the same ``(inode, size, mtime_ns, ctime_ns)`` before and after its read -- takes the messages
from here instead. Identity stands for content as everywhere in the file layer: atomic writes
give every version of a file a new inode.

The lists held here are shared: ``Mailbox`` hands out copies of the messages.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.models import InboxMessage

FileKey = tuple[int, int, int, int]

MAX_INBOXES = 64
"""Inboxes remembered per process (the least recently parsed go first)..."""
MAX_BYTES = 32 * 1024 * 1024
"""...holding at most this many bytes of inbox files between them."""


class ParsedInboxes:
    """Per process: inbox path -> (identity, messages) of the last parse."""

    def __init__(self, max_inboxes: int = MAX_INBOXES, max_bytes: int = MAX_BYTES) -> None:
        self.max_inboxes = max_inboxes
        self.max_bytes = max_bytes
        self._entries: dict[str, tuple[FileKey, list[InboxMessage]]] = {}
        self._lock = threading.Lock()

    def get(self, path: str, key: FileKey) -> list[InboxMessage] | None:
        with self._lock:
            entry = self._entries.get(path)
        if entry is None or entry[0] != key:
            return None
        return entry[1]

    def put(self, path: str, key: FileKey, messages: list[InboxMessage]) -> None:
        size = key[1]
        with self._lock:
            self._entries.pop(path, None)
            if size > self.max_bytes:
                return
            held = sum(k[1] for k, _ in self._entries.values())
            while self._entries and (
                len(self._entries) >= self.max_inboxes or held + size > self.max_bytes
            ):
                old_key, _ = self._entries.pop(next(iter(self._entries)))
                held -= old_key[1]
            self._entries[path] = (key, messages)


parsed = ParsedInboxes()

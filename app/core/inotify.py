"""Linux inotify from libc, and the tree of a home's folders that changes live in.

:class:`HomeTree` watches exactly the folders a home's change events come from -- the root
(for ``teams/`` and ``tasks/`` appearing), ``teams/``, each ``teams/{t}/`` and its
``inboxes/``, ``tasks/`` and each ``tasks/{t}/`` -- and reads the inotify descriptor on the
event loop (``loop.add_reader``). An idle watcher therefore never wakes up (watchfiles' watch
thread wakes every step to look), and a change is seen as soon as the kernel reports it.

It creates nothing: a folder that does not exist yet is picked up when it appears (the root,
if missing, is looked for twice a second). Folders that appear are scanned once when they are
watched, because files created in them before the watch existed would otherwise go unreported.
Changes come out as watchfiles-style ``(Change, path)`` pairs, so the watcher's one filter
and one mapping handle both this backend and the watchfiles fallback.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno
import logging
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path

from watchfiles import Change

log = logging.getLogger(__name__)

IN_MODIFY = 0x2
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

#: What every watched folder reports: files finished (written and closed, or renamed into
#: place by an atomic write), entries removed, and folders created (files report their close).
MASK = (
    IN_CLOSE_WRITE
    | IN_MOVED_TO
    | IN_MOVED_FROM
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
_HEADER = struct.Struct("iIII")
ROOT_POLL_S = 0.5
RawChange = tuple[Change, str]


def _load_libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _load_libc()


def available() -> bool:
    """Whether this system has inotify (Linux with a usual libc)."""
    return _LIBC is not None


class Inotify:
    """One inotify descriptor (non-blocking): add watches, read events."""

    def __init__(self) -> None:
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "inotify is not available")
        self._libc = _LIBC
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify_init1: {os.strerror(code)}")
        self.fd: int = fd

    def add(self, path: str, mask: int = MASK) -> int | None:
        """Watch ``path``; its watch descriptor, or ``None`` if it is not (or no longer) a
        folder."""
        wd = int(self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask))
        if wd >= 0:
            return wd
        code = ctypes.get_errno()
        if code in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise OSError(code, f"cannot watch {path}: {os.strerror(code)}")

    def read(self) -> list[tuple[int, int, str]]:
        """Every event queued now: ``(wd, mask, name)``."""
        events: list[tuple[int, int, str]] = []
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return events
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size
                name = data[offset : offset + size].rstrip(b"\0")
                offset += size
                events.append((wd, mask, os.fsdecode(name)))

    def close(self) -> None:
        os.close(self.fd)


# Folder kinds and the kind of a sub-folder of each (None: its sub-folders are not watched).
_CHILD: dict[str, str | None] = {
    "root": None,  # only teams/ and tasks/, handled by name
    "teams": "team",
    "team": "by name",  # only inboxes/ and agents/ (see _TEAM_CHILDREN)
    "inboxes": None,
    "agents": None,
    "tasks": "taskdir",
    "taskdir": None,
}
#: The sub-folders of a team folder that are watched (their kind is their name).
_TEAM_CHILDREN = frozenset({"inboxes", "agents"})


def _child_kind(kind: str, name: str, team_children: frozenset[str]) -> str | None:
    """The kind of sub-folder ``name`` of a ``kind`` folder, ``None`` if it is not watched."""
    if kind == "root":
        return name if name in ("teams", "tasks") else None
    if kind == "team":
        return name if name in team_children else None
    return _CHILD[kind]


class HomeTree:
    """The inotify watch of one home's change folders (see the module docstring).

    ``on_changes`` gets every batch of raw changes, on the loop's thread; changes that arrive
    within ``coalesce_s`` of the first one of a batch go out with it. ``agent_logs=False``
    leaves the teams' ``agents/`` folders unwatched (a teammate process has no use for the
    others' logs, which change with every step they take)."""

    def __init__(
        self,
        root: Path,
        on_changes: Callable[[list[RawChange]], None],
        *,
        coalesce_s: float = 0.001,
        agent_logs: bool = True,
    ) -> None:
        self.root = root
        self._team_children = _TEAM_CHILDREN if agent_logs else _TEAM_CHILDREN - {"agents"}
        self.on_changes = on_changes
        self.coalesce_s = coalesce_s
        self._inotify: Inotify | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dirs: dict[int, tuple[str, str]] = {}  # wd -> (path, kind)
        self._pending: list[RawChange] = []
        self._flush: asyncio.TimerHandle | None = None
        self._root_poll: asyncio.TimerHandle | None = None

    @property
    def watched(self) -> list[str]:
        """The folders watched now (for tests and diagnostics)."""
        return sorted(path for path, _ in self._dirs.values())

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Watch what exists now (reported changes start from here; nothing is scanned)."""
        self._loop = loop
        self._inotify = Inotify()
        loop.add_reader(self._inotify.fd, self._on_readable)
        self._attach_root(scan=False)

    def stop(self) -> None:
        for handle in (self._flush, self._root_poll):
            if handle is not None:
                handle.cancel()
        self._flush = self._root_poll = None
        if self._inotify is not None and self._loop is not None:
            self._loop.remove_reader(self._inotify.fd)
            self._inotify.close()
        self._inotify = None
        self._dirs.clear()
        self._pending.clear()

    # ------------------------------------------------------------------ watches

    def _attach_root(self, *, scan: bool) -> None:
        self._root_poll = None
        if self._inotify is None or self._loop is None:
            return
        if self._add(str(self.root), "root") is None:  # the home does not exist (yet)
            self._root_poll = self._loop.call_later(ROOT_POLL_S, self._rescan)
            return
        for name in ("teams", "tasks"):
            self._attach(str(self.root / name), name, scan=scan)

    def _rescan(self) -> None:
        self._attach_root(scan=True)
        self._schedule()

    def _add(self, path: str, kind: str) -> int | None:
        assert self._inotify is not None
        wd = self._inotify.add(path)
        if wd is not None:
            self._dirs[wd] = (path, kind)
        return wd

    def _attach(self, path: str, kind: str, *, scan: bool) -> None:
        """Watch folder ``path`` and the folders below it that matter; with ``scan``, report
        it as added (the mapping scans it for files that predate the watch)."""
        if self._add(path, kind) is None:
            return
        if scan and kind in ("team", "inboxes", "agents", "taskdir"):
            self._pending.append((Change.added, path))
        if _CHILD[kind] is None:
            return
        try:
            entries = [e for e in os.scandir(path) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return
        for entry in entries:
            child = _child_kind(kind, entry.name, self._team_children)
            if child is not None:
                self._attach(entry.path, child, scan=scan)

    # ------------------------------------------------------------------ events

    def _on_readable(self) -> None:
        if self._inotify is None:
            return
        try:
            events = self._inotify.read()
        except OSError as exc:  # pragma: no cover - the descriptor broke
            log.warning("inotify read failed: %s", exc)
            return
        for wd, mask, name in events:
            self._handle(wd, mask, name)
        self._schedule()

    def _schedule(self) -> None:
        if self._pending and self._flush is None and self._loop is not None:
            self._flush = self._loop.call_later(self.coalesce_s, self._deliver)

    def _handle(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:  # events were lost: rescan everything
            log.warning("inotify queue overflowed; rescanning %s", self.root)
            self._dirs.clear()
            self._attach_root(scan=True)
            return
        entry = self._dirs.get(wd)
        if entry is None:
            return
        path, kind = entry
        if mask & IN_IGNORED:
            del self._dirs[wd]
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            if kind == "root":  # the home went away: look for it again
                self._dirs.clear()
                if self._root_poll is None and self._loop is not None:
                    self._root_poll = self._loop.call_later(ROOT_POLL_S, self._rescan)
            return
        full = os.path.join(path, name)
        if mask & IN_ISDIR:
            if mask & (IN_CREATE | IN_MOVED_TO):
                child = _child_kind(kind, name, self._team_children)
                if child is not None:
                    self._attach(full, child, scan=True)
            elif mask & (IN_DELETE | IN_MOVED_FROM) and kind != "root":
                self._pending.append((Change.deleted, full))
            return
        if kind == "root":
            return
        if mask & (IN_DELETE | IN_MOVED_FROM):
            self._pending.append((Change.deleted, full))
        elif mask & (IN_CLOSE_WRITE | IN_MOVED_TO):
            self._pending.append((Change.modified, full))

    def _deliver(self) -> None:
        self._flush = None
        self._on_readable_now()
        changes, self._pending = self._pending, []
        if changes:
            self.on_changes(changes)

    def _on_readable_now(self) -> None:
        """Take what the kernel queued since the batch started (it goes out with it)."""
        if self._inotify is None:
            return
        try:
            events = self._inotify.read()
        except OSError:  # pragma: no cover
            return
        for wd, mask, name in events:
            self._handle(wd, mask, name)

"""A per-process index of a task folder, so ``claim_next`` and ``list`` need not read the board.

``claim_next`` used to read and validate every task file under the list lock: 25x a
``claim(id)`` at 1k tasks, 325x at 10k, while every idle teammate queued on that lock. A
:class:`Board` remembers each task file parsed, and which tasks could be claimed (pending,
unowned, not internal, in a heap by id) and who owns what unresolved, and learns what changed
since it last looked -- whoever wrote it, another process or Claude Code's own writers:

* with inotify (Linux), from the kernel's events for the folder: a write that finished before
  ``sync()`` started is already queued then, so the board only re-reads the files named; a
  queue overflow, or events that cannot be read, make it read the whole folder again;
* without it, by file identity (inode, size, mtime, ctime) as ``app.core.inbox_cache`` does:
  one ``stat`` per file, a parse only for the changed ones. A file modified within the last
  ``RACY_NS`` is never taken on identity (a rewrite in place in the same clock tick could keep
  its size and times: git's "racily clean" rule).

What the board hands out is shared: callers copy (``TaskFiles`` does). A corrupt file is
remembered as its error, so ``scan`` still reports it and a claim never picks it. Fork-safe:
a child process starts a board of its own (the inotify queue is not shared).
"""

from __future__ import annotations

import contextlib
import heapq
import os
import threading
import time
from collections.abc import Callable, Generator, Iterator

from app.core import inotify
from app.core.errors import CorruptFileError
from app.core.models import Task
from app.core.paths import is_task_id

FileKey = tuple[int, int, int, int]
Reader = Callable[[str], Task | None]

RACY_NS = 50_000_000
"""A file changed this recently (ns) is re-read, not trusted on its identity."""
MAX_BOARDS = 16
"""Task folders indexed per process (the least recently used go first)."""

_MASK = (
    inotify.IN_MODIFY
    | inotify.IN_CLOSE_WRITE
    | inotify.IN_MOVED_TO
    | inotify.IN_MOVED_FROM
    | inotify.IN_CREATE
    | inotify.IN_DELETE
    | inotify.IN_DELETE_SELF
    | inotify.IN_MOVE_SELF
    | inotify.IN_ONLYDIR
)
_ATTRIB = 0x4


class Board:
    """What one process knows of one task folder. Use under the caller's lock (``sync`` then
    the queries); ``TaskFiles`` holds the board's own lock around each use."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.lock = threading.RLock()
        self.tasks: dict[int, Task | CorruptFileError] = {}
        self.keys: dict[int, FileKey] = {}
        self.claimable: set[int] = set()
        self._heap: list[int] = []
        self._in_heap: set[int] = set()
        self.owned: dict[str, set[int]] = {}
        self._watch: inotify.Inotify | None = None
        self._pid = os.getpid()
        self._complete = False
        self._dirty: set[int] = set()
        self._top = 0  # the highest id seen; checked against ``tasks`` by ``highest``

    @property
    def watched(self) -> bool:
        """Whether the board is complete and kept exact by inotify (in this process)."""
        return self._complete and self._watch is not None and self._pid == os.getpid()

    # ------------------------------------------------------------------ learning

    def sync(self, read: Reader) -> None:
        """Bring the board up to date with the folder (``read`` parses one file by name)."""
        if self._pid != os.getpid():  # a forked child: the queue is the parent's
            self._watch = None
            self._complete = False
            self._pid = os.getpid()
        if not self._complete:
            self._start_watch()
            self._full(read)
            return
        if self._watch is None:
            self._by_identity(read)
            return
        try:
            events = self._watch.read()
        except OSError:
            self._drop_watch()
            self._full(read)
            return
        for _wd, mask, name in events:
            if mask & (inotify.IN_Q_OVERFLOW | inotify.IN_DELETE_SELF | inotify.IN_MOVE_SELF):
                self._drop_watch()
                self._start_watch()
                self._full(read)
                return
            if name.endswith(".json") and is_task_id(name[:-5]):
                self._dirty.add(int(name[:-5]))
        dirty, self._dirty = self._dirty, set()
        for task_id in sorted(dirty):
            self._refresh(task_id, read)

    def _start_watch(self) -> None:
        if self._watch is not None or not inotify.available():
            return
        try:
            watch = inotify.Inotify()
        except OSError:
            return
        try:
            if watch.add(self.folder, _MASK | _ATTRIB) is None:
                watch.close()
                return
        except OSError:
            watch.close()
            return
        self._watch = watch

    def _drop_watch(self) -> None:
        if self._watch is not None:
            with contextlib.suppress(OSError):
                self._watch.close()
            self._watch = None

    def close(self) -> None:
        self._drop_watch()

    def _names(self) -> set[int]:
        try:
            entries = os.scandir(self.folder)
        except FileNotFoundError:
            return set()
        with entries:
            return {
                int(e.name[:-5])
                for e in entries
                if e.name.endswith(".json") and is_task_id(e.name[:-5])
            }

    def _full(self, read: Reader) -> None:
        on_disk = self._names()
        for gone in set(self.tasks) - on_disk:
            self._forget(gone)
        for task_id in sorted(on_disk):
            if self._watch is None:
                self._refresh_if_changed(task_id, read)
            else:
                self._refresh(task_id, read)
        self._complete = True

    def _by_identity(self, read: Reader) -> None:
        on_disk = self._names()
        for gone in set(self.tasks) - on_disk:
            self._forget(gone)
        for task_id in sorted(on_disk):
            self._refresh_if_changed(task_id, read)

    def _key(self, task_id: int) -> FileKey | None:
        try:
            st = os.stat(os.path.join(self.folder, f"{task_id}.json"), follow_symlinks=False)
        except OSError:
            return None
        if time.time_ns() - st.st_mtime_ns < RACY_NS:
            return None  # too fresh to be trusted on identity
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _refresh_if_changed(self, task_id: int, read: Reader) -> None:
        key = self._key(task_id)
        if key is not None and self.keys.get(task_id) == key:
            return
        self._refresh(task_id, read, key)

    def _refresh(self, task_id: int, read: Reader, key: FileKey | None = None) -> None:
        """Read one file again (or forget it if it is gone)."""
        if key is None and self._watch is None:
            key = self._key(task_id)
        self._forget(task_id)
        try:
            task: Task | CorruptFileError | None = read(f"{task_id}.json")
        except CorruptFileError as exc:
            task = exc
        if task is None:
            return
        self.tasks[task_id] = task
        self._top = max(self._top, task_id)
        if key is not None and self._key(task_id) == key:  # the same file throughout
            self.keys[task_id] = key
        if isinstance(task, CorruptFileError):
            return
        if task.status == "pending" and not task.owner and not task.is_internal:
            self.claimable.add(task_id)
            if task_id not in self._in_heap:
                self._in_heap.add(task_id)
                heapq.heappush(self._heap, task_id)
        if task.owner and not task.is_resolved:
            self.owned.setdefault(task.owner, set()).add(task_id)

    def _forget(self, task_id: int) -> None:
        old = self.tasks.pop(task_id, None)
        self.keys.pop(task_id, None)
        self.claimable.discard(task_id)
        if isinstance(old, Task) and old.owner:
            owned = self.owned.get(old.owner)
            if owned is not None:
                owned.discard(task_id)
                if not owned:
                    del self.owned[old.owner]

    def invalidate(self, task_id: int) -> None:
        """This process changed the file: read it again at the next ``sync``."""
        self._dirty.add(task_id)
        if self._watch is None:
            self.keys.pop(task_id, None)

    # ------------------------------------------------------------------ queries

    def highest(self) -> int:
        """The highest task id on the board (0 if none), without a pass over 10k ids."""
        if self._top and self._top not in self.tasks:  # the highest was deleted
            self._top = max(self.tasks, default=0)
        return self._top

    def in_order(self) -> Iterator[tuple[int, Task | CorruptFileError]]:
        for task_id in sorted(self.tasks):
            yield task_id, self.tasks[task_id]

    def busy(self, agent: str) -> list[str]:
        """Ids of unresolved tasks ``agent`` owns, in order."""
        return [str(i) for i in sorted(self.owned.get(agent, ()))]

    def is_open(self, task_id: str) -> bool:
        """Whether a blocker still blocks: it exists and is unresolved (or unreadable)."""
        if not is_task_id(task_id):
            return False
        task = self.tasks.get(int(task_id))
        if task is None:
            return False
        return isinstance(task, CorruptFileError) or not task.is_resolved

    def candidates(self) -> Generator[Task, None, None]:
        """Claimable tasks whose blockers are all resolved, lowest id first (lazily: the heap
        drops what is no longer claimable as it goes; blocked ones are kept for later)."""
        held: list[int] = []
        try:
            while self._heap:
                task_id = self._heap[0]
                if task_id not in self.claimable:
                    heapq.heappop(self._heap)
                    self._in_heap.discard(task_id)
                    continue
                held.append(heapq.heappop(self._heap))
                task = self.tasks[task_id]
                if isinstance(task, Task) and not any(self.is_open(b) for b in task.blocked_by):
                    yield task
        finally:
            for task_id in held:
                heapq.heappush(self._heap, task_id)


_boards: dict[str, Board] = {}
_boards_lock = threading.Lock()


def board(folder: str) -> Board:
    """This process's board of ``folder``."""
    with _boards_lock:
        found = _boards.pop(folder, None)
        if found is None:
            found = Board(folder)
            while len(_boards) >= MAX_BOARDS:
                _boards.pop(next(iter(_boards))).close()
        _boards[folder] = found
        return found

"""Locks: one factory for teamdeck's own home (flock) and a Claude Code home (mkdir).

* ``flock`` -- ``flock(2)`` on a regular ``*.lock`` file (:class:`FlockLock`, the same lock
  ``filelock.FileLock`` takes, without its bookkeeping: an inbox append holds its lock for about
  a millisecond, and filelock's registries cost a third of that); the kernel releases it when
  the holder dies, so a dead process can never leave a stale lock.
* ``mkdir`` -- the protocol of the npm ``proper-lockfile`` package Claude Code uses
  (:mod:`app.core.mkdir_lock`, imported when a Claude Code home is locked).

Both are taken the same way (:class:`HomeLock`): one attempt, then polls that back off, a
timeout reported as LockTimeoutError.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.errors import LockTimeoutError, TeamdeckError
from app.core.paths import LockStyle

if TYPE_CHECKING:
    from app.core.mkdir_lock import MkdirLock

DEFAULT_TIMEOUT = 20.0
POLL_FIRST = 0.0005  # seconds before the second attempt (most holders are about to let go)...
POLL_MAX = 0.008  # ...doubling up to this: a waiter's polling is CPU its process spends idle

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_LOCK_FLAGS = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
"""A lock file is opened read-only: ``flock`` needs no more, and closing a descriptor that
was open for writing tells every inotify watcher of the folder (``IN_CLOSE_WRITE``) -- each
teammate's watcher would wake for every lock taken in its team's folders. ``O_NONBLOCK``:
a FIFO planted there never blocks the open (read-only, it would wait for a writer)."""
_LOCK_FLAGS_RW = (_LOCK_FLAGS & ~os.O_ACCMODE) | os.O_RDWR


def __getattr__(name: str) -> Any:
    """``MkdirLock`` and ``STALE_AFTER`` from :mod:`app.core.mkdir_lock`, on first use."""
    if name in ("MkdirLock", "STALE_AFTER"):
        from app.core import mkdir_lock

        return getattr(mkdir_lock, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _TimedOut(Exception):
    """The lock's timeout passed (reported as LockTimeoutError)."""


class LockError(TeamdeckError):
    """A lock that cannot be taken for a reason other than another holder."""


class FlockLock:
    """``flock(LOCK_EX)`` on a regular lock file, polled (non-blocking) until a deadline.

    The same kernel lock ``filelock.FileLock`` takes on the same file, so the two exclude each
    other; the file is created ``0600`` if missing and never removed (removing it would let two
    holders lock two different inodes). One object per operation, used by one thread. A lock
    file unlinked by someone between our ``open`` and our ``flock`` is opened afresh."""

    __slots__ = ("_fd", "_path")

    def __init__(self, path: str) -> None:
        self._path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        fd = self._fd
        if fd is None:
            fd = self._fd = os.open(self._path, _LOCK_FLAGS, 0o600)
        try:
            if not self._flock(fd):
                return False
        except OSError as exc:
            if exc.errno != errno.EBADF:
                raise
            # NFS emulates flock with a byte-range write lock, which needs a descriptor open
            # for writing: this lock keeps one so (its next attempts included).
            fd = self._fd = os.open(self._path, _LOCK_FLAGS_RW, 0o600)
            if not self._flock(fd):
                return False
        if os.fstat(fd).st_nlink == 0:  # unlinked before we locked it: not the live lock file
            self._close()
            return False
        return True

    def _flock(self, fd: int) -> bool:
        """One attempt without waiting: False while another holds the lock; any other error
        closes the descriptor and is raised."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False
            self._close()
            raise
        return True

    def release(self) -> None:
        """Unlock and close (closing alone would unlock too; the explicit unlock also covers a
        descriptor a forked child inherited)."""
        fd = self._fd
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                self._close()

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class LockStats:
    """This process's lock acquisitions, how many had to wait, the seconds spent waiting and
    the CPU seconds that waiting cost (polling; not the ``give_up`` callbacks, which do the
    caller's own work early), for ``bench/lock_wait.py`` and anyone diagnosing contention."""

    __slots__ = ("acquired", "wait_cpu_seconds", "wait_seconds", "waited")

    def __init__(self) -> None:
        self.acquired = 0
        self.waited = 0
        self.wait_seconds = 0.0
        self.wait_cpu_seconds = 0.0


stats = LockStats()


class HomeLock:
    """Context manager around a lock that reports a timeout as LockTimeoutError."""

    __slots__ = ("_lock", "_path", "_timeout")

    def __init__(self, lock: MkdirLock | FlockLock, path: str | Path, timeout: float) -> None:
        self._lock = lock
        self._path = path
        self._timeout = timeout

    def __enter__(self) -> HomeLock:
        lock = self._lock
        if type(lock) is FlockLock:  # the first attempt inline: most locks are free
            try:
                taken = lock.try_acquire()
            except OSError as exc:
                raise self._error(exc) from None
            if taken:
                stats.acquired += 1
                return self
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        self._lock.release()

    def acquire(self, give_up: Callable[[], bool] | None = None) -> bool:
        """Take the lock (polling while another process holds it). ``give_up``, if given, is
        asked between attempts whether the lock is still needed (say, the task a claimer was
        after has been claimed by the holder meanwhile): if it answers True, this returns
        False without the lock. LockTimeoutError after the timeout; LockError if the lock
        cannot be taken at all (a symlink or a directory planted at the lock path)."""
        try:
            return self._acquire(give_up)
        except _TimedOut:
            raise LockTimeoutError(Path(self._path), self._timeout) from None
        except OSError as exc:
            raise self._error(exc) from None

    def _error(self, exc: OSError) -> LockError:
        reason = exc.strerror or type(exc).__name__
        return LockError(f"could not lock {self._path}: {reason}")

    def _try(self) -> bool:
        lock = self._lock
        if isinstance(lock, FlockLock):
            return lock.try_acquire()
        from app.core.mkdir_lock import Timeout

        try:
            lock.acquire(blocking=False)
        except Timeout:
            return False
        return True

    def _acquire(self, give_up: Callable[[], bool] | None) -> bool:
        stats.acquired += 1
        if self._try():
            return True
        start, cpu = time.perf_counter(), time.thread_time()
        deadline = start + self._timeout
        pause = POLL_FIRST
        try:
            while True:
                time.sleep(pause)
                if self._try():
                    return True
                if give_up is not None:
                    asked = time.thread_time()
                    done = give_up()
                    cpu += time.thread_time() - asked  # the caller's work, not waiting
                    if done:
                        return False
                if time.perf_counter() >= deadline:
                    raise _TimedOut
                pause = min(pause * 2, POLL_MAX)
        except BaseException:
            if isinstance(self._lock, FlockLock):
                self._lock.release()  # not held: only closes the descriptor
            raise
        finally:
            stats.waited += 1
            stats.wait_seconds += time.perf_counter() - start
            stats.wait_cpu_seconds += time.thread_time() - cpu


def make_lock(
    lock_path: str | Path, style: LockStyle, timeout: float = DEFAULT_TIMEOUT
) -> HomeLock:
    """A fresh lock object per operation (``thread_local=False``; never shared)."""
    lock: MkdirLock | FlockLock
    if style == "mkdir":
        from app.core.mkdir_lock import MkdirLock

        lock = MkdirLock(os.fspath(lock_path), thread_local=False)
    else:
        lock = FlockLock(os.fspath(lock_path))
    return HomeLock(lock, lock_path, timeout)

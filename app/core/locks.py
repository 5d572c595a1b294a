"""Locks: one factory for teamdeck's own home (flock) and a Claude Code home (mkdir).

* ``flock`` -- ``flock(2)`` on a regular ``*.lock`` file (:class:`FlockLock`, the same lock
  ``filelock.FileLock`` takes, without its bookkeeping: an inbox append holds its lock for about
  a millisecond, and filelock's registries cost a third of that); the kernel releases it when
  the holder dies, so a dead process can never leave a stale lock.
* ``mkdir`` -- the protocol of the npm ``proper-lockfile`` package Claude Code uses, so that
  teamdeck and Claude Code exclude each other on the same files. Written as a
  ``filelock.BaseFileLock`` subclass so callers use both styles the same way.

proper-lockfile (v4), which this module mirrors:

* the lock is ``mkdir("{file}.lock")`` (atomic: exactly one creator wins; ``EEXIST`` = held);
* a lock directory whose mtime is more than ``stale`` (10 000 ms) old is stale -- its holder
  died or hung -- and may be taken over: proper-lockfile ``rmdir``\\s it and retries ``mkdir``;
* a holder refreshes the mtime every ``update`` (``stale / 2``) ms while it holds the lock;
* release is ``rmdir``. Nothing is ever written inside the directory.

Where this module is stricter than proper-lockfile (which only matters between teamdeck
processes; a Claude Code process can still race as proper-lockfile itself does):

* A stale lock is *renamed* aside before it is removed, and the renamed inode is checked
  against the one judged stale (kept allocated through an open descriptor, so its number
  cannot be reused meanwhile). If a racing reclaimer replaced it with a fresh lock in between,
  that live lock is put back instead of being destroyed.
* Release removes the directory only if it is still the one we created (same inode as the
  descriptor held open since ``mkdir``): a holder whose lock was taken over as stale never
  deletes the new holder's lock.
* Nothing but ``mkdir`` ever creates the lock path, so no regular file appears where Claude Code
  expects a lock directory.

No mtime refresh: every teamdeck operation under a lock is one read-modify-write of a small
JSON file (milliseconds), far below the 10 s staleness threshold, so a refresh thread would be
pure overhead. A holder that is suspended for longer than that (SIGSTOP, laptop sleep) loses the
lock exactly as a proper-lockfile holder whose refresh timer could not run; the release check
above keeps the aftermath harmless and logs it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import secrets
import shutil
import stat
import time
from pathlib import Path

from filelock import BaseFileLock, Timeout

from app.core.errors import LockTimeoutError, TeamdeckError
from app.core.paths import LockStyle

STALE_AFTER = 10.0  # seconds; proper-lockfile's default ``stale``
DEFAULT_TIMEOUT = 20.0
POLL_INTERVAL = 0.002  # seconds between attempts; a lock is held for milliseconds
POLL_FIRST = 0.0005  # the first wait is shorter: most holders are about to let go

_log = logging.getLogger(__name__)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Opens the directory we just created; the descriptor is our proof of identity at release.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
# Pins whatever occupies the lock path (directory, file or symlink) so its inode number stays
# ours to compare while we decide. O_PATH needs no read permission; elsewhere read-only will do.
_PIN_FLAGS = getattr(os, "O_PATH", os.O_RDONLY | os.O_NONBLOCK) | os.O_NOFOLLOW | _CLOEXEC


class MkdirLock(BaseFileLock):
    """A proper-lockfile compatible lock: ``mkdir(lock_file)``; stale after 10 s by mtime.

    While held, ``_context.lock_file_fd`` is an open descriptor of the lock directory we
    created (filelock's contract: set when acquired, ``None`` otherwise; filelock registers it
    for fork tracking, so a forked child never releases the parent's lock). Construct it with
    ``thread_local=False`` as ``make_lock`` does: one lock object per operation.
    """

    stale_after: float = STALE_AFTER
    # filelock 4 capability flags: the directory *is* the lock, so it cannot be preserved on
    # release, and there is no lock file whose descriptor an ``on_acquired`` hook could use.
    _preserve_lock_file_supported = False
    _on_acquired_supported = False

    def _acquire(self) -> None:
        path = self.lock_file
        # Second attempt only right after a stale lock was removed (as proper-lockfile retries).
        for _ in range(2):
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                if self._reclaim_if_stale(path):
                    continue
                return  # held by someone else: filelock polls again
            self._hold(path)
            return

    def _hold(self, path: str) -> None:
        """Keep a descriptor of the directory we just created: filelock's "held" marker."""
        try:
            fd = os.open(path, _DIR_FLAGS)
        except FileNotFoundError:
            return  # a proper-lockfile peer removed it already (its stale race): not held
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(path)
            raise
        self._context.lock_file_fd = fd

    def _release(self) -> None:
        fd = self._context.lock_file_fd
        assert fd is not None  # filelock calls _release only while held
        path = self.lock_file
        try:
            ours = os.fstat(fd)
            try:
                present: os.stat_result | None = os.lstat(path)
            except FileNotFoundError:
                present = None
            if present is not None and os.path.samestat(present, ours):
                os.rmdir(path)
            else:
                _log.warning(
                    "lock %s was removed or taken over as stale while held (held over %gs?); "
                    "leaving the path alone",
                    path,
                    self.stale_after,
                )
        finally:
            self._context.lock_file_fd = None
            os.close(fd)

    def _reclaim_if_stale(self, path: str) -> bool:
        """Remove the lock at ``path`` if it is stale. True when the caller should retry now."""
        try:
            pin = os.open(path, _PIN_FLAGS)
        except FileNotFoundError:
            return True  # released meanwhile
        except OSError:
            return False  # cannot inspect it: treat as held, the timeout will report it
        try:
            judged = os.fstat(pin)
            if time.time() - judged.st_mtime <= self.stale_after:
                return False
            with contextlib.suppress(FileNotFoundError):
                if not os.path.samestat(os.lstat(path), judged):
                    return True  # replaced since we looked: judge the new one afresh
            grave = f"{path}.stale-{os.getpid()}-{secrets.token_hex(4)}"
            try:
                os.rename(path, grave)
            except FileNotFoundError:
                return True  # another reclaimer (or the owner) was faster
            except OSError:
                return False
            taken = os.lstat(grave)
            if not os.path.samestat(taken, judged):
                # Between our check and the rename, another reclaimer removed the stale lock
                # and a new holder created a fresh one, which we just moved: give it back.
                _put_back(path, grave)
                return False
            _log.info("removed stale lock %s (mtime %.0fs old)", path, time.time() - taken.st_mtime)
            _remove(grave, taken)
            return True
        finally:
            os.close(pin)


def _put_back(path: str, grave: str) -> None:
    """Return a live lock directory that was moved to ``grave`` by mistake.

    ``mkdir`` first claims the path, so nobody can acquire in between; ``rename`` then replaces
    that empty placeholder atomically (POSIX allows renaming a directory over an empty one).
    """
    try:
        os.mkdir(path, 0o700)
    except OSError:
        # A third process acquired in the microseconds the path was free: the moved lock's
        # owner is no longer protected. Nothing can restore that; leave the path to its holder.
        _log.warning("lock %s: a live lock was displaced by a concurrent stale reclaim", path)
        with contextlib.suppress(OSError):
            os.rmdir(grave)
        return
    try:
        os.rename(grave, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.rmdir(path)
        raise


def _remove(path: str, st: os.stat_result) -> None:
    """Remove a renamed-away stale lock (normally an empty directory)."""
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)


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
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | _CLOEXEC
            fd = self._fd = os.open(self._path, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False
            self._close()
            raise
        if os.fstat(fd).st_nlink == 0:  # unlinked before we locked it: not the live lock file
            self._close()
            return False
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
    """This process's lock acquisitions, how many had to wait, and the seconds spent waiting
    (for ``bench/scale.py``'s lock-wait row and anyone diagnosing contention)."""

    __slots__ = ("acquired", "waited", "wait_seconds")

    def __init__(self) -> None:
        self.acquired = 0
        self.waited = 0
        self.wait_seconds = 0.0


stats = LockStats()


class HomeLock:
    """Context manager around a lock that reports a timeout as LockTimeoutError."""

    __slots__ = ("_lock", "_path", "_timeout")

    def __init__(self, lock: BaseFileLock | FlockLock, path: Path, timeout: float) -> None:
        self._lock = lock
        self._path = path
        self._timeout = timeout

    def __enter__(self) -> HomeLock:
        try:
            if isinstance(self._lock, FlockLock):
                self._acquire_flock(self._lock)
            else:
                start = time.perf_counter()
                self._lock.acquire(timeout=self._timeout, poll_interval=POLL_INTERVAL)
                waited = time.perf_counter() - start
                stats.acquired += 1
                if waited > POLL_INTERVAL / 2:
                    stats.waited += 1
                    stats.wait_seconds += waited
        except Timeout:
            raise LockTimeoutError(self._path, self._timeout) from None
        except OSError as exc:  # e.g. a symlink or a directory planted at the lock path
            reason = exc.strerror or type(exc).__name__
            raise LockError(f"could not lock {self._path}: {reason}") from None
        return self

    def _acquire_flock(self, lock: FlockLock) -> None:
        stats.acquired += 1
        if lock.try_acquire():
            return
        start = time.perf_counter()
        deadline = start + self._timeout
        pause = POLL_FIRST
        try:
            while True:
                time.sleep(pause)
                if lock.try_acquire():
                    return
                if time.perf_counter() >= deadline:
                    raise Timeout(str(self._path))
                pause = POLL_INTERVAL
        except BaseException:
            lock.release()  # not held: only closes the descriptor
            raise
        finally:
            stats.waited += 1
            stats.wait_seconds += time.perf_counter() - start

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def make_lock(lock_path: Path, style: LockStyle, timeout: float = DEFAULT_TIMEOUT) -> HomeLock:
    """A fresh lock object per operation (``thread_local=False``; never shared)."""
    lock: BaseFileLock | FlockLock
    if style == "mkdir":
        lock = MkdirLock(str(lock_path), thread_local=False)
    else:
        lock = FlockLock(str(lock_path))
    return HomeLock(lock, lock_path, timeout)

"""Locks: one factory for teamdeck's own home (flock) and a Claude Code home (mkdir).

* ``flock`` -- ``filelock.FileLock`` on a regular ``*.lock`` file; the kernel releases it when
  the holder dies, so a dead process can never leave a stale lock.
* ``mkdir`` -- compatible with the npm ``proper-lockfile`` package Claude Code uses: the lock is
  an atomic ``mkdir`` of ``{file}.lock``; a lock directory whose mtime is older than 10 s is
  stale and is reclaimed by renaming it away, then removing it. Written as a
  ``filelock.BaseFileLock`` subclass so callers use both the same way.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from app.core.errors import LockTimeoutError
from app.core.paths import LockStyle

STALE_AFTER = 10.0  # seconds; proper-lockfile's default ``stale``
DEFAULT_TIMEOUT = 20.0


class MkdirLock(BaseFileLock):
    """A proper-lockfile compatible lock: ``mkdir(lock_file)``; stale after 10 s by mtime.

    While held, ``lock_file_fd`` is a real descriptor of the lock directory (filelock tracks
    descriptors across fork), closed on release.
    """

    stale_after: float = STALE_AFTER

    def _acquire(self) -> None:
        path = self.lock_file
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            self._reclaim_if_stale(path)
            return
        except FileNotFoundError:
            Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(path)
            raise
        self._context.lock_file_fd = fd

    def _release(self) -> None:
        fd = self._context.lock_file_fd
        self._context.lock_file_fd = None
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(self.lock_file)

    def _reclaim_if_stale(self, path: str) -> None:
        """Rename a stale lock directory away (atomic: one reclaimer wins), then remove it."""
        try:
            age = time.time() - os.stat(path, follow_symlinks=False).st_mtime
        except FileNotFoundError:
            return
        if age <= self.stale_after:
            return
        grave = f"{path}.stale-{secrets.token_hex(4)}"
        try:
            os.rename(path, grave)
        except OSError:
            return
        with contextlib.suppress(OSError):
            for entry in os.listdir(grave):
                os.unlink(os.path.join(grave, entry))
            os.rmdir(grave)


class HomeLock:
    """Context manager around a filelock lock that reports a timeout as LockTimeoutError."""

    __slots__ = ("_lock", "_path", "_timeout")

    def __init__(self, lock: BaseFileLock, path: Path, timeout: float) -> None:
        self._lock = lock
        self._path = path
        self._timeout = timeout

    def __enter__(self) -> HomeLock:
        try:
            self._lock.acquire(timeout=self._timeout, poll_interval=0.002)
        except Timeout:
            raise LockTimeoutError(self._path, self._timeout) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def make_lock(lock_path: Path, style: LockStyle, timeout: float = DEFAULT_TIMEOUT) -> HomeLock:
    """A fresh lock object per operation (``thread_local=False``; never shared)."""
    lock: BaseFileLock
    if style == "mkdir":
        lock = MkdirLock(str(lock_path), thread_local=False)
    else:
        lock = FileLock(str(lock_path), thread_local=False, mode=0o600)
    return HomeLock(lock, lock_path, timeout)

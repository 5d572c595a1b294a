"""The ``mkdir`` lock style: the protocol of the npm ``proper-lockfile`` package Claude Code
uses, so that teamdeck and Claude Code exclude each other on the same files. Written as a
``filelock.BaseFileLock`` subclass; imported only by a process that locks a Claude Code home
(``app.core.locks.make_lock``), so teamdeck's own commands never load filelock.

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
import logging
import os
import secrets
import shutil
import stat
import time

from filelock import BaseFileLock, Timeout

STALE_AFTER = 10.0  # seconds; proper-lockfile's default ``stale``

_log = logging.getLogger(__name__)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Opens the directory we just created; the descriptor is our proof of identity at release.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
# Pins whatever occupies the lock path (directory, file or symlink) so its inode number stays
# ours to compare while we decide. O_PATH needs no read permission; elsewhere read-only will do.
_PIN_FLAGS = getattr(os, "O_PATH", os.O_RDONLY | os.O_NONBLOCK) | os.O_NOFOLLOW | _CLOEXEC

__all__ = ["STALE_AFTER", "MkdirLock", "Timeout"]


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

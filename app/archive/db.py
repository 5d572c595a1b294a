"""Opening ``history.db``: where it lives, its pragmas, and errors as one line.

WAL with ``synchronous=NORMAL``: a committed transaction is in the WAL file before ``COMMIT``
returns, so killing the process (even with SIGKILL) never loses it; only a power cut can lose
the last transactions before a checkpoint. Readers (``teamdeck history``, replay) never block
the writer and see only committed transactions.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from pathlib import Path

from app.archive.schema import SchemaError, migrate

HISTORY_FILE = "history.db"
EDQUOT = getattr(errno, "EDQUOT", errno.ENOSPC)
BUSY_TIMEOUT = 5.0


class HistoryUnavailable(Exception):
    """The archive cannot be used; ``str()`` is one line for the person."""


def history_path(home_root: Path, *, claude: bool = False) -> Path:
    """The archive of a home: ``history.db`` in the home itself, except for Claude Code's home,
    which teamdeck never writes its own files into: then teamdeck's own home holds it."""
    from app.core.paths import default_home  # keeps this module light (no pydantic)

    root = default_home() if claude else home_root
    return Path(root) / HISTORY_FILE


def disk_full(path: Path) -> bool:
    """Whether the file system holding ``path`` has no block left for an ordinary user:
    SQLite reports a full disk as "disk I/O error" when it cannot grow its ``-shm`` file."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail == 0 or st.f_favail == 0


def describe_error(path: Path, exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    lowered = text.lower()
    full = "disk is full" in lowered or getattr(exc, "errno", None) in (errno.ENOSPC, EDQUOT)
    if full or ("disk i/o error" in lowered and disk_full(path)):
        return f"No space left on device: {path}"
    if "not a database" in lowered or "malformed" in lowered:
        return f"{path} is damaged ({text}); it was left as it is"
    if "locked" in lowered or "busy" in lowered:
        return f"{path} is locked by another program"
    if isinstance(exc, SchemaError):
        return f"{path}: {text}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{path}: {exc.strerror}"
    return f"{path}: {text}"


def connect(
    path: Path,
    *,
    busy_timeout: float = BUSY_TIMEOUT,
    create: bool = True,
    migrate_schema: bool = True,
) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), schema up to date.

    Raises HistoryUnavailable with a one-line reason; never creates, truncates or rewrites a
    file it cannot read (a damaged database stays on disk for the person to look at)."""
    made = False
    try:
        if os.path.islink(path):  # a dangling one too: never write where a link points
            raise HistoryUnavailable(f"{path} is a symlink; refusing to follow it")
        if not path.exists():
            if not create:
                raise HistoryUnavailable(f"no history yet ({path} does not exist)")
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW
            os.close(os.open(path, flags, 0o600))
            made = True
        conn = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    except HistoryUnavailable:
        raise
    except (OSError, sqlite3.Error) as exc:
        _forget(path, made)
        raise HistoryUnavailable(describe_error(path, exc)) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError("database is locked (cannot switch to WAL)")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if migrate_schema:
            migrate(conn)
    except (sqlite3.Error, SchemaError) as exc:
        conn.close()
        _forget(path, made)
        raise HistoryUnavailable(describe_error(path, exc)) from None
    return conn


def _forget(path: Path, made: bool) -> None:
    """Remove the database file this call created if it is still empty (a full disk must not
    leave a 0-byte ``history.db`` that every later ``teamdeck history`` would trip on)."""
    if not made:
        return
    with contextlib.suppress(OSError):
        if os.lstat(path).st_size == 0:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{path}{suffix}")

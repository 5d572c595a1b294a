"""The task side of a recording: each task's last recorded state, and where a state comes from.

This process's own writes say what they wrote (``TaskChanged.task``, ``written``), so their
states are recorded as written, with no file read. Another process's writes are read from the
file; a read that finds a file this process wrote (by its identity: an atomic write gives every
version its own) is one the write's own event recorded already, and is skipped. A read older
than one already applied (read at an earlier monotonic time) is stale and dropped.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.archive import adapter
from app.core import Home
from app.core.errors import TeamdeckError
from app.core.events import FileIdentity

#: Identities of the last task files written per task by this process.
OWN_WRITES_KEPT = 16


@dataclass(frozen=True, slots=True)
class TaskView:
    status: str
    owner: str | None
    subject: str


#: A task as read: a view, ``None`` once deleted, ``False`` for nothing to record (unreadable,
#: internal, or a file this process wrote).
Seen = TaskView | Literal[False] | None
#: Writes one task event: ``(conn, owner, task_id, status, subject, data)``.
RecordTask = Callable[[sqlite3.Connection, str | None, str, str, str, dict[str, Any]], None]


class TaskLog:
    def __init__(self, home: Home) -> None:
        self.home = home
        #: Only this process's writes are in the events; the file reads skip them.
        self.local = False
        # Writer-thread state.
        self._last: dict[tuple[str, str], tuple[str, str | None]] = {}
        self._taken: dict[tuple[str, str], float] = {}
        self._done: set[tuple[str, str]] = set()
        # Any thread.
        self._own: dict[tuple[str, str], deque[FileIdentity]] = {}
        self._own_lock = threading.Lock()

    # ------------------------------------------------------------------ where states come from

    def from_event(self, event: Any, team: str, task_id: str) -> Seen:
        """The state a ``TaskChanged`` of this process's writer announces (the file, if the
        event does not say)."""
        known, written = adapter.written_task(event)
        if not known:
            return self.read(team, task_id)
        identity = getattr(event, "written", None)
        if identity is not None:
            with self._own_lock:
                kept = self._own.setdefault((team, task_id), deque(maxlen=OWN_WRITES_KEPT))
                kept.append(identity)
        if written is None:
            return None
        if written["internal"]:
            return False
        return TaskView(written["status"], written["owner"], written["subject"])

    def read(self, team: str, task_id: str, *, skip_own: bool = False) -> Seen:
        """The task as its file says now (``skip_own``: ``False`` for a file this process
        wrote, whose own event was recorded)."""
        try:
            path = self.home.layout.task_path(team, task_id)
        except TeamdeckError:
            return False
        identity, data = read_file_json(path)
        if identity is not None and skip_own:
            with self._own_lock:
                if identity in self._own.get((team, task_id), ()):
                    return False
        if not isinstance(data, dict):
            return None if identity is None and not path.exists() else False
        if (data.get("metadata") or {}).get("_internal"):
            return False
        return TaskView(
            str(data.get("status", "pending")), data.get("owner"), str(data.get("subject", ""))
        )

    # ------------------------------------------------------------------ recording (writer thread)

    def resume(self, team: str, recorded: list[tuple[str, str, str | None]]) -> None:
        """The states a run recorded before (task id, status, owner; oldest first)."""
        for task_id, status, owner in recorded:
            key = (team, task_id)
            self._last[key] = (status, owner)
            if status == "completed":
                self._done.add(key)

    def apply(
        self,
        conn: sqlite3.Connection,
        team: str,
        task_id: str,
        task: Seen,
        taken: float,
        record: RecordTask,
    ) -> bool:
        """Record the change ``task`` (seen at monotonic time ``taken``) makes, through
        ``record``; returns whether the task was completed for the first time."""
        key = (team, task_id)
        if task is False or taken < self._taken.get(key, 0.0):
            return False
        self._taken[key] = taken
        old = self._last.get(key)
        if task is None:
            if old is None or not self.home.layout.task_dir(team).is_dir():
                return False  # never seen, or the whole team was deleted (not a task change)
            new: tuple[str, str | None] = ("deleted", old[1])
            subject = ""
        else:
            new = (task.status, task.owner)
            subject = task.subject
        if new == old:
            return False
        self._last[key] = new
        data: dict[str, Any] = {"old": old[0] if old else None, "new": new[0], "owner": new[1]}
        if old is not None and old[1] != new[1]:
            data["old_owner"] = old[1]
        record(conn, new[1], task_id, new[0], subject, data)
        if new[0] == "completed" and key not in self._done:
            self._done.add(key)
            return True
        return False


def read_file_json(path: Path) -> tuple[FileIdentity | None, Any]:
    """The file's identity and its JSON (``None`` if unreadable), from one open file: the
    identity is exactly that of the content read (an atomic write replaces the inode)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            raw = fh.read()
    except OSError:
        return None, None
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        return identity, json.loads(raw)
    except ValueError:
        return identity, None

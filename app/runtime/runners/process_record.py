"""An agent's process record: ``teams/{team}/agents/{name}.json`` (teamdeck's own).

``{name}.json`` -- the **process record**: ``{"name", "team", "pid", "backend", "startedAt",
"procStart"?, "tmuxTarget"?}``, written atomically when the process starts. Its mtime is the
heartbeat: touched every ``HEARTBEAT_S`` by a thread of the agent process. A process is alive
while its pid exists and its heartbeat is younger than ``STALE_AFTER_S``. ``procStart`` (the
lead's: the process's start time in clock ticks since boot, ``/proc/<pid>/stat`` field 22, as
Claude Code's ``leadProcess.procStart``) tells a pid that was reused from the process itself.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.files import atomic_write_json, ensure_dir, new_dir_mode

HEARTBEAT_S = 2.0
STALE_AFTER_S = 15.0


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class AgentRecord:
    """Which process runs an agent (see the module docstring)."""

    name: str
    team: str
    pid: int
    backend: str
    started_at: int = field(default_factory=now_ms)
    tmux_target: str | None = None
    proc_start: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "team": self.team,
            "pid": self.pid,
            "backend": self.backend,
            "startedAt": self.started_at,
        }
        if self.tmux_target:
            data["tmuxTarget"] = self.tmux_target
        if self.proc_start is not None:
            data["procStart"] = self.proc_start
        return data

    @classmethod
    def from_json(cls, data: Any) -> AgentRecord | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                name=str(data["name"]),
                team=str(data["team"]),
                pid=int(data["pid"]),
                backend=str(data.get("backend") or "process"),
                started_at=int(data.get("startedAt") or 0),
                tmux_target=data.get("tmuxTarget") or None,
                proc_start=int(data["procStart"]) if data.get("procStart") is not None else None,
            )
        except (KeyError, TypeError, ValueError):
            return None


class TeamGoneError(FileNotFoundError):
    """The team's folder was deleted: an agent's files go with it (not a failure)."""


def agents_folder(path: Path) -> None:
    """Create the ``agents/`` folder of a file's path, but never a deleted team's folder: the
    team's folder is not created (a check then a create with parents would bring it back when
    the team is deleted in between: a stub team folder)."""
    folder = path.parent
    mode = new_dir_mode(folder)
    try:
        folder.mkdir(mode=mode)
        os.chmod(folder, mode)  # exact, whatever the umask
    except FileExistsError:
        ensure_dir(folder)  # refuses a symlink in its place
    except FileNotFoundError:
        raise TeamGoneError(2, "the team's folder is gone", str(folder.parent)) from None


def write_record(path: Path, record: AgentRecord) -> None:
    agents_folder(path)
    try:
        atomic_write_json(path, record.to_json(), make_dirs=False)
    except FileNotFoundError:
        raise TeamGoneError(2, "the team's folder is gone", str(path.parent.parent)) from None


def read_record(path: Path) -> tuple[AgentRecord, float] | None:
    """The record and the age of its heartbeat in seconds; ``None`` if there is none (or it
    cannot be read: a process with no readable record cannot be told alive)."""
    try:
        raw = path.read_bytes()
        age = time.time() - path.stat().st_mtime
    except OSError:
        return None
    try:
        record = AgentRecord.from_json(json.loads(raw))
    except ValueError:
        return None
    return (record, max(0.0, age)) if record is not None else None


def pid_exists(pid: int) -> bool:
    """Whether process ``pid`` still runs. A zombie (ended, not yet reaped by its parent)
    does not: a teammate process whose lead was killed is handed to init, and an init that
    does not reap (a container's pid 1 often does not) keeps it a zombie for good -- it would
    look alive for ever to the lead's files, to ``attach`` and to the team's other checks."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        pass
    return not _ended(pid)


def _ended(pid: int) -> bool:
    """Whether ``/proc`` says process ``pid`` is a zombie (``Z``) or dead (``X``); False where
    it cannot be read (no ``/proc``: ``kill`` alone answers)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        # Field 3; the command name (field 2) may hold spaces and parentheses: after the last ")".
        return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] in (b"Z", b"X")
    except (OSError, ValueError):
        return False


def proc_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), ``None`` where it cannot be read
    (no such process, no ``/proc``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        # Field 22; the command name (field 2) may hold spaces and parentheses: count from
        # the last ")".
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def same_process(record: AgentRecord) -> bool:
    """Whether the process ``record`` names still runs: its pid exists and, where the record
    has its start time, started then (not a later process given the same pid)."""
    if not pid_exists(record.pid):
        return False
    if record.proc_start is None:
        return True
    now = proc_start(record.pid)
    return now is None or now == record.proc_start


def is_alive(record: AgentRecord, heartbeat_age: float) -> bool:
    return pid_exists(record.pid) and heartbeat_age < STALE_AFTER_S


class Heartbeat:
    """Touches the record every ``HEARTBEAT_S`` from a thread of its own (so a busy event loop
    does not look like a dead process); stops when told to or when the record is gone."""

    def __init__(self, path: Path, interval: float = HEARTBEAT_S) -> None:
        self.path = path
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                os.utime(self.path)
            except OSError:  # the team was deleted: nothing left to keep alive
                return

"""Starting the recording of a run: the few lines the dashboard and headless runner call.

    recorder = start_run(home, runtime, source="headless", goal=goal, warn=print_warning)
    ...                                   # after runtime.start(): recorder.watch(watcher)
    recorder.close("finished", reason)

When the archive cannot be used (``--no-history``, a damaged or locked ``history.db``), the
recorder is a ``NullRecorder``: the same methods, doing nothing; ``warn`` got one line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.archive import adapter
from app.archive.db import BUSY_TIMEOUT, HistoryUnavailable, connect, describe_error, history_path
from app.archive.recorder import Recorder
from app.archive.writer import Writer
from app.core import Home

Warn = Callable[[str], None]


class NullRecorder:
    """Records nothing (history off or unavailable)."""

    available = False
    run_id: int | None = None
    team: str | None = None
    team_deleted = False

    def __init__(self, error: str | None = None) -> None:
        self.error = error

    def attach(self, runtime: Any) -> None:
        pass

    def watch(self, watcher: Any) -> None:
        pass

    def watch_home(self) -> None:
        pass

    def set_team(self, team: str | None) -> None:
        pass

    def sweep_existing(self, team: str) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass

    def on_changes(self, batch: list[Any]) -> None:
        pass

    def claude_hook(self, event: Any) -> None:
        pass

    def flush(self, timeout: float = 10.0) -> bool:
        return True

    def close(self, outcome: str, reason: str = "", *, timeout: float = 10.0) -> None:
        pass


AnyRecorder = Recorder | NullRecorder


def unavailable_line(reason: str) -> str:
    return f"history unavailable: {reason} (the team keeps working; nothing is recorded)"


def start_run(
    home: Home,
    runtime: Any,
    *,
    source: str,
    goal: str | None = None,
    enabled: bool = True,
    claude: bool = False,
    path: Path | None = None,
    budget: float | None = None,
    warn: Warn | None = None,
    busy_timeout: float = BUSY_TIMEOUT,
) -> AnyRecorder:
    """Open the archive, add the run, start recording ``runtime`` (may be ``None`` for a run
    fed only by file changes, e.g. an attach). Never raises for the archive's sake."""
    if not enabled:
        return NullRecorder()
    path = path or history_path(home.root, claude=claude)
    model, offline = adapter.runtime_model(runtime) if runtime is not None else ("", False)

    def failed(message: str) -> None:
        if warn is not None:
            warn(unavailable_line(message))

    try:
        conn = connect(path, busy_timeout=busy_timeout)
        try:
            conn.execute("BEGIN IMMEDIATE")
            cursor = conn.execute(
                "INSERT INTO runs (team, goal, source, model, offline, home, pid, started_at,"
                " budget_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    getattr(runtime, "team", None),
                    goal or "",
                    source,
                    model,
                    int(offline),
                    str(home.root),
                    os.getpid(),
                    time.time(),
                    budget,
                ),
            )
            conn.execute("COMMIT")
        except Exception:
            conn.close()
            raise
        run_id = int(cursor.lastrowid or 0)
    except HistoryUnavailable as exc:
        failed(str(exc))
        return NullRecorder(str(exc))
    except Exception as exc:  # sqlite3.Error after the connection opened
        message = describe_error(path, exc)
        failed(message)
        return NullRecorder(message)
    writer = Writer(conn, path, on_error=failed)
    recorder = Recorder(writer, run_id, home, model=model, offline=offline)
    recorder.watch_home()
    if runtime is not None:
        recorder.attach(runtime)
        team = getattr(runtime, "team", None)
        if team:
            recorder.set_team(team)
    return recorder

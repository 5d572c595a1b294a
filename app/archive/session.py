"""Starting the recording of a run: the few lines the dashboard and headless runner call.

    recorder = start_run(home, runtime, source="headless", goal=goal, warn=print_warning)
    ...                                   # after runtime.start(): recorder.watch(watcher)
    recorder.close("finished", reason)

An attach (``teamdeck attach``, ``--team NAME`` on a team left on disk) goes on with the run
that left the team (``continue_team``): the same row, goal and events, the attach recorded as a
"team attached" event -- one run in ``teamdeck history`` and one replay, whichever dashboard
saw which part. A demo records in the archive of the home it was started from, not in its own
temporary home, so that archive is looked in too (``archives``).

When the archive cannot be used (``--no-history``, a damaged or locked ``history.db``), the
recorder is a ``NullRecorder``: the same methods, doing nothing; ``warn`` got one line.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.archive import adapter
from app.archive.db import BUSY_TIMEOUT, HistoryUnavailable, connect, describe_error, history_path
from app.archive.recorder import Recorder
from app.archive.writer import Writer
from app.core import Home
from app.core.paths import default_home

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
    continue_team: str | None = None,
) -> AnyRecorder:
    """Open the archive, add the run, start recording ``runtime`` (may be ``None`` for a run
    fed only by file changes, e.g. an attach). ``continue_team``: the team attached; the run
    that left it goes on, if an archive holds it (``left_run``). Never raises for the
    archive's sake."""
    if not enabled:
        return NullRecorder()
    path = path or history_path(home.root, claude=claude)
    left = left_run(archives(path), continue_team, home) if continue_team else None
    if left is not None:
        path = left[0]
    model, offline = adapter.runtime_model(runtime) if runtime is not None else ("", False)

    def failed(message: str) -> None:
        if warn is not None:
            warn(unavailable_line(message))

    try:
        conn = connect(path, busy_timeout=busy_timeout)
        try:
            conn.execute("BEGIN IMMEDIATE")
            continued = left is not None and _reopen(conn, left[1], continue_team or "")
            counted: dict[str, tuple[int, int, int, int, int]] = {}
            if left is not None and continued:
                run_id = left[1]
                counted = _counted(conn, run_id)
            else:
                run_id = _insert_run(conn, runtime, home, source, goal, model, offline, budget)
            conn.execute("COMMIT")
        except Exception:
            conn.close()
            raise
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
    if continue_team and continued:
        recorder.runtime_events.resume_usage(counted)
        recorder.continue_team(continue_team)
    elif continue_team:
        recorder.set_team(continue_team)
    return recorder


def archives(path: Path) -> list[Path]:
    """Where a team's run may be: ``path``, then teamdeck's own home's archive (a demo's)."""
    own = history_path(default_home())
    return [path] if own == path else [path, own]


def left_run(paths: list[Path], team: str, home: Home) -> tuple[Path, int] | None:
    """The last run of ``team`` in ``home`` that did not finish, and the archive holding it."""
    for path in paths:
        if not path.is_file():
            continue
        try:
            conn = connect(path, create=False)
        except HistoryUnavailable:
            continue
        try:
            row = conn.execute(
                "SELECT id FROM runs WHERE team = ? AND home = ? AND"
                " coalesce(outcome, '') != 'finished' ORDER BY id DESC LIMIT 1",
                (team, str(home.root)),
            ).fetchone()
        except sqlite3.Error:
            row = None
        finally:
            conn.close()
        if row is not None:
            return path, int(row[0])
    return None


def _counted(conn: sqlite3.Connection, run_id: int) -> dict[str, tuple[int, int, int, int, int]]:
    """Each agent's tokens (input, output, cache read, cache write) and model calls recorded in
    the run so far: an attached team's agents go on counting from there."""
    found = conn.execute(
        "SELECT agent, sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),"
        " sum(cache_write_tokens), count(*) FROM model_calls WHERE run_id = ? GROUP BY agent",
        (run_id,),
    )
    return {str(a): (int(i), int(o), int(r), int(w), int(n)) for a, i, o, r, w, n in found}


def _reopen(conn: sqlite3.Connection, run_id: int, team: str) -> bool:
    """The run goes on in this process: no end yet, this pid; the attach is an event."""
    at = time.time()
    cursor = conn.execute(
        "UPDATE runs SET ended_at = NULL, outcome = NULL, reason = NULL, pid = ?, events ="
        " events + 1 WHERE id = ? AND coalesce(outcome, '') != 'finished'",
        (os.getpid(), run_id),
    )
    if cursor.rowcount != 1:
        return False
    conn.execute(
        "INSERT INTO events (run_id, at, kind, target, frame, text) VALUES (?, ?, ?, ?, ?, ?)",
        (run_id, at, "team", team, "attached", f"team {team} attached (pid {os.getpid()})"),
    )
    return True


def _insert_run(
    conn: sqlite3.Connection,
    runtime: Any,
    home: Home,
    source: str,
    goal: str | None,
    model: str,
    offline: bool,
    budget: float | None,
) -> int:
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
    return int(cursor.lastrowid or 0)

"""Reading the archive: the run list, one run's agents and timeline, export, prune.

Read-only connections (``mode=ro``) never block the writer of a running team (WAL) and never
create or migrate anything, except ``prune``, which deletes.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.archive.db import HistoryUnavailable, connect, describe_error
from app.archive.schema import SCHEMA_VERSION, version


@dataclass
class RunSummary:
    id: int
    team: str | None
    goal: str
    source: str
    model: str
    offline: bool
    started_at: float
    ended_at: float | None
    outcome: str
    reason: str
    agents: int
    tasks_done: int
    messages: int
    events: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float
    budget_usd: float | None

    @property
    def duration(self) -> float | None:
        return None if self.ended_at is None else self.ended_at - self.started_at

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["duration"] = self.duration
        data["tokens"] = self.tokens
        return data


class Event:
    """One timeline event; ``data`` (JSON in the database) is parsed when first read."""

    __slots__ = ("id", "at", "kind", "agent", "target", "frame", "text", "size", "_raw", "_data")

    def __init__(
        self,
        id: int,
        at: float,
        kind: str,
        agent: str | None,
        target: str | None,
        frame: str | None,
        text: str,
        size: int | None,
        raw: str | None,
    ) -> None:
        self.id, self.at, self.kind, self.agent, self.target = id, at, kind, agent, target
        self.frame, self.text, self.size = frame, text, size
        self._raw = raw
        self._data: dict[str, Any] | None = None

    @property
    def data(self) -> dict[str, Any] | None:
        if self._data is None and self._raw:
            self._data = json.loads(self._raw)
        return self._data

    def __repr__(self) -> str:
        return f"Event({self.id}, {self.kind}, {self.agent}, {self.frame}, {self.text[:40]!r})"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "kind": self.kind,
            "agent": self.agent,
            "target": self.target,
            "frame": self.frame,
            "text": self.text,
            "size": self.size,
            "data": self.data,
        }


RUN_COLUMNS = (
    "id, team, goal, source, model, offline, started_at, ended_at, outcome, reason, pid, agents,"
    " tasks_done, messages, events, input_tokens, output_tokens, cache_read_tokens,"
    " cache_write_tokens, cost_usd, budget_usd"
)


def open_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection; HistoryUnavailable (one line) if there is no usable archive."""
    if not path.exists():
        raise HistoryUnavailable(f"no history yet ({path} does not exist)")
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0)
        found = version(conn)
        if found == 0:
            conn.close()
            raise HistoryUnavailable(f"no history yet ({path} is empty)")
        if found < SCHEMA_VERSION:  # an older teamdeck wrote it: upgrade it first
            conn.close()
            connect(path).close()
            conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0)
        elif found > SCHEMA_VERSION:
            conn.close()
            raise HistoryUnavailable(
                f"{path}: written by a newer teamdeck (schema {found}, this one knows "
                f"{SCHEMA_VERSION})"
            )
        conn.execute("SELECT 1 FROM runs LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        line = describe_error(path, exc)
        if line.startswith("No space left on device"):
            return _read_on_full_disk(path, line)
        raise HistoryUnavailable(line) from None
    return conn


def _read_on_full_disk(path: Path, line: str) -> sqlite3.Connection:
    """On a full disk SQLite cannot make the ``-shm`` file a WAL reader needs: read the main
    file alone (``immutable``). A run closed cleanly was checkpointed into it; what a running
    writer still holds in its WAL is not seen until there is space again."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)
        if version(conn) != SCHEMA_VERSION:
            conn.close()
            raise HistoryUnavailable(line)
        conn.execute("SELECT 1 FROM runs LIMIT 1").fetchall()
    except sqlite3.Error:
        raise HistoryUnavailable(line) from None
    return conn


def _summary(row: sqlite3.Row | tuple[Any, ...]) -> RunSummary:
    (
        run_id,
        team,
        goal,
        source,
        model,
        offline,
        started,
        ended,
        outcome,
        reason,
        pid,
        *counts,
    ) = row
    if outcome is None:
        outcome = "running" if process_alive(pid) else "interrupted"
    return RunSummary(
        run_id,
        team,
        goal or "",
        source,
        model or "",
        bool(offline),
        started,
        ended,
        outcome,
        reason or "",
        *counts,
    )


def list_runs(conn: sqlite3.Connection, limit: int | None = None) -> list[RunSummary]:
    """Newest first."""
    sql = f"SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [_summary(row) for row in conn.execute(sql)]


def resolve_run(conn: sqlite3.Connection, ref: str) -> RunSummary:
    """A run by id (``12``, ``#12``) or ``last``; NotFound as HistoryUnavailable's sibling."""
    text = ref.strip().lstrip("#")
    if text in ("last", "latest"):
        row = conn.execute(f"SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            raise RunNotFound("no runs recorded yet")
        return _summary(row)
    if not re.fullmatch(r"\d{1,18}", text):
        raise RunNotFound(f"{ref!r} is not a run id (a number from `teamdeck history`, or last)")
    row = conn.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?", (int(text),)).fetchone()
    if row is None:
        raise RunNotFound(f"run {text} is not in the history")
    return _summary(row)


class RunNotFound(LookupError):
    pass


def agents(conn: sqlite3.Connection, run_id: int) -> list[dict[str, Any]]:
    cursor = conn.execute(
        "SELECT name, agent_type, model, mode, color, spawned_at, exited_at, exit_status,"
        " exit_reason, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,"
        " cost_usd FROM agents WHERE run_id = ? ORDER BY spawned_at, rowid",
        (run_id,),
    )
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def approvals(conn: sqlite3.Connection, run_id: int) -> list[dict[str, Any]]:
    cursor = conn.execute(
        "SELECT request_id, kind, agent, title, asked_at, answered_at, decision, decided_by,"
        " feedback FROM approvals WHERE run_id = ? ORDER BY asked_at",
        (run_id,),
    )
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


#: The columns of an ``Event``, in ``row_event``'s order.
EVENT_SELECT = "SELECT id, at, kind, agent, target, frame, text, size, data FROM events"


def row_event(row: tuple[Any, ...]) -> Event:
    event_id, at, kind, agent, target, frame, text, size, data = row
    return Event(event_id, at, kind, agent, target, frame, text or "", size, data)


def count_events(conn: sqlite3.Connection, run_id: int) -> int:
    """How many events the run has (counted on the index, without reading them)."""
    return int(
        conn.execute("SELECT count(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
    )


def events(
    conn: sqlite3.Connection,
    run_id: int,
    *,
    after: int = 0,
    limit: int | None = None,
    kinds: tuple[str, ...] | None = None,
    by_time: bool = False,
) -> Iterator[Event]:
    """The run's timeline in the order it was stored (``after``: only events with a larger
    id), or ``by_time``: in the order things happened (ties in the stored order)."""
    sql = f"{EVENT_SELECT} WHERE run_id = ? AND id > ?"
    params: list[Any] = [run_id, after]
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    sql += " ORDER BY at, id" if by_time else " ORDER BY id"
    if limit:
        sql += f" LIMIT {int(limit)}"
    for row in conn.execute(sql, params):
        yield row_event(row)


def prune(path: Path, older_than: float, *, now: float | None = None) -> int:
    """Delete finished runs that started more than ``older_than`` seconds ago; returns how many.
    Runs still being recorded are kept whatever their age."""
    cutoff = (now or time.time()) - older_than
    conn = connect(path, create=False)
    try:
        rows = conn.execute(
            "SELECT id, ended_at, pid FROM runs WHERE started_at < ?", (cutoff,)
        ).fetchall()
        doomed = [r[0] for r in rows if r[1] is not None or not process_alive(r[2])]
        conn.execute("BEGIN IMMEDIATE")
        for start in range(0, len(doomed), 500):
            chunk = doomed[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for table in ("replay_segments", "model_calls", "events", "agents", "approvals"):
                conn.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM runs WHERE id IN ({marks})", chunk)
        conn.execute("COMMIT")
        if doomed:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        raise HistoryUnavailable(describe_error(path, exc)) from None
    finally:
        conn.close()
    return len(doomed)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s`` -> seconds; ValueError (one line) otherwise."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"--older-than {text!r}: give a number and a unit, e.g. 30d, 12h, 2w")
    return float(match.group(1)) * _UNITS[match.group(2)]


def process_alive(pid: int | None) -> bool:
    """Whether the process ``pid`` (a run's writer) still runs: a run without an end whose
    process is gone was interrupted."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

"""The archive's schema: numbered migrations, applied in order, recorded in ``user_version``.

Version 1 is the first schema; every later change is a new entry in ``MIGRATIONS`` (never an
edit of an old one), so a database written by any earlier teamdeck opens and upgrades in
place. A database from a *newer* teamdeck (a version we do not know) is refused, not touched.

Tables (times are epoch seconds, UTC):

* ``runs`` — one row per run: team, goal, source (dashboard | headless | demo | attach), model,
  offline, home, pid, started_at, ended_at, outcome, reason, and running totals kept in step
  with the events (agents, messages, tasks_done, events, tokens by kind, cost_usd).
  v2 adds ``budget_usd``.
* ``agents`` — per run and name: agent_type, model, mode, color, spawned_at, exited_at,
  exit_status, exit_reason, tokens by kind, cost_usd.
* ``events`` — the timeline, in order (``id``): kind (status | message | task | approval |
  transcript | usage | team | run | mode), agent, target (recipient, task id, request id, ...),
  frame (frame type, task status, approval kind, transcript kind), text, size (the text's size
  before truncation), data (JSON), key (dedup key of a message; unique per run).
* ``model_calls`` — one row per model call: agent, model, the four token counts, cost_usd.
* ``approvals`` — per run and request id: kind, agent, title, body, asked_at, answered_at,
  decision, decided_by, feedback.
* ``replay_segments`` (v4) — per run, one row per ``CHECKPOINT`` events in order: their ids
  and times, the positions of the messages (arrays of bytes), of each agent's transcript
  entries (JSON), and the team's state after them (JSON); see ``app.archive.replay_index``.
"""

from __future__ import annotations

import sqlite3

V1 = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    team TEXT,
    goal TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    offline INTEGER NOT NULL DEFAULT 0,
    home TEXT NOT NULL DEFAULT '',
    pid INTEGER,
    started_at REAL NOT NULL,
    ended_at REAL,
    outcome TEXT,
    reason TEXT,
    agents INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    tasks_done INTEGER NOT NULL DEFAULT 0,
    events INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0
);
CREATE INDEX runs_started ON runs(started_at);

CREATE TABLE agents (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    agent_type TEXT,
    model TEXT,
    mode TEXT,
    color TEXT,
    spawned_at REAL,
    exited_at REAL,
    exit_status TEXT,
    exit_reason TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, name)
);

CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    agent TEXT,
    target TEXT,
    frame TEXT,
    text TEXT,
    size INTEGER,
    data TEXT,
    key TEXT
);
CREATE INDEX events_run ON events(run_id, id);
CREATE UNIQUE INDEX events_key ON events(run_id, key) WHERE key IS NOT NULL;

CREATE TABLE model_calls (
    event_id INTEGER PRIMARY KEY REFERENCES events(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    agent TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    cost_usd REAL
);
CREATE INDEX model_calls_run ON model_calls(run_id);

CREATE TABLE approvals (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    request_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    agent TEXT NOT NULL,
    title TEXT,
    body TEXT,
    asked_at REAL,
    answered_at REAL,
    decision TEXT,
    decided_by TEXT,
    feedback TEXT,
    PRIMARY KEY (run_id, request_id)
);
"""

V2 = """
ALTER TABLE runs ADD COLUMN budget_usd REAL;
CREATE INDEX events_run_kind ON events(run_id, kind);
"""

#: ``history show`` and ``history export`` list a run's events in time order: an event is
#: sometimes stored after a later one (a task file read once its burst of changes is over).
V3 = """
CREATE INDEX events_run_at ON events(run_id, at, id);
"""

#: A replay opens without walking the whole run: its index and checkpoints, one row per
#: ``CHECKPOINT`` events, written by the recorder (``app.archive.replay_index``). Runs recorded
#: before have none and are walked in full, as before.
V4 = """
CREATE TABLE replay_segments (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    segment INTEGER NOT NULL,
    first_id INTEGER NOT NULL,
    last_id INTEGER NOT NULL,
    ids BLOB NOT NULL,
    times BLOB NOT NULL,
    messages BLOB NOT NULL,
    entries TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (run_id, segment)
);
"""

#: ``MIGRATIONS[n]`` takes a database from version ``n`` to ``n + 1``.
MIGRATIONS: list[str] = [V1, V2, V3, V4]
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(Exception):
    """The database is from a newer teamdeck, or a migration failed."""


def version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the database to ``target``, one migration per transaction; returns the version
    it had. The connection must be in autocommit mode (``isolation_level=None``)."""
    start = version(conn)
    if start > SCHEMA_VERSION:
        raise SchemaError(
            f"it was written by a newer teamdeck (schema {start}, this one knows {SCHEMA_VERSION})"
        )
    for step in range(start, target):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if version(conn) == step:  # another process may have migrated meanwhile
                for statement in _statements(MIGRATIONS[step]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {step + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return start


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]

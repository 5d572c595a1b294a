"""A teammate's event log across machines: its machine sends the lines, the desk's machine
writes them into its own copy (``teams/{team}/agents/{name}.jsonl``), which the lead's runtime
reads as it reads any teammate process's log (``app.runtime.runners.external``): the dashboard
shows a remote teammate's panel, status and transcript exactly like a local one's.

Each line is an event row (kind ``log``) keyed by its byte offset in the sender's log, so a send
repeated after a lost link is one line; the receiver keeps the last row id copied per team.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from app.core.errors import CorruptFileError
from app.core.files import atomic_write_json
from app.core.home import Home
from app.engine.link import Link

_BATCH = 500


def push_log(home: Home, team: str, name: str, link: Link) -> int:
    """Send the lines of ``name``'s log not sent yet (complete lines only); how many."""
    path = home.layout.agent_log_path(team, name)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0

    def last(conn: psycopg.Connection) -> int:
        row = conn.execute(
            "SELECT max((body->>'end')::bigint) FROM teamdeck.events"
            " WHERE team = %s AND actor = %s AND kind = 'log'",
            (team, name),
        ).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    start = link.read(last)
    rows = []
    offset = start
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            break  # a line still being written
        line = data[offset:end].decode("utf-8", errors="replace")
        rows.append((team, name, Jsonb({"offset": offset, "end": end + 1, "line": line})))
        offset = end + 1
    for i in range(0, len(rows), _BATCH):
        batch = rows[i : i + _BATCH]

        def insert(conn: psycopg.Connection, batch: list[tuple[str, str, Jsonb]] = batch) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO teamdeck.events (team, actor, kind, body)"
                    " VALUES (%s, %s, 'log', %s)"
                    " ON CONFLICT (team, actor, ((body->>'offset'))) WHERE kind = 'log'"
                    " DO NOTHING",
                    batch,
                )

        link.run(insert)
    return len(rows)


def _cursor_path(home: Home, team: str) -> Path:
    return home.root / "engine" / "cursors" / f"{team}.logs.json"


def pull_logs(home: Home, team: str, names: set[str], desk: Link) -> int:
    """Append the engine's new log lines of ``names`` (teammates running elsewhere) to this
    home's copies of their logs; how many lines."""
    path = _cursor_path(home, team)
    try:
        cursor = int(json.loads(path.read_text(encoding="utf-8")).get("last", 0))
    except FileNotFoundError:
        cursor = 0
    except (OSError, ValueError, AttributeError) as exc:
        raise CorruptFileError(path, str(exc)) from None
    rows = desk.read(
        lambda c: c.execute(
            "SELECT id, actor, body->>'line' FROM teamdeck.events WHERE team = %s"
            " AND kind = 'log' AND id > %s AND actor = ANY (%s) ORDER BY id",
            (team, cursor, sorted(names)),
        ).fetchall()
    )
    if not rows:
        return 0
    by_actor: dict[str, list[str]] = {}
    for _, actor, line in rows:
        by_actor.setdefault(actor, []).append(line)
    for actor, lines in by_actor.items():
        log = home.layout.agent_log_path(team, actor)
        log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with log.open("a", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in lines))
    atomic_write_json(path, {"last": rows[-1][0]})
    return len(rows)

"""Versioned migrations of the ``teamdeck`` schema: ``schema/NNN_name.sql``, applied in order,
each once, in one transaction with its record, under an advisory lock (two processes that
start against a new database do not both apply them)."""

from __future__ import annotations

import re
from importlib import resources

import psycopg

from app.engine.errors import EngineVersionError

SCHEMA = "teamdeck"
_LOCK = 0x7EA3DEC4  # pg_advisory_xact_lock key of the migrations
_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every migration shipped, in order."""
    found = []
    for item in resources.files("app.engine").joinpath("schema").iterdir():
        match = _NAME.match(item.name)
        if match:
            found.append((int(match.group(1)), item.name, item.read_text(encoding="utf-8")))
    return sorted(found)


def latest() -> int:
    return migrations()[-1][0]


def applied(conn: psycopg.Connection) -> int:
    """The schema's version in this database (0: none yet)."""
    row = conn.execute("SELECT to_regclass('teamdeck.migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    got = conn.execute("SELECT coalesce(max(version), 0) FROM teamdeck.migrations").fetchone()
    return int(got[0]) if got else 0


def migrate(conn: psycopg.Connection) -> list[str]:
    """Bring the schema up to date; the names of the migrations applied. Run by the
    administrator (the tables' owner). EngineVersionError if the database is newer than
    this teamdeck."""
    done: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute("CREATE SCHEMA IF NOT EXISTS teamdeck")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS teamdeck.migrations (version integer PRIMARY KEY,"
            " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = applied(conn)
        if current > latest():
            raise EngineVersionError(
                f"the database's teamdeck schema is version {current}, newer than this "
                f"teamdeck's {latest()}: upgrade teamdeck"
            )
        for version, name, sql in migrations():
            if version <= current:
                continue
            conn.execute(sql.encode())
            conn.execute(
                "INSERT INTO teamdeck.migrations (version, name) VALUES (%s, %s)",
                (version, name),
            )
            done.append(name)
    return done


def check_version(conn: psycopg.Connection) -> None:
    """EngineVersionError (one line) unless the schema is the one this teamdeck speaks."""
    current = applied(conn)
    if current != latest():
        if current == 0:
            raise EngineVersionError(
                "the database has no teamdeck schema: run `teamdeck server init` (or migrate)"
            )
        older = "older" if current < latest() else "newer"
        raise EngineVersionError(
            f"the database's teamdeck schema is version {current}, {older} than this "
            f"teamdeck's {latest()}"
        )

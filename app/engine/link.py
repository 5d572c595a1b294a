"""A small pool of connections to the engine, and the retry every idempotent call goes through.

A call that fails because the link or the server went away (``OperationalError``: a
``kill -9`` of PostgreSQL, a cut network) is made again on a fresh connection until the
deadline. Only calls that are safe to repeat go through :meth:`Link.run`: a send carries its
uuid (a repeat is ``ON CONFLICT DO NOTHING``), a claim its claim token (a repeat finds the
claim it made). Refusals by the server (row-level security, grants) are never retried: they
become ``AccessRefusedError`` at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TypeVar
from urllib.parse import quote, urlencode

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from app.engine.errors import AccessRefusedError, EngineError, EngineUnavailableError

T = TypeVar("T")

RETRY_DEADLINE = 60.0
"""Seconds a call keeps retrying while the server is away (a restart takes a few)."""

CHANNEL = "teamdeck"
"""The ``LISTEN`` channel of every watcher (``app.engine.watch``)."""

WAKE = f"SELECT pg_notify('{CHANNEL}', p) FROM unnest(%s::text[]) p"


def refusal(exc: psycopg.Error) -> EngineError:
    """The one line a refusal by the server is shown as."""
    text = (exc.diag.message_primary or str(exc)).strip().splitlines()[0]
    return AccessRefusedError(f"the engine refused: {text}")


class Link:
    """Connections to one engine URL as one role (the URL's user)."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 4,
        deadline: float = RETRY_DEADLINE,
    ) -> None:
        self.url = url
        self.role = str(psycopg.conninfo.conninfo_to_dict(url).get("user") or "")
        self.deadline = deadline
        self.pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            open=False,
            reconnect_timeout=deadline,
            name="teamdeck-engine",
        )
        first_contact(url)
        self.pool.open(wait=False)

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Link:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, call: Callable[[psycopg.Connection], T]) -> T:
        """``call(conn)`` on a pooled connection (autocommit: open a transaction inside when
        more than one statement must hold together), again on a fresh one while the link is
        down, until the deadline."""
        give_up = time.monotonic() + self.deadline
        pause = 0.02
        while True:
            try:
                with self.pool.connection(timeout=max(0.1, give_up - time.monotonic())) as conn:
                    return call(conn)
            except (
                pg_errors.InsufficientPrivilege,
                pg_errors.CheckViolation,
            ) as exc:
                raise refusal(exc) from None
            except (psycopg.OperationalError, PoolTimeout) as exc:
                if time.monotonic() >= give_up:
                    raise EngineUnavailableError(
                        f"the engine at {safe_url(self.url)} did not answer: {one_line(exc)}"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.5)


def wake(conn: psycopg.Connection, *payloads: str) -> None:
    """Tell the watchers what changed (``m:<inbox>:<seq>``, ``t:<task id>``; ids only), once
    it committed.

    The writer notifies, in a transaction of its own, rather than a trigger in the write's:
    PostgreSQL holds one lock per database from a notifying transaction's commit to its end,
    the flush to disk included, so notifying writes reach the disk one after the other where
    others share a flush (schema version 3 dropped those triggers). A transaction that only
    notifies has nothing to flush. A wake lost with its writer (a crash between the two) is
    found by the watchers' sweep.

    A round trip of its own after the write's, whose result names what to wake: psycopg's
    pipeline mode, which sent both at once, cost more (client time, and wall time on
    loopback) than the second round trip it saved (``bench/engine.py``)."""
    if len(payloads) == 1:
        conn.execute(f"SELECT pg_notify('{CHANNEL}', %s)", payloads, prepare=True)
    elif payloads:
        conn.execute(WAKE, (list(payloads),), prepare=True)


def first_contact(url: str) -> None:
    """Connect once and check the schema's version: a wrong password, a refused TLS link, a
    missing database or an old schema is one line at once, not a minute of retries."""
    from app.engine.migrate import check_version

    try:
        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            check_version(conn)
    except psycopg.OperationalError as exc:
        raise EngineError(f"cannot use the engine at {safe_url(url)}: {one_line(exc)}") from None


def make_url(info: Mapping[str, object]) -> str:
    """A ``postgresql://`` URL from conninfo fields (the password quoted; other fields, such
    as ``sslmode`` or ``sslrootcert``, as query parameters)."""
    fields = {k: str(v) for k, v in info.items() if v is not None and v != ""}
    user = quote(fields.pop("user", ""), safe="")
    password = fields.pop("password", None)
    auth = f"{user}:{quote(password, safe='')}@" if password else (f"{user}@" if user else "")
    host = fields.pop("host", "localhost")
    port = fields.pop("port", "5432")
    dbname = quote(fields.pop("dbname", ""), safe="")
    query = f"?{urlencode(fields)}" if fields else ""
    return f"postgresql://{auth}{host}:{port}/{dbname}{query}"


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def safe_url(url: str) -> str:
    """The URL without its password (for messages)."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    host = info.get("host", "localhost")
    port = info.get("port", "5432")
    return f"postgresql://{info.get('user', '')}@{host}:{port}/{info.get('dbname', '')}"

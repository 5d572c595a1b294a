"""A small pool of connections to the engine, and the retry every idempotent call goes through.

A call that fails because the link or the server went away (``OperationalError``: a
``kill -9`` of PostgreSQL, a cut network) is made again on a fresh connection until the
deadline. Only calls that are safe to repeat go through :meth:`Link.run`: a send carries its
uuid (a repeat is ``ON CONFLICT DO NOTHING``), a claim its claim token (a repeat finds the
claim it made). Refusals by the server (row-level security, grants) are never retried: they
become ``AccessRefusedError`` at once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

import psycopg
from psycopg import errors as pg_errors
from psycopg.rows import RowFactory, tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

from app.engine.errors import AccessRefusedError, EngineError, EngineUnavailableError

T = TypeVar("T")

RETRY_DEADLINE = 60.0
"""Seconds a call keeps retrying while the server is away (a restart takes a few)."""

CHANNEL = "teamdeck"
"""The ``LISTEN`` channel of every watcher (``app.engine.watch``)."""

WAKE_DUE = "SELECT teamdeck.wake()"
"""Wake the watchers (``app.engine.watch``) for what this session's writes changed, once they
committed: schema version 7's triggers record it (``t:<task id>``; ids only; a send notifies
inside its own transaction since version 9, :meth:`Link.call`), ``teamdeck.wake()`` notifies it
in a transaction of its own.

Not a notifying trigger in the write's transaction: PostgreSQL holds one lock per database
from a notifying transaction's commit to its end, the flush to disk included, so notifying
writes reach the disk one after the other where others share a flush (schema version 3 dropped
those triggers). A transaction that only notifies has nothing to flush. A wake lost with its
writer (a crash between the commit and the wake) is found by the watchers' sweep."""

_REFUSALS = (pg_errors.InsufficientPrivilege, pg_errors.CheckViolation)

BATCH_WAIT = 1.0
"""Seconds a batch waits for a pooled connection before it connects on its own."""

CANCEL_WAIT = 5.0
"""Seconds :meth:`Link.interrupt` waits for the server to take each cancel request."""

CLOSE_WAIT = 5.0
"""Seconds :meth:`Link.close` waits for the pool's workers (connecting, say) to stop."""

log = logging.getLogger(__name__)


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
        self._local = threading.local()
        self._closed = threading.Event()
        self._busy: set[psycopg.Connection] = set()
        """The connections running a call or a batch of this link now (:meth:`interrupt`)."""
        self._busy_lock = threading.Lock()
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
        """Close the link; never waits without bound. A call running on it (a relay's pass
        in its thread, waiting on a lock, say) has its query cancelled and fails; its retries
        end (``EngineUnavailableError``), as do any later calls."""
        self._closed.set()
        self.interrupt()
        self.pool.close(timeout=CLOSE_WAIT)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def interrupt(self) -> int:
        """Cancel the queries running on this link's connections now (the server ends them
        with an error: their calls fail, a batch rolls back); how many connections were
        asked. Each request waits ``CANCEL_WAIT`` seconds at most; one not taken is logged."""
        with self._busy_lock:
            busy = list(self._busy)
        for conn in busy:
            try:
                conn.cancel_safe(timeout=CANCEL_WAIT)
            except (psycopg.Error, OSError) as exc:
                log.warning("engine link %s: a query not cancelled: %s", safe_url(self.url), exc)
        return len(busy)

    def _using(self, conn: psycopg.Connection) -> _Busy:
        """The connection counted busy (:meth:`interrupt`) for the block's length."""
        return _Busy(self, conn)

    def _check_open(self) -> None:
        if self._closed.is_set():
            raise EngineUnavailableError(
                f"the link to the engine at {safe_url(self.url)} is closed"
            )

    def __enter__(self) -> Link:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, call: Callable[[psycopg.Connection], T]) -> T:
        """``call(conn)`` on a pooled connection (autocommit: open a transaction inside when
        more than one statement must hold together), again on a fresh one while the link is
        down, until the deadline. In this thread's :meth:`batch`, on the batch's connection
        inside a savepoint: a refused write leaves the batch's other writes standing."""
        held = self._held()
        if held is not None:
            return self._in_batch(lambda: held.run(call, savepoint=True))
        give_up = time.monotonic() + self.deadline
        pause = 0.02
        while True:
            self._check_open()
            try:
                # getconn/putconn, not the pool's connection() context (which also commits an
                # autocommit connection's nothing through psycopg's locks): measured from an
                # idle process, as a teammate's send runs, ~62 us of CPU a call against ~117.
                conn = self.pool.getconn(timeout=max(0.1, give_up - time.monotonic()))
                try:
                    with self._using(conn):
                        return call(conn)
                finally:
                    self.pool.putconn(conn)  # rolls back what a call left open, drops a bad one
            except _REFUSALS as exc:
                raise refusal(exc) from None
            except (psycopg.OperationalError, PoolTimeout) as exc:
                if time.monotonic() >= give_up or self._closed.is_set():
                    raise EngineUnavailableError(
                        f"the engine at {safe_url(self.url)} did not answer: {one_line(exc)}"
                    ) from None
                self._closed.wait(pause)
                pause = min(pause * 2, 0.5)

    def read(self, call: Callable[[psycopg.Connection], T]) -> T:
        """:meth:`run` for a call that only reads (in a batch: no savepoint around it)."""
        held = self._held()
        if held is not None:
            return self._in_batch(lambda: held.run(call, savepoint=False))
        return self.run(call)

    def write(
        self,
        sql: str,
        params: Sequence[Any] | Mapping[str, Any],
        *,
        row_factory: RowFactory[Any] = tuple_row,
    ) -> list[Any]:
        """The rows of one write statement, committed, and the watchers woken for what it
        changed (schema version 7: the triggers record it, ``teamdeck.wake()`` notifies it):
        the write, its commit and the wake go to the server as one message (the simple query
        protocol, the parameters bound here by psycopg), so the sender waits for one round
        trip, and the wake, a transaction of its own, is run by the server right after the
        commit. In this thread's :meth:`batch`: inside a savepoint of the batch's transaction,
        woken after the batch's commit.

        psycopg's pipeline mode also sends both at once; measured beside this on the delivery
        path (``bench/engine.py``'s harness, alternating message by message), it was slower
        than two round trips, and this faster than both."""
        held = self._held()
        if held is not None:
            return self._in_batch(lambda: held.write(sql, params, row_factory))

        def call(conn: psycopg.Connection) -> list[Any]:
            try:
                with psycopg.ClientCursor(conn, row_factory=row_factory) as cur:
                    cur.execute(f"BEGIN; {sql}; COMMIT; {WAKE_DUE}", params)
                    cur.nextset()  # past BEGIN's
                    return cur.fetchall()
            except psycopg.Error:
                if not conn.closed:
                    conn.rollback()  # the explicit BEGIN's block, aborted by the error
                raise

        return self.run(call)

    def call(
        self,
        sql: str,
        params: Sequence[Any] | Mapping[str, Any],
        *,
        row_factory: RowFactory[Any] = tuple_row,
    ) -> list[Any]:
        """The rows of one statement that wakes the watchers itself, inside its transaction
        (schema version 9: ``teamdeck.send``; PostgreSQL delivers the notification once the
        transaction committed), committed: one prepared statement of the extended protocol on
        an autocommit connection, so its own transaction, and no wake behind it. In this
        thread's :meth:`batch`: as :meth:`write` (a savepoint; the batch's commit delivers).

        Beside :meth:`write`'s four statements in the simple protocol (the parameters bound by
        the client, the wake a transaction of its own after the commit), measured on the
        delivery path (``bench/engine.py``, by turns in one run): see the README's figures."""
        held = self._held()
        if held is not None:
            return self._in_batch(lambda: held.write(sql, params, row_factory))

        def one(conn: psycopg.Connection) -> list[Any]:
            if row_factory is tuple_row:  # the connection's own cursor: no context to close
                return conn.execute(sql, params, prepare=True).fetchall()
            with conn.cursor(row_factory=row_factory) as cur:
                cur.execute(sql, params, prepare=True)
                return cur.fetchall()

        return self.run(one)

    def wake_again(self, *payloads: str) -> None:
        """Wake the watchers for changes committed before (a retried write that finds its
        first attempt done: that attempt's wake may have been lost with the link), as a
        write's wake: after the commit of the batch it is in."""
        self.write("SELECT teamdeck.wake_later(%s)", (",".join(payloads),))

    @contextlib.contextmanager
    def batch(self) -> Iterator[Batch]:
        """One transaction for every call this thread makes through this link until the block
        ends (a relay's pass: one commit, one flush to disk, for all its changes), then one
        wake for all of them. Each write is in a savepoint of its own; what must wait for the
        commit (a cursor saying what reached the engine) goes to :meth:`settled`. A lost link
        fails the block at once (``EngineUnavailableError``): nothing of it was committed, and
        the caller's next batch does it again (every write is keyed or conditional)."""
        if self._held() is not None:
            raise EngineError("a batch is already open in this thread")
        self._check_open()
        try:
            with self._batch_connection() as conn, self._using(conn):
                batch = Batch(conn)
                self._local.batch = batch
                try:
                    conn.execute("BEGIN")
                    yield batch
                    with psycopg.ClientCursor(conn) as cur:
                        cur.execute(f"COMMIT; {WAKE_DUE}")
                except BaseException:
                    if not conn.closed:
                        with contextlib.suppress(psycopg.Error):
                            conn.rollback()
                    raise
                finally:
                    self._local.batch = None
        except _REFUSALS as exc:
            raise refusal(exc) from None
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise EngineUnavailableError(
                f"the engine at {safe_url(self.url)} did not answer: {one_line(exc)}"
            ) from None
        for then in batch.after:
            then()

    @contextlib.contextmanager
    def _batch_connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection, or one of its own when the pool has none to give soon: after
        the engine was away, the pool reconnects with a growing pause (up to half a minute),
        and a relay's pass connects as soon as the engine takes connections again."""
        pooled = contextlib.ExitStack()
        with pooled:
            try:
                conn = pooled.enter_context(self.pool.connection(timeout=BATCH_WAIT))
            except PoolTimeout:
                conn = pooled.enter_context(
                    psycopg.connect(self.url, autocommit=True, connect_timeout=10)
                )
            yield conn  # the block's own errors pass through: only the wait above falls back

    def settled(self, then: Callable[[], None]) -> None:
        """``then()`` once what this thread wrote so far is committed: at once outside a
        batch, after the batch's commit inside one (never, if it does not commit)."""
        held = self._held()
        if held is not None:
            held.after.append(then)
        else:
            then()

    @property
    def in_batch(self) -> bool:
        """Whether this thread's calls go to a :meth:`batch` (woken after its commit)."""
        return self._held() is not None

    def _held(self) -> Batch | None:
        return getattr(self._local, "batch", None)

    def _in_batch(self, call: Callable[[], T]) -> T:
        """A call in a batch: a refusal is ``AccessRefusedError`` (the batch goes on), a lost
        link ``EngineUnavailableError`` (the batch is lost: no retry inside it)."""
        try:
            return call()
        except _REFUSALS as exc:
            raise refusal(exc) from None
        except psycopg.OperationalError as exc:
            raise EngineUnavailableError(
                f"the engine at {safe_url(self.url)} did not answer: {one_line(exc)}"
            ) from None


class Batch:
    """The connection and the transaction of one :meth:`Link.batch`."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.after: list[Callable[[], None]] = []
        self.writes = 0

    def run(self, call: Callable[[psycopg.Connection], T], *, savepoint: bool) -> T:
        if not savepoint:
            return call(self.conn)
        with self.conn.transaction():
            return call(self.conn)

    def write(
        self,
        sql: str,
        params: Sequence[Any] | Mapping[str, Any],
        row_factory: RowFactory[Any],
    ) -> list[Any]:
        self.writes += 1
        try:
            with psycopg.ClientCursor(self.conn, row_factory=row_factory) as cur:
                cur.execute(f"SAVEPOINT teamdeck_write; {sql}; RELEASE teamdeck_write", params)
                cur.nextset()  # past SAVEPOINT's
                return cur.fetchall()
        except psycopg.Error as exc:
            if not self.conn.closed and not isinstance(exc, psycopg.OperationalError):
                self.conn.execute("ROLLBACK TO SAVEPOINT teamdeck_write")
            raise


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


class _Busy:
    """A link's connection counted busy while a block runs (a class, not a generator: it is on
    every call's path)."""

    __slots__ = ("conn", "link")

    def __init__(self, link: Link, conn: psycopg.Connection) -> None:
        self.link = link
        self.conn = conn

    def __enter__(self) -> psycopg.Connection:
        with self.link._busy_lock:
            self.link._busy.add(self.conn)
        return self.conn

    def __exit__(self, *exc: object) -> None:
        with self.link._busy_lock:
            self.link._busy.discard(self.conn)

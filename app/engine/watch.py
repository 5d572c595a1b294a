"""The engine's change feed (``app.core.store.ChangeFeed``): one ``LISTEN`` connection per
process.

A notification carries ids only (``m:<inbox>:<seq>`` a message was sent, ``t:<task id>``,
``r:<request>``, ``p:`` for members): ``LISTEN`` is not access-controlled, so the payload says
nothing a stranger could use (and anyone may send one: it is only a wake-up), and the listener
reads what changed through its own role's policies. A send's wake names the inbox by its
number (schema version 4): an inbox this role can see is reported at once, without a read; the
wake only ever adds a report (the cursors move on what was read, so a forged wake cannot hide
a later message: the next sweep may report again an inbox a wake reported, a report being a
hint to read), and an inbox number not known yet means one read of the counters (a new inbox;
a number that stays unknown is another's and is then ignored). Nothing is lost while
the link is down:
on every (re)connect the feed catches up with ``seq > cursor`` for each inbox it can see (the
inbox counters), and with the tasks' versions; the same sweep runs every ``SWEEP`` seconds,
for a wake lost with its writer (a task's wake, ``app.engine.link``, is notified after the
commit, in a transaction of its own).

The inboxes named in ``fetch`` (a machine's own members') are read by the feed itself, on the
connection that heard the wake (schema version 9: a send's wake, delivered by its commit,
names the inbox and the seq): the backend just woken reads the new rows through the role's
policies (``FETCH``), and :meth:`EngineFeed.take` hands them to the reader (a
relay's pull), which then needs no round trip of its own on another, idle connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection

import psycopg

from app.core.events import ChangeEvent, InboxChanged, TaskChanged, TeamChanged
from app.core.models import InboxMessage
from app.core.store import Callback
from app.engine.link import CHANNEL
from app.engine.messages import numbered

log = logging.getLogger(__name__)

SWEEP = 5.0
"""Seconds between two catch-ups while the link is up."""
FETCH = (
    "SELECT seq, body::text, read FROM teamdeck.messages WHERE inbox = %s AND seq > %s ORDER BY seq"
)
"""A fetch: by the inbox's number (a message's key is (inbox, seq), schema version 10), under
the role's policies, as ``teamdeck.inbox_since`` (whose plan is kept by the function; the
feed's session keeps its own plans)."""
KEEP = 1000
"""Messages :meth:`EngineFeed.take` can hand out per fetched inbox (the latest; an older one
is read again by the reader, ``EngineMailbox.since``)."""
STOP_WAIT = 10.0
"""Seconds :meth:`EngineFeed.stop` waits for its cancelled task (a query being cancelled on
the server, say) before it leaves it behind, with a log line."""


class EngineFeed:
    """Changes of one team as one role sees them, delivered to subscribers as lists of
    ``ChangeEvent`` (as ``app.core.watch.Watcher`` delivers the files')."""

    def __init__(
        self,
        url: str,
        team: str,
        *,
        retry: float = 0.2,
        sweep: float = SWEEP,
        fetch: Collection[str] = (),
    ) -> None:
        self.url = url
        self.team = team
        self.retry = retry
        self.sweep = sweep
        self.fetch = frozenset(fetch)
        """The inboxes whose new messages the feed reads itself (:meth:`take`)."""
        self.fetched: dict[str, list[tuple[int, InboxMessage]]] = {}
        self.fetches = 0
        self._held = threading.Lock()  # take() runs in a relay's pass thread
        self.cursors: dict[str, int] = {}  # inbox -> last seq read
        self.inboxes: dict[int, str] = {}  # inbox number -> name, for the inboxes seen
        self.others: set[int] = set()  # inbox numbers this role cannot see
        self.versions: dict[int, int] = {}  # task id -> version reported
        self.connects = 0
        self._callbacks: list[Callback] = []
        self._task: asyncio.Task[None] | None = None
        self._primed = False

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

        return unsubscribe

    def take(self, agent: str, after: int) -> list[tuple[int, InboxMessage]] | None:
        """The messages of ``agent``'s inbox (one in ``fetch``) after seq ``after`` that the
        feed read, in order; ``None`` when it holds none of them, or not every one (not
        running, never read, older than the ``KEEP`` it keeps, or a row that is no message):
        the caller reads them itself (a feed whose link is down, or whose wake is still on
        the way, holds nothing a reader would miss). What is handed out is forgotten by the
        feed. Safe from any thread."""
        if not self.running or agent not in self.fetch:
            return None
        with self._held:
            held = self.fetched.get(agent, [])
            if not held or held[0][0] > after + 1:
                return None
            self.fetched[agent] = []
        return [(seq, message) for seq, message in held if seq > after]

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Start listening; returns once the first catch-up is done (the cursors are set to
        what exists now: later changes are news)."""
        if self.running:
            return
        ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(ready))
        await ready

    async def stop(self) -> None:
        """Stop listening: the task is cancelled and waited for ``STOP_WAIT`` seconds at most
        (then left to end on its own, and logged: a stop must not hold its caller's own
        stop)."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        finished, _ = await asyncio.wait({task}, timeout=STOP_WAIT)
        if not finished:
            log.warning("engine feed of %s: not stopped within %.0f s, left behind", self.team,
                        STOP_WAIT)  # fmt: skip
            return
        with contextlib.suppress(asyncio.CancelledError, Exception):
            task.result()

    async def __aenter__(self) -> EngineFeed:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _emit(self, events: list[ChangeEvent]) -> None:
        if not events or not self._primed:
            return
        for callback in list(self._callbacks):
            try:
                callback(events)
            except Exception:  # a subscriber's bug must not stop the feed
                log.exception("engine feed subscriber failed")

    async def _run(self, ready: asyncio.Future[None]) -> None:
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
            except psycopg.OperationalError as exc:
                if not ready.done():
                    ready.set_exception(exc)
                    return
                await asyncio.sleep(self.retry)
                continue
            try:
                async with conn:
                    # Its plans kept for the session: the counters, the tasks and a fetch are
                    # the same few statements at every wake (a custom plan for "seq > $3",
                    # row-level security's subqueries included, was planned again each time).
                    await conn.execute(
                        f"LISTEN {CHANNEL}; SET plan_cache_mode = force_generic_plan"
                    )
                    self.connects += 1
                    await self._catch_up(conn)
                    if not ready.done():
                        self._primed = True
                        ready.set_result(None)
                    swept = time.monotonic()
                    while True:
                        # One at a time: the generator holds the connection while it waits,
                        # and the reads below need it (psycopg keeps what arrives meanwhile).
                        wait = max(0.0, swept + self.sweep - time.monotonic())
                        notes = [n async for n in conn.notifies(stop_after=1, timeout=wait)]
                        for note in notes:
                            await self._on(conn, note.payload)
                        if time.monotonic() >= swept + self.sweep:
                            await self._sweep(conn)
                            swept = time.monotonic()
            except psycopg.Error as exc:
                log.info("engine feed: link lost (%s), reconnecting", exc)
            await asyncio.sleep(self.retry)

    async def _on(self, conn: psycopg.AsyncConnection, payload: str) -> None:
        kind, _, ident = payload.partition(":")
        if kind == "m":
            await self._message(conn, ident)
        elif kind == "t":
            task = int(ident) if ident.isdigit() and len(ident) < 10 else None
            await self._tasks(conn, task)
        elif kind == "p":
            self._emit([TeamChanged(self.team)])

    async def _sweep(self, conn: psycopg.AsyncConnection) -> None:
        await self._inboxes(conn)
        await self._tasks(conn)

    async def _catch_up(self, conn: psycopg.AsyncConnection) -> None:
        await self._sweep(conn)
        if self._primed:
            self._emit([TeamChanged(self.team)])

    async def _message(self, conn: psycopg.AsyncConnection, ident: str) -> None:
        """A send's wake (``<inbox>:<seq>``): the inbox reported if it is one of ours and the
        seq is past what was read; the counters read if the number is new."""
        number, _, seq = ident.partition(":")
        if not (number.isdigit() and seq.isdigit() and len(number) < 19 and len(seq) < 19):
            await self._inboxes(conn)  # not a send's wake: the counters say
            return
        inbox = int(number)
        name = self.inboxes.get(inbox)
        if name is None and inbox not in self.others:
            await self._inboxes(conn)
            if inbox not in self.inboxes and len(self.others) < 100_000:
                self.others.add(inbox)
        elif (
            name is not None
            and int(seq) > self.cursors.get(name, 0)
            and (name not in self.fetch or await self._fetch(conn, name, inbox))
        ):
            self._emit([InboxChanged(self.team, name)])

    async def _inboxes(self, conn: psycopg.AsyncConnection) -> None:
        cur = await conn.execute(
            "SELECT id, name, last_seq FROM teamdeck.inboxes WHERE team = %s", (self.team,)
        )
        events: list[ChangeEvent] = []
        for inbox, name, last in await cur.fetchall():
            self.inboxes[inbox] = name
            if last > self.cursors.get(name, 0):
                if name in self.fetch and self._primed:
                    await self._fetch(conn, name, inbox)
                self.cursors[name] = max(last, self.cursors.get(name, 0))
                events.append(InboxChanged(self.team, name))
        self._emit(events)

    async def _fetch(self, conn: psycopg.AsyncConnection, name: str, inbox: int) -> bool:
        """Read the messages of ``name``'s inbox (number ``inbox``) past the cursor into what
        :meth:`take` hands out (the latest ``KEEP``); whether there were any. A row that is no
        message (a role may insert any body directly) empties what is held: :meth:`take` leaves
        the read to the caller, which meets that row as it always did."""
        cur = await conn.execute(FETCH, (inbox, self.cursors.get(name, 0)), prepare=True)
        rows = await cur.fetchall()
        self.fetches += 1
        if not rows:
            return False
        try:
            new = numbered(rows)
        except ValueError:
            new = []
        with self._held:
            held = self.fetched.setdefault(name, [])
            if new:
                held.extend(new)
                del held[:-KEEP]
            else:
                held.clear()
            self.cursors[name] = rows[-1][0]
        return True

    async def _tasks(self, conn: psycopg.AsyncConnection, task_id: int | None = None) -> None:
        """The tasks whose version moved: the one a wake names (the id may be another
        team's: then nothing moved here), or all of them."""
        only = "" if task_id is None else " AND id = %s"
        cur = await conn.execute(
            "SELECT id, version FROM teamdeck.tasks WHERE team = %s" + only,
            (self.team,) if task_id is None else (self.team, task_id),
        )
        events: list[ChangeEvent] = []
        for task_id, version in await cur.fetchall():
            if self.versions.get(task_id) != version:
                self.versions[task_id] = version
                events.append(TaskChanged(self.team, str(task_id)))
        self._emit(events)

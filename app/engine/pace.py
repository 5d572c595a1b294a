"""The pace of a machine's relay (``app.engine.relay``): when its next pass runs, and the
thread each pass runs in.

Between two passes :meth:`Pace.pause` waits ``interval`` seconds at most: the engine's feed
(``LISTEN``: a message, a task, a member changed) and this home's files (a teammate here
wrote a message or changed a task) start the next pass at once, so a message crosses machines
in about two passes, not two intervals.

A pass is a blocking call (the link retries while the server is away): :func:`in_thread`
runs it in a thread of its own. A thread cannot be stopped, so nothing on the way out waits
for one, or for a feed or a watcher, without bound: a cancelled pass is waited for
``STOP_WAIT`` seconds, then its queries are cancelled (``Link.interrupt``) and it is waited
for as long again, then left behind with a log line saying so. Its thread is a daemon, not
the loop's default executor's: the loop's shutdown and the interpreter's exit join those, and
a pass left waiting on a connection there held them for good, with no CPU used.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Collection
from typing import TypeVar

import psycopg

from app.core.events import AgentLogChanged, ChangeEvent
from app.core.home import Home
from app.core.models import InboxMessage
from app.core.watch import Watcher
from app.engine.link import Link
from app.engine.watch import EngineFeed

log = logging.getLogger(__name__)

T = TypeVar("T")

WATCH_START = 5.0
"""Seconds the relay's feed or watcher may take to start."""
WATCH_AGAIN = 5.0
"""Seconds before a feed or watcher that could not start is tried again."""
STOP_WAIT = 10.0
"""Seconds a stop waits for a pass's thread (twice: before and after its queries are
cancelled), a feed or a watcher, before it leaves it behind and logs what it gave up on."""


def _daemon(call: Callable[[], T], name: str) -> asyncio.Future[T]:
    """``call()`` started in a daemon thread of its own; a future of its outcome (set on the
    loop, unless the loop closed meanwhile: then nobody waits for it)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result, error = call(), None
        except BaseException as exc:  # handed to the awaiting task
            result, error = None, exc
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name=name, daemon=True).start()
    return done


async def in_thread(call: Callable[[], T], *, link: Link, what: str) -> T:
    """``call()`` in a daemon thread of its own; its result or its error. Cancelled, this
    returns (raising ``CancelledError``) once the call has ended, or once it was given
    ``STOP_WAIT`` seconds, its queries on ``link`` cancelled, and ``STOP_WAIT`` more."""
    done = _daemon(call, f"teamdeck {what}")
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        await _ended(done, link, what)
        raise


async def _ended(done: asyncio.Future[T], link: Link, what: str) -> None:
    """Wait for a cancelled call's thread, boundedly (see :func:`in_thread`). The cancel
    requests go from a thread of their own too (the loop's executor may be the one held)."""
    if not await _within(done, STOP_WAIT):
        asked = _daemon(link.interrupt, f"teamdeck {what}: cancelling its queries")
        if await _within(asked, STOP_WAIT) and asked.exception() is None:
            said = f"{asked.result()} of its queries cancelled"
        else:
            said = "its queries not cancelled in time"
        log.warning("%s still running %.0f s after it was cancelled: %s", what, STOP_WAIT, said)
        if not await _within(done, STOP_WAIT):
            log.warning("%s still running: left behind in its thread", what)
            return
    with contextlib.suppress(BaseException):
        done.result()  # its error, if any, was the cancelled caller's


async def _within(future: asyncio.Future[T], seconds: float) -> bool:
    """Whether ``future`` is done within ``seconds`` (it is never cancelled here; a cancel of
    this wait ends the wait only)."""
    finished, _ = await asyncio.wait({future}, timeout=seconds)
    return bool(finished)


async def stop_within(stop: Awaitable[None], what: str) -> bool:
    """Run ``stop`` for ``STOP_WAIT`` seconds at most (then it is cancelled and not waited
    for, and a log line says so); whether it ended in time. Its errors are dropped: a stop
    on the way out must not keep the rest from stopping."""
    task = asyncio.ensure_future(stop)
    if not await _within(task, STOP_WAIT):
        task.cancel()
        log.warning("%s did not stop within %.0f s: left behind", what, STOP_WAIT)
        return False
    with contextlib.suppress(BaseException):
        task.result()
    return True


class Pace:
    """When a relay's next pass is due: the engine's feed and the home's files' watcher
    (started by the first :meth:`pause`), or ``interval`` seconds. The feed reads the new
    messages of the inboxes in ``fetch`` (this machine's) on the connection that heard their
    wake; the pass's pull takes them (:meth:`take`)."""

    def __init__(
        self, home: Home, team: str, url: str, interval: float, *, fetch: Collection[str] = ()
    ) -> None:
        self.home = home
        self.team = team
        self.url = url
        self.interval = interval
        self.fetch = frozenset(fetch)
        self.watching: list[EngineFeed | Watcher] = []
        self.pausing = False
        """Whether :meth:`pause` waits for a wake now."""
        self._woken: asyncio.Event | None = None
        self._watch_again = 0.0

    async def pause(self) -> None:
        """Until the next pass is due: ``interval`` seconds, or sooner when the engine's feed
        or this home's files say something of the team changed (a change made by the last
        pass itself wakes one more pass, which finds nothing to do). While the feed or the
        watcher is not started, no longer than until it is tried again: a long interval must
        not leave a relay whose feed was down at its start without it once the engine is
        back."""
        if self._woken is None:
            self._woken = asyncio.Event()
        wait = self.interval
        if len(self.watching) < 2:
            if time.monotonic() >= self._watch_again:
                watched = len(self.watching)
                await self._watch()
                if len(self.watching) > watched:
                    # What changed before the feed (or the watcher) listened woke nobody:
                    # the other machine's pushes while this feed was down. One pass now
                    # catches up; the interval could be long.
                    self._woken.set()
            if len(self.watching) < 2:
                wait = min(wait, max(0.0, self._watch_again - time.monotonic()))
        self.pausing = True
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancel that comes
            # in the loop's turn the wake completed the wait, and the relay then made another
            # pass and paused for the interval (an hour in the tests), its stopper waiting.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._woken.wait()
        finally:
            self.pausing = False
        self._woken.clear()

    async def _watch(self) -> None:
        """Start the feed and the files' watcher not started yet. One that cannot start (the
        engine away, no inotify) is tried again later; meanwhile the interval paces the
        passes. Started, the feed reconnects by itself (cancelled while it starts, it is
        stopped: a feed left listening kept its connection and its task)."""

        def on(events: list[ChangeEvent]) -> None:
            if self._woken is not None and any(
                e.team == self.team and not isinstance(e, AgentLogChanged) for e in events
            ):
                self._woken.set()

        started = {type(source) for source in self.watching}
        wanted: list[EngineFeed | Watcher] = []
        if EngineFeed not in started:
            wanted.append(EngineFeed(self.url, self.team, fetch=self.fetch))
        if Watcher not in started:
            wanted.append(Watcher(self.home, agent_logs=False))
        for source in wanted:
            source.subscribe(on)
            what = f"relay of {self.team}: a starting {_kind(source)}"
            try:
                async with asyncio.timeout(WATCH_START):  # not wait_for: see pause
                    await source.start()
            except (psycopg.Error, OSError, TimeoutError) as exc:
                log.info("relay of %s: passes paced by the interval for now: %s", self.team, exc)
                await stop_within(source.stop(), what)
                self._watch_again = time.monotonic() + WATCH_AGAIN
                continue
            except asyncio.CancelledError:  # the relay stops while it starts: stopped too
                await stop_within(source.stop(), what)
                raise
            self.watching.append(source)

    def take(self, agent: str, after: int) -> list[tuple[int, InboxMessage]] | None:
        """The messages of ``agent``'s inbox after seq ``after`` as the feed read them
        (``EngineFeed.take``); ``None`` when the feed is not running or does not hold them
        all (the pull reads them itself). Safe from the pass's thread."""
        for source in list(self.watching):
            if isinstance(source, EngineFeed):
                return source.take(agent, after)
        return None

    async def unwatch(self) -> None:
        """Stop the feed and the files' watcher :meth:`pause` started (each within
        ``STOP_WAIT`` seconds, or left behind with a log line)."""
        watching, self.watching, self._woken = self.watching, [], None
        for source in watching:
            await stop_within(source.stop(), f"relay of {self.team}: its {_kind(source)}")


def _kind(source: EngineFeed | Watcher) -> str:
    return "engine feed" if isinstance(source, EngineFeed) else "files' watcher"

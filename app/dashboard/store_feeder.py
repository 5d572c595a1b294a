"""Feeding the store: change events in, deltas out, reads off the event loop (no Textual).

The app queues the watcher's batches here; one task collects them briefly, lets the
:class:`~app.dashboard.store.Store` re-read what they name in a worker thread, and hands each
``StoreDelta`` back to the app.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from functools import partial

from app.core import ChangeEvent, TaskChanged
from app.core.watch import Watcher
from app.dashboard.store import Store
from app.dashboard.store_delta import StoreDelta
from app.runtime.events import MessageSent


class StoreFeeder:
    """Runs a :class:`Store` against a stream of change events (asyncio, no Textual).

    ``queue(events)`` from the event loop; ``run()`` (one task) waits for events, collects
    them for ``coalesce`` seconds, reads what they name in a thread and hands the delta to
    ``deliver``. A burst of task-only changes is applied at most every ``task_burst``
    seconds (an inbox change never waits for that). Errors go to ``fail``; the next change
    retries.
    """

    def __init__(
        self,
        store: Store,
        deliver: Callable[[StoreDelta], object],
        fail: Callable[[Exception], object],
        *,
        coalesce: float = 0.02,
        task_burst: float = 0.1,
    ) -> None:
        self.store = store
        self.deliver = deliver
        self.fail = fail
        self.coalesce = coalesce
        self.task_burst = task_burst
        self._changes: dict[ChangeEvent | MessageSent, None] = {}  # an ordered set
        self._reload: tuple[str | None] | None = None
        self._ready = asyncio.Event()

    def queue(self, events: Iterable[ChangeEvent | MessageSent]) -> None:
        for event in events:
            self._changes[event] = None
        if self._changes:
            self._ready.set()

    async def follow(self, watcher: Watcher) -> None:
        """Queue every batch ``watcher`` delivers (one task, until the watcher stops)."""
        async with contextlib.aclosing(watcher.events()) as batches:
            async for batch in batches:
                self.queue(batch)

    def switch_team(self, team: str | None) -> None:
        """Read everything again, for ``team`` (``None``: no team)."""
        self._reload = (team,)
        self._ready.set()

    async def run(self) -> None:
        await self._step(self.store.load)
        loop = asyncio.get_running_loop()
        last = 0.0
        while True:
            await self._ready.wait()
            await asyncio.sleep(self.coalesce)
            if self._reload is None and all(isinstance(e, TaskChanged) for e in self._changes):
                await asyncio.sleep(max(0.0, last + self.task_burst - loop.time()))
            last = loop.time()
            self._ready.clear()
            reload, self._reload = self._reload, None
            events, self._changes = list(self._changes), {}
            if reload is not None:
                await self._step(partial(self.store.load, reload[0], switch=True))
            elif events:
                await self._step(partial(self.store.apply, events))

    async def _step(self, step: Callable[[], StoreDelta | None]) -> None:
        try:
            delta = await asyncio.to_thread(step)
        except Exception as exc:  # shown by the app; the next change retries
            self.fail(exc)
            return
        if delta is not None:
            self.deliver(delta)

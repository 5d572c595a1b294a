"""A wake-up signal for an agent that waits for mail, safe to set from any thread.

Usage without lost wake-ups: ``clear()``, then look for work, then ``await wait()``. A ``set()``
between the look and the wait is kept, so the wait returns at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class Wakeup:
    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self.waiting = 0  # callers inside ``wait`` now (tests see a teammate parked)

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()

    def set(self) -> None:
        loop = self._loop
        if loop is None or threading.get_ident() == self._thread:
            self._event.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._event.set)

    def clear(self) -> None:
        self._event.clear()

    async def wait(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """True if woken, False on timeout."""
        self.waiting += 1
        try:
            if timeout is None:
                await self._event.wait()
                return True
            with contextlib.suppress(TimeoutError):
                # Not ``wait_for``: Python 3.11's returns the finished wait when a cancel comes
                # in the same turn as the wake-up, and the cancel is lost (the agent went on).
                async with asyncio.timeout(timeout):
                    await self._event.wait()
                return True
            return False
        finally:
            self.waiting -= 1

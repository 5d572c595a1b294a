"""In-process turns, a few at once; a turn that waits gives its place up meanwhile.

In-process teammates are coroutines on the dashboard's event loop, and the work of their turns
(building each request, running the tools, recording results) is Python on that loop and in
the process's worker threads, under one interpreter lock. Fifty such turns at once do no more
work on two cores than a few, but the person's keys and screen wait behind all fifty. So a turn
takes a slot of the ``TurnGate`` before it starts and keeps it while it works.

A slot is never held by a turn that is only waiting: while it waits on the model (its call has
its own cap, ``team.runtime.IN_PROCESS_CALLS``), on a command (a tool whose ``waits`` says so:
Bash), on the person (a permission request) or on the run's budget, the turn gives its slot to
the next one and queues for a slot again when the wait is over. A team never stalls behind a
slot held by a waiter, and a turn with many tool calls at once (a hostile model's flood) holds
one slot, whatever it asks.

``$TEAMDECK_IN_PROCESS_TURNS`` sets the number of slots (default ``DEFAULT_TURNS``). The lead
and teammate processes are not gated: the lead is the person's own agent, and a teammate
process has the whole process to itself (and runs nicer than the dashboard).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from types import TracebackType

from app.runtime.env_numbers import positive_from_env
from app.runtime.scheduling.input_first import turn_waits

TURNS_ENV = "TEAMDECK_IN_PROCESS_TURNS"
DEFAULT_TURNS = 3
"""Enough for one turn's file I/O (fsync releases the lock) to overlap another's Python, few
enough that the dashboard's thread is one of four or so asking for the interpreter lock."""


def turns_at_once() -> int:
    """``$TEAMDECK_IN_PROCESS_TURNS`` if a positive integer, else ``DEFAULT_TURNS``."""
    return positive_from_env(TURNS_ENV, DEFAULT_TURNS, int)


class TurnGate:
    """The slots of a process's in-process turns. ``running`` and ``most`` count the turns
    holding a slot now and at most so far (what the tests and the benchmark read)."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size if size is not None else turns_at_once()
        self._free = asyncio.Semaphore(self.size)
        self.running = 0
        self.most = 0

    def __repr__(self) -> str:
        return f"TurnGate({self.running}/{self.size} running, {self.most} at most)"

    def turn(self) -> TurnSlot:
        """A turn's place: ``async with gate.turn() as slot`` holds it for the turn."""
        return TurnSlot(self)


class TurnSlot:
    """One turn's place in its gate: held while the turn works, given up while it waits."""

    def __init__(self, gate: TurnGate) -> None:
        self.gate = gate
        self.held = False
        self._waits = 0

    async def __aenter__(self) -> TurnSlot:
        await self._take()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._give()

    @contextlib.asynccontextmanager
    async def waiting(self) -> AsyncIterator[None]:
        """The turn waits in this block: its slot goes to the next turn, and is taken back
        (queueing behind the turns already waiting for one) when the block ends. Waits that
        overlap (tool calls run together) give the slot up once and take it back once. A
        cancelled turn (a kill, an interrupt) does not queue again on its way out."""
        self._waits += 1
        if self._waits == 1:
            self._give()
        take_back = False
        try:
            yield
            take_back = True
        except Exception:
            take_back = True  # a tool's error goes back to the model: the turn goes on
            raise
        finally:
            self._waits -= 1
            if take_back and self._waits == 0 and not self.held:
                await self._take()

    async def _take(self) -> None:
        await turn_waits()  # a key press's frame before another turn's work (``input_first``)
        await self.gate._free.acquire()
        self.held = True
        self.gate.running += 1
        self.gate.most = max(self.gate.most, self.gate.running)

    def _give(self) -> None:
        if not self.held:
            return
        self.held = False
        self.gate.running -= 1
        self.gate._free.release()


def waiting(slot: TurnSlot | None) -> contextlib.AbstractAsyncContextManager[None]:
    """``slot.waiting()``, or nothing for a turn that holds no slot (the lead, a process)."""
    return slot.waiting() if slot is not None else contextlib.nullcontext()

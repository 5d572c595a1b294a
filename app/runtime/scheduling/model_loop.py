"""Model calls on their own event loop, in a thread beside the dashboard's.

Talking to the API is CPU work for this process too: the SDK copies the whole conversation and
encodes it as JSON for every request, then parses every streamed event into its models. That
grows with the conversation (tens of milliseconds for a long one) and, on the dashboard's event
loop, it is time the screen and the keyboard wait. So every model call runs as a task of one
process-wide loop in a daemon thread ("teamdeck-model"): the SDK's work there is preempted
every switch interval, and the dashboard's loop keeps its turn.

``await on_model_loop(coro)`` runs ``coro`` there and returns its result (or raises its error)
in the caller's loop. Inside it, whatever must reach the runtime -- events for the UI, usage
counts -- goes through ``offload.on_loop``, which posts it to the caller's loop in order. If the
caller is cancelled (an interrupt, a kill), the model-side task is cancelled too and the caller
waits for it to end, so nothing it reports arrives after the call is over.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, Generic, TypeVar

from app.runtime.scheduling.input_first import let_the_person_go_first
from app.runtime.scheduling.offload import CALLER_LOOP, enabled, mark_background

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def model_loop() -> asyncio.AbstractEventLoop:
    """The model calls' loop (its thread is started on first use and lives with the process)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="teamdeck-model", daemon=True).start()
            ready.wait()
            mark_background(loop)
            _loop = loop
        return _loop


async def on_model_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the model loop; its result or exception here (see the module docs)."""
    if not enabled():  # everything on the caller's loop (the benchmarks' baseline)
        return await coro
    call = _Call(asyncio.get_running_loop(), coro)
    target = model_loop()
    target.call_soon_threadsafe(call.start, target)
    try:
        return await asyncio.shield(asyncio.wrap_future(call.result))
    except asyncio.CancelledError:
        target.call_soon_threadsafe(call.cancel)
        await call.ended()
        raise


class _Call(Generic[T]):
    """One coroutine run on the model loop for a caller on another loop."""

    def __init__(self, caller: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> None:
        self.caller = caller
        self.coro = coro
        self.result: concurrent.futures.Future[T] = concurrent.futures.Future()
        self.task: asyncio.Task[T] | None = None
        self.started = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:  # on the model loop
        let_the_person_go_first()  # a key press's frame before the next request is built
        self.task = loop.create_task(self._run())
        self.task.add_done_callback(self._done)

    async def _run(self) -> T:
        self.started = True
        CALLER_LOOP.set(self.caller)  # this task's own context: on_loop posts to the caller
        return await self.coro

    def _done(self, task: asyncio.Task[T]) -> None:  # on the model loop
        if task.cancelled():
            if not self.started:
                self.coro.close()  # cancelled before it began: never awaited, and that is fine
            self.result.cancel()
        elif (error := task.exception()) is not None:
            self.result.set_exception(error)
        else:
            self.result.set_result(task.result())

    def cancel(self) -> None:  # on the model loop
        if self.task is not None:
            self.task.cancel()

    async def ended(self) -> None:
        """Wait until the model-side task has really ended (its cleanup included), despite
        further cancellations of the caller."""
        waiter = asyncio.wrap_future(self.result)
        while not self.result.done():
            try:
                await asyncio.shield(waiter)
            except (asyncio.CancelledError, Exception):
                continue

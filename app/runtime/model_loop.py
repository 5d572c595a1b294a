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
from typing import Any, TypeVar

from app.runtime.offload import CALLER_LOOP, mark_background

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
    caller = asyncio.get_running_loop()
    future = asyncio.run_coroutine_threadsafe(_for(caller, coro), model_loop())
    waiter = asyncio.wrap_future(future)
    try:
        return await asyncio.shield(waiter)
    except asyncio.CancelledError:
        future.cancel()
        await _ended(future, waiter)
        raise


async def _for(caller: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    CALLER_LOOP.set(caller)  # this task's own context: on_loop posts to the caller
    return await coro


async def _ended(future: concurrent.futures.Future[Any], waiter: asyncio.Future[Any]) -> None:
    """Wait for the cancelled model-side task to finish, despite further cancellations."""
    while not future.done():
        try:
            await asyncio.shield(waiter)
        except asyncio.CancelledError:
            continue
        except Exception:
            break

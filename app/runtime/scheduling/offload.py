"""Blocking work off the event loop, for coroutines that call the synchronous core.

The core (``app.core``) is synchronous on purpose: locks, atomic writes with fsync and JSON
parsing are plain calls that any thread or process can make. In the dashboard every agent is a
coroutine on the one event loop that also draws the screen and reads the keyboard, so a core
call made directly from a coroutine stalls all of them for as long as it takes (a task-list
scan, a config rewrite with two fsyncs). Such calls run in a few worker threads instead: file
I/O releases the GIL, and CPU work there is preempted every switch interval, so the loop keeps
running.

* ``await off_loop(func, *args)`` -- one call, when its order with other calls does not matter
  (the offline model's own work).
* ``Lane`` -- one agent's file work: ``await lane.run(func, *args)`` for a result,
  ``lane.submit(func, *args)`` for a write nobody waits for. A lane runs its calls one at a
  time in the order they were handed over, so an agent's writes land in program order.
* ``on_loop(callback, *args)`` -- from inside such a call, tell the runtime something (its
  listeners live on the loop's thread).

Guarantees, so that moving a call off the loop changes nothing but the timing:

* Errors: an exception raised by an awaited call is raised in the caller, unchanged; one raised
  by a submitted call goes to its ``on_error`` on the loop's thread (or the log).
* Cancellation: a call that has started always finishes before the caller sees its
  ``CancelledError``, as a synchronous call on the loop would have: a kill or an interrupt
  never cuts a write in half, nor lets what follows the cancellation (returning a killed
  teammate's tasks to the board) run before the write it interrupted. A call still queued is
  dropped.
* Outside a running event loop (a synchronous caller, a test without a loop) calls run inline.

``TEAMDECK_OFFLOAD=0`` (or ``set_enabled(False)``) runs everything inline on the loop, as
before this module existed: the benchmarks' baseline, and a way to rule it out when debugging.

Only plain blocking calls belong here: they must not touch asyncio objects or the runtime's
listeners except through ``on_loop``.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextvars
import dataclasses
import functools
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from app.runtime.env_numbers import positive_from_env
from app.runtime.scheduling.input_first import let_the_person_go_first

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")
ErrorHandler = Callable[[Exception], object]

ENABLED_ENV = "TEAMDECK_OFFLOAD"
WORKERS_ENV = "TEAMDECK_IO_THREADS"
DEFAULT_WORKERS = 4
"""Worker threads: enough for the agents' file I/O to overlap (fsync releases the GIL) without
many CPU-bound threads queueing for the GIL ahead of the loop's thread."""

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
_worker = threading.local()
#: The loop a task running on another loop works for (``app.runtime.scheduling.model_loop``).
CALLER_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "teamdeck_caller_loop", default=None
)


_enabled: bool | None = None


def enabled() -> bool:
    """Whether blocking work leaves the loop (``$TEAMDECK_OFFLOAD``, default on)."""
    if _enabled is not None:
        return _enabled
    return os.environ.get(ENABLED_ENV, "").strip().lower() not in ("0", "off", "false", "no")


def set_enabled(flag: bool | None) -> bool | None:
    """Force offloading on or off for this process (``None``: back to the environment);
    returns what was forced before (``None``: nothing), to put it back."""
    global _enabled
    previous, _enabled = _enabled, flag
    return previous


def workers() -> int:
    """``$TEAMDECK_IO_THREADS`` if a positive integer, else ``DEFAULT_WORKERS``."""
    return positive_from_env(WORKERS_ENV, DEFAULT_WORKERS, int)


def executor() -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool for blocking work (created on first use)."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers(), thread_name_prefix="teamdeck-io"
            )
        return _executor


_background: set[asyncio.AbstractEventLoop] = set()


def mark_background(loop: asyncio.AbstractEventLoop) -> None:
    """``loop`` runs in a thread of its own, where nobody waits on it (the model calls' loop):
    ``off_loop`` runs calls made there inline instead of handing them to yet another thread."""
    _background.add(loop)


async def off_loop(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``func(*args, **kwargs)`` in a worker thread (inline on a background loop); its result
    or exception."""
    loop = asyncio.get_running_loop()
    if loop in _background or not enabled():
        return func(*args, **kwargs)
    future = executor().submit(_in_worker, loop, functools.partial(func, *args, **kwargs))
    return await _wait(future, func)


def on_loop(callback: Callable[P, object], /, *args: P.args, **kwargs: P.kwargs) -> None:
    """Call ``callback`` on the event loop's thread: now if that is where we are (or no loop is
    involved), else as soon as the loop gets to it. Callbacks posted by one call run in order,
    and before its caller resumes."""
    loop: asyncio.AbstractEventLoop | None = getattr(_worker, "loop", None) or CALLER_LOOP.get()
    if loop is None:
        callback(*args, **kwargs)
        return
    let_the_person_go_first()  # another thread's step: a key press's frame first
    try:
        loop.call_soon_threadsafe(functools.partial(callback, *args, **kwargs))
    except RuntimeError:  # that loop is closed: nobody is left to tell
        log.debug("dropped %s: its event loop is closed", _name(callback))


class Lane:
    """One agent's blocking file work, run off the loop one call at a time, in the order it was
    handed over (awaited or not)."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._jobs: collections.deque[_Job] = collections.deque()
        self._lock = threading.Lock()
        self._draining = False
        self._unfinished = 0
        self._idle = threading.Event()
        self._idle.set()

    def __repr__(self) -> str:
        return f"Lane({self.name!r}, {len(self._jobs)} queued)"

    @property
    def pending(self) -> int:
        """Calls handed over and not finished yet (the one running included)."""
        return self._unfinished

    async def run(self, func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``func(*args, **kwargs)`` after everything handed over before; its result or
        exception (cancellation: see the module docstring)."""
        loop = asyncio.get_running_loop()
        if not enabled():
            return func(*args, **kwargs)
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._put(_Job(loop, functools.partial(func, *args, **kwargs), future, None, False))
        return await _wait(future, func)

    def submit(
        self,
        func: Callable[..., object],
        /,
        *args: Any,
        on_error: ErrorHandler | None = None,
        **kwargs: Any,
    ) -> None:
        """Hand ``func(*args, **kwargs)`` over without waiting; if it raises, ``on_error(exc)``
        runs on the loop's thread (the error is logged without one). Inline outside a running
        loop."""
        call = functools.partial(func, *args, **kwargs)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or not enabled():
            self.flush()
            try:
                call()
            except Exception as exc:
                _report(call, exc, on_error)
            return
        future: concurrent.futures.Future[object] = concurrent.futures.Future()
        self._put(_Job(loop, call, future, on_error, True))

    def flush(self, timeout: float | None = None) -> bool:
        """Block the calling thread until everything handed over so far has run -- for a
        synchronous step that must come after the lane's writes (leaving the team). Whether it
        got there within ``timeout``. Never call it from inside the lane's own calls."""
        return self._idle.wait(timeout)

    def _put(self, job: _Job) -> None:
        with self._lock:
            self._jobs.append(job)
            self._unfinished += 1
            self._idle.clear()
            if self._draining:
                return
            self._draining = True
        executor().submit(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._jobs:
                    self._draining = False
                    self._idle.set()
                    return
                job = self._jobs.popleft()
            try:
                self._run_job(job)
            finally:
                with self._lock:
                    self._unfinished -= 1

    @staticmethod
    def _run_job(job: _Job) -> None:
        if not job.future.set_running_or_notify_cancel():
            return  # its caller was cancelled while it waited: never run
        try:
            result = _in_worker(job.loop, job.call)
        except BaseException as exc:
            job.future.set_exception(exc)
            if job.fire_and_forget and isinstance(exc, Exception):
                _post(job.loop, _report, job.call, exc, job.on_error)
        else:
            job.future.set_result(result)


@dataclasses.dataclass(slots=True)
class _Job:
    loop: asyncio.AbstractEventLoop
    call: Callable[[], Any]
    future: concurrent.futures.Future[Any]
    on_error: ErrorHandler | None
    #: Nobody awaits the future, so an error is reported to ``on_error`` instead.
    fire_and_forget: bool


def _in_worker(loop: asyncio.AbstractEventLoop, call: Callable[[], T]) -> T:
    let_the_person_go_first()  # a key press's frame before the team's next file call
    _worker.loop = loop
    try:
        return call()
    finally:
        _worker.loop = None


def _post(loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: Any) -> None:
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # the loop is closed: nobody is left to tell
        log.warning("%s failed after the event loop closed: %s", _name(args[0]), args[1])


def _report(call: object, exc: Exception, on_error: ErrorHandler | None) -> None:
    if on_error is None:
        log.warning("%s failed: %s", _name(call), exc)
        return
    try:
        on_error(exc)
    except Exception:
        log.exception("the error handler of %s failed", _name(call))


def _name(call: object) -> str:
    func = getattr(call, "func", call)
    return str(getattr(func, "__qualname__", repr(func)))


async def _wait(future: concurrent.futures.Future[T], func: Callable[..., Any]) -> T:
    waiter = asyncio.wrap_future(future)
    try:
        return await asyncio.shield(waiter)
    except asyncio.CancelledError:
        if future.cancel():  # still queued: it never ran
            raise
        await _finish(future, waiter, func)
        raise


async def _finish(
    future: concurrent.futures.Future[T], waiter: asyncio.Future[T], func: Callable[..., Any]
) -> None:
    """Wait for a started call to end despite further cancellations; log what it raised (its
    caller is gone, so no one else can)."""
    while not future.done():
        try:
            await asyncio.shield(waiter)
        except asyncio.CancelledError:
            continue
        except Exception:
            break
    if not future.cancelled() and future.exception() is not None:
        log.warning("%s failed after its caller was cancelled: %s", _name(func), future.exception())

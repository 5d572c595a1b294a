"""The person first: while a key press waits for its frame, the team's threads wait at their next
step, so the dashboard's loop has the interpreter to itself.

In-process teammates compute in the process's other threads (the model calls' loop builds and
parses requests, the worker threads encode and decode the files), under the one interpreter lock
the dashboard's loop needs too. The loop lets the lock go at every turn (each ``select``, each
write to a pipe), and a key press takes tens of turns to reach the screen: each time, a
computing thread may keep the lock for the switch interval. With two threads computing, a key
press that takes 12 ms alone took 60 ms (p95, measured with the dashboard of fifty panels and
two busy threads, the same run with them paused alternated).

So the dashboard says when the person waits (``person_waits``: a key was pressed) and when the
wait is over (``person_served``: the key's frame is drawn). Meanwhile the team's threads stop at
their next step (``let_the_person_go_first``: a worker thread before its next file call, the
model calls' loop before its next call or streamed event) and in-process turns wait before they
take a slot (``turn_slots``). Nothing is cut short: a step that began finishes. The wait is
bounded: it ends at ``seconds`` after the last key at the latest, whether or not its frame came
(a dashboard that never says ``person_served`` holds nothing for long), and the thread that said
the person waits (the dashboard's loop) never waits itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

_lock = threading.Lock()
_until = 0.0  # the wait ends then at the latest (time.monotonic)
_served = threading.Event()
_served.set()
_loop_thread: int | None = None  # the thread that said the person waits: it never waits
#: In-process turns waiting on their event loops (``turn_waits``), woken by ``person_served``.
_waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
#: Steps that waited for the person (what the tests and the benchmarks read).
yielded = 0


def person_waits(seconds: float) -> None:
    """A key press: the team's next steps wait until ``person_served`` or ``seconds`` from
    now."""
    global _until, _loop_thread
    with _lock:
        _until = max(_until, time.monotonic() + seconds)
        _loop_thread = threading.get_ident()
        _served.clear()


def person_served() -> None:
    """The key's frame is drawn: the team goes on."""
    global _until
    with _lock:
        _until = 0.0
        _served.set()
        waiters = list(_waiters)
    try:
        here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    for loop, event in waiters:
        if loop is here:  # (no wake-up write: it lets the interpreter go)
            event.set()
            continue
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits there
            loop.call_soon_threadsafe(event.set)


def remaining() -> float:
    """Seconds the person may still be waited for (0: nobody waits)."""
    return max(0.0, _until - time.monotonic()) if not _served.is_set() else 0.0


def let_the_person_go_first() -> None:
    """In one of the team's threads: wait while the person waits (never on the thread that said
    so)."""
    global yielded
    left = remaining()
    if left <= 0 or threading.get_ident() == _loop_thread:
        return
    yielded += 1
    _served.wait(left)


async def turn_waits() -> None:
    """On an event loop, before an in-process turn takes its slot: wait while the person waits.
    The loop goes on meanwhile (the key's own work is on it)."""
    global yielded
    if remaining() <= 0:
        return
    yielded += 1
    waiter = (asyncio.get_running_loop(), asyncio.Event())
    with _lock:
        _waiters.add(waiter)
    try:
        if (left := remaining()) > 0:  # (not served meanwhile)
            with contextlib.suppress(TimeoutError):  # (not wait_for: it can lose a cancel)
                async with asyncio.timeout(left):
                    await waiter[1].wait()
    finally:
        with _lock:
            _waiters.discard(waiter)

"""The dashboard's event loop gets the interpreter back promptly from the team's threads.

A thread that wants the GIL waits for its holder to drop it, which CPython asks for after the
switch interval (5 ms by default). The dashboard's loop lets the GIL go at every ``select`` and
every write to a pipe, so each time it comes back it may wait that long behind a thread that
computes: the model calls' loop (``app.runtime.scheduling.model_loop``: in-process teammates
at pace 0 build and parse requests there), the offloaded file work, the store's reads. A key
press passes through several turns of the loop on its way to the screen (the driver's message,
the action, the view's message, the frame), and waited that long at each (bench/live.py's
``keypress`` row, 8 teammates at pace 0, the same code with the default and with 1 ms,
alternated: key p95 130 / 67 / 72 -> 60 / 76 / 46 ms, loop lag p99 114 / 69 / 73 -> 70 / 63 /
56 ms). A shorter interval costs the threads that compute a few more switches.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

INTERVAL = 0.001
"""Seconds a thread computes before one waiting for the GIL gets it (CPython's default 0.005)."""


def favour_the_loop() -> Callable[[], None]:
    """Shorten the switch interval while the dashboard runs; the callable puts it back."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, INTERVAL))
    return lambda: sys.setswitchinterval(before)

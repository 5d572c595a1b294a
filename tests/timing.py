"""One time scale for every real-time wait in the tests.

Waits in these tests are hang guards ("the team finishes within 60 s"), never speed checks. On a
loaded machine (a shared CI box, the suite's own workers) the same work takes longer, so every
guard is stretched by one factor: ``TEAMDECK_TEST_TIME_SCALE`` (default 1) times the load per
core when that is above 1. Waits that prove something does *not* happen (a short quiet period)
are not scaled: stretching them would only slow the suite.
"""

from __future__ import annotations

import os
import time

SCALE_ENV = "TEAMDECK_TEST_TIME_SCALE"


def time_scale() -> float:
    """The factor applied now: the setting times the machine's load per core (at least 1)."""
    try:
        setting = float(os.environ.get(SCALE_ENV, "") or 1.0)
    except ValueError:
        setting = 1.0
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        load = 1.0
    return max(setting, 0.1) * max(1.0, load)


def scaled(seconds: float) -> float:
    """``seconds`` of hang guard, stretched by :func:`time_scale`."""
    return seconds * time_scale()


def deadline(seconds: float) -> float:
    """A ``time.monotonic()`` deadline ``scaled(seconds)`` from now."""
    return time.monotonic() + scaled(seconds)

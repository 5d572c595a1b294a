"""The scheduling class of a teammate process (light: imported before anything heavy)."""

from __future__ import annotations

import contextlib
import os

#: How much nicer than the dashboard a teammate process runs. At nice +10 the kernel's fair
#: scheduler weighs a teammate at about a tenth of the dashboard (110 against 1024), so with
#: 50 busy teammates on 2 cores the dashboard still gets what it asks for instead of 1/51 of a
#: core: the person's keys and screen never queue behind the team's turns.
TEAMMATE_NICE = 10
#: This process was made nicer already: a teammate forked from the (already nice) fork server
#: inherits this module with the flag set, and is not lowered a second time.
_lowered = False


def batch_priority() -> None:
    """Run this process as batch work: ``TEAMMATE_NICE`` nicer than the process that started
    it, and (Linux) ``SCHED_BATCH``; nothing elsewhere.

    A teammate process is throughput work: the dashboard and the person's terminal win every
    wake-up against it, and teammates that wake each other with file events do not preempt
    one another (measured in bench/live.py's ``process0`` row: fewer context switches)."""
    global _lowered
    if not _lowered:
        _lowered = True
        with contextlib.suppress(OSError):
            os.nice(TEAMMATE_NICE)
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, policy, os.sched_param(0))

"""The scheduling class of a teammate process (light: imported before anything heavy)."""

from __future__ import annotations

import contextlib
import os


def batch_priority() -> None:
    """Run this process as batch work (Linux ``SCHED_BATCH``; nothing elsewhere).

    A teammate process is throughput work: the dashboard and the person's terminal win every
    wake-up against it, and teammates that wake each other with file events do not preempt
    one another (measured in bench/live.py's ``process0`` row: fewer context switches)."""
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, policy, os.sched_param(0))

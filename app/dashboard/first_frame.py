"""The dashboard's start-up figure: seconds from the process's start to its first painted frame.

Logged always; also appended to the file named by ``$TEAMDECK_FIRST_FRAME`` when it is set
(``bench/startup.py`` reads it from there: the dashboard owns the terminal meanwhile).
"""

from __future__ import annotations

import logging
import os
import time

FIRST_FRAME_ENV = "TEAMDECK_FIRST_FRAME"

log = logging.getLogger(__name__)


def process_age() -> float | None:
    """Seconds since this process started (Linux: ``/proc/self/stat``, 10 ms steps); None
    where that cannot be read."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def report_first_frame() -> float | None:
    """Log (and write to ``$TEAMDECK_FIRST_FRAME``) the time to the first frame; returns it."""
    age = process_age()
    if age is None:
        return None
    log.info("first frame %.2f s after the process started", age)
    target = os.environ.get(FIRST_FRAME_ENV)
    if target:
        try:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"{age:.3f}\n")
        except OSError:
            log.warning("could not write the first-frame time to %s", target)
    return age

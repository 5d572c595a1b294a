"""The dashboard's start: a line on the terminal until it draws, and how long it took.

``announce_start`` writes "starting teamdeck…" at once (importing and building the dashboard
takes a moment before anything is drawn); ``clear_start`` erases it just before the dashboard
takes the screen, so it is not left behind when the dashboard ends. Light: the CLI calls it
before it imports the dashboard.

``report_first_frame``: seconds from the process's start to its first painted frame, logged
always and appended to the file named by ``$TEAMDECK_FIRST_FRAME`` when it is set
(``bench/startup.py`` reads it from there: the dashboard owns the terminal meanwhile).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import TextIO

FIRST_FRAME_ENV = "TEAMDECK_FIRST_FRAME"

STARTING = "starting teamdeck…"

log = logging.getLogger(__name__)
_shown: list[TextIO] = []


def announce_start(stream: TextIO | None = None) -> None:
    """Write :data:`STARTING` (no newline) if ``stream`` (stdout) is a terminal."""
    stream = stream or sys.stdout
    if _shown or not stream.isatty():
        return
    stream.write(STARTING)
    stream.flush()
    _shown.append(stream)


def clear_start() -> None:
    """Erase the line :func:`announce_start` wrote, if it did (idempotent)."""
    while _shown:
        stream = _shown.pop()
        stream.write("\r\x1b[K")
        stream.flush()


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

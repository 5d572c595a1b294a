"""A teammate process whose lead is gone: it shuts down after a grace period.

A lead that quits leaving its team running removes its record (``teams/{team}/agents/
team-lead.json``): the person chose that, and ``teamdeck attach`` leads the team again later.
A lead killed or crashed leaves its record behind, naming a process that no longer runs (its
pid is gone, or was given to a process that started later: ``procStart``). Nobody can then
answer the teammates' requests or read their reports. Each teammate process looks at the record
every few seconds (:class:`LeadWatch`); once the lead has been gone for
``$TEAMDECK_ORPHAN_TIMEOUT`` seconds (default ``DEFAULT_TIMEOUT``; ``0`` never) with no dashboard
attached (``attach`` writes a record of its own, a live lead again), the teammate leaves the
team the way a shutdown does: its unfinished tasks go back to pending with no owner, its files
stay.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from app.runtime.runners.process_record import read_record, same_process

log = logging.getLogger(__name__)

TIMEOUT_ENV = "TEAMDECK_ORPHAN_TIMEOUT"
#: Seconds a teammate goes on without a lead (enough to ``teamdeck attach`` after a crash).
DEFAULT_TIMEOUT = 300.0
#: Longest wait between two looks at the lead's record.
CHECK_S = 5.0


def orphan_timeout() -> float | None:
    """The grace period from the environment, ``None`` for never; a bad value is the default
    (and one warning line)."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        log.warning("%s=%.40r is not a number of seconds: %g used", TIMEOUT_ENV, raw,
                    DEFAULT_TIMEOUT)  # fmt: skip
        return DEFAULT_TIMEOUT
    return seconds or None


class LeadWatch:
    """Whether a teammate's lead is gone, and for how long (see the module docstring)."""

    def __init__(
        self, record_path: Path, timeout: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.record_path = record_path
        self.timeout = timeout
        self._clock = clock
        self.gone_since: float | None = None
        #: Seconds between two looks.
        self.interval = max(0.2, min(CHECK_S, timeout / 4))

    def check(self) -> str | None:
        """``None`` while the lead runs (or left on purpose); once it has been gone for the
        whole grace period, why the teammate shuts down."""
        found = read_record(self.record_path)
        if found is None or same_process(found[0]):
            self.gone_since = None
            return None
        now = self._clock()
        if self.gone_since is None:
            self.gone_since = now
        if now - self.gone_since < self.timeout:
            return None
        return (
            f"its lead (pid {found[0].pid}) is gone and no dashboard attached "
            f"within {self.timeout:g}s"
        )

"""Waking idle teammates for new work: as many as there are tasks to claim, not all of them.

A task change (created, completed, unblocked, returned to the board) used to wake every
teammate of the team: with fifty teammates, fifty inbox reads and fifty claim attempts for one
new task, forty-nine of them for nothing. Here a burst of task changes is answered once: the
claimable tasks are counted (this process's board, off the loop), and that many idle
in-process teammates are woken, the longest idle first. A teammate that is working needs no
wake-up: it looks for a task when its turn ends. Teammate processes wake themselves on their
own file events (``runners.teammate_process``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from app.core import Home
from app.core.errors import TeamdeckError
from app.runtime.runners.base import Runner
from app.runtime.runners.inprocess import InProcessRunner
from app.runtime.scheduling import offload

log = logging.getLogger(__name__)


class TaskWakeups:
    """Wakes idle teammates for claimable tasks, one count per burst of task changes.

    Args:
        home: the home the team lives in.
        team: the team the lead leads now (``None``: none).
        runners: the teammates still in the team, by name.
    """

    def __init__(
        self, home: Home, team: Callable[[], str | None], runners: Callable[[], dict[str, Runner]]
    ) -> None:
        self.home = home
        self._team = team
        self._runners = runners
        self._count: asyncio.Future[None] | None = None
        self._again = False
        #: Teammates woken so far (what the tests count).
        self.woken = 0

    def tasks_changed(self) -> None:
        """A task of the team changed: wake idle teammates for what can be claimed now."""
        if not self._idle():
            return  # every teammate is busy: each looks for a task when its turn ends
        if self._count is not None and not self._count.done():
            self._again = True
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): count here
            self._wake(self._claimable(self._team(), len(self._idle())))
            return
        self._count = asyncio.ensure_future(self._count_off_loop())

    def _idle(self) -> list[InProcessRunner]:
        """The idle in-process teammates, longest idle first (the others wake themselves)."""
        idle = [
            r
            for r in self._runners().values()
            if isinstance(r, InProcessRunner) and not r.finished and r.snapshot().status == "idle"
        ]
        idle.sort(key=lambda r: r.snapshot().status_since)
        return idle

    async def _count_off_loop(self) -> None:
        while True:
            self._again = False
            team = self._team()
            idle = len(self._idle())
            count = await offload.off_loop(self._claimable, team, idle) if idle else 0
            if team == self._team():
                self._wake(count)
            if not self._again:
                return

    def _claimable(self, team: str | None, limit: int) -> int:
        if not team:
            return 0
        try:
            return self.home.tasks(team).claimable_count(limit)
        except (TeamdeckError, OSError) as exc:  # unreadable: wake them all, each retries
            log.warning("cannot count the claimable tasks: %s", exc)
            return limit

    def _wake(self, count: int) -> None:
        for runner in self._idle()[:count]:
            self.woken += 1
            runner.wake()

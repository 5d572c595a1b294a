"""Teammates in processes of their own, seen through their files (``process`` and ``tmux``).

A teammate process (``teamdeck agent``) speaks to its team through the inboxes, tasks and
config like any other member, and writes what it does to its event log (see
:mod:`~app.runtime.runners.event_log`). The :class:`ExternalRunner` in the lead's runtime:

- re-emits the log's lines as runtime events (``on_log``, called when the watcher sees the log
  grow), so the dashboard shows the teammate exactly like an in-process one;
- watches that the process lives (its pid, its heartbeat); one that dies without logging its
  exit is *reaped*: shown as failed, its tasks go back to the board, it leaves the config and
  the lead is told -- no zombie member, no orphaned task;
- steers it with signals (SIGINT interrupts its turn, SIGTERM asks it to stop at once, SIGKILL
  after ``KILL_GRACE``) and the person's messages through its inbox (from ``user``).

``detach()`` stops watching without touching the process: the team goes on without the
dashboard, and ``teamdeck attach`` adopts it again (``adopt()``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core.errors import TeamdeckError
from app.core.models import InboxMessage
from app.core.paths import USER_NAME
from app.runtime.agent.channel import TeamChannel
from app.runtime.api import AgentSnapshot, Approval
from app.runtime.events import (
    TERMINAL_STATUSES,
    AgentStatus,
    ApprovalChanged,
    RuntimeEvent,
    StatusChanged,
    TranscriptEntry,
)
from app.runtime.runners.base import TeammateSpec
from app.runtime.runners.event_log import LoggedAgent, LogReader, append_lines, exit_line
from app.runtime.runners.log_seen import read_seen, write_seen
from app.runtime.runners.process_record import AgentRecord, is_alive, pid_exists, read_record

if TYPE_CHECKING:
    from app.core import Home

log = logging.getLogger(__name__)

#: Seconds between liveness checks.
CHECK_S = 1.0


def check_phase(name: str) -> float:
    """Where in each ``CHECK_S`` second teammate ``name``'s check falls, in [0, 1): a team's
    teammates are spawned together, and their checks (a read of the log, the record and
    ``/proc`` each) all fell in the same turn of the dashboard's loop once a second, a
    stall of a few ms at 25 teammates. Spread by the name (the same each run)."""
    return zlib.crc32(name.encode()) % 997 / 997


#: Seconds a started process has to write its record before it counts as failed to start.
START_TIMEOUT = 30.0
#: Seconds between SIGTERM and SIGKILL when a teammate is killed.
KILL_GRACE = 3.0


class ExternalRunner:
    """The lead's side of a teammate process (subclasses say how it is started)."""

    backend = "process"
    #: Whether reaping it tells the lead (a joined machine's teammate killed on the lead's
    #: request: the lead's dashboard told the lead already).
    tell_lead = True

    def __init__(
        self,
        spec: TeammateSpec,
        *,
        home: Home,
        emit: Callable[[RuntimeEvent], None],
        on_exit: Callable[[ExternalRunner], None],
        record: AgentRecord | None = None,
        orphan: bool = False,
    ) -> None:
        self.spec = spec
        #: Adopted with no record at all: no process of ours runs it (reaped at once).
        self.orphan = orphan
        self.home = home
        self._emit = emit
        self._on_exit = on_exit
        self.record = record
        self.agent = LoggedAgent(
            AgentSnapshot(
                name=spec.name,
                color=spec.color,
                status="running",
                model=spec.model,
                mode=spec.mode,
                agent_type=spec.agent_type,
            )
        )
        self.reader = LogReader(home.layout.agent_log_path(spec.team, spec.name))
        self._record_path = home.layout.agent_record_path(spec.team, spec.name)
        self._finished = False
        self._monitor: asyncio.Task[None] | None = None
        self._since = time.monotonic()
        self._kill_at: float | None = None
        self.error: str | None = None
        #: Why the process could not be started, when that is known after ``start()``.
        self.start_error: str | None = None
        #: Requests of a dead process found on attach: never queued, named when it is reaped.
        self.dropped: list[Approval] = []

    # ------------------------------------------------------------------ Runner

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def pid(self) -> int | None:
        return self.record.pid if self.record is not None else None

    def start(self) -> None:
        """Start the process, then watch it."""
        self._since = time.monotonic()
        try:
            self.launch()
        except (OSError, TeamdeckError) as exc:
            self._reap(f"could not start its process: {exc}", status="failed")
            return
        self._watch()

    def adopt(self) -> None:
        """Watch a process an earlier dashboard started (``teamdeck attach``). What that
        dashboard showed of its log is folded in without being emitted again (it was recorded
        then: ``app.runtime.runners.log_seen``); an answer the log says was given still closes
        its request in the queue."""
        for line in self.reader.read_new(upto=read_seen(self.reader.path)):
            for event in self.agent.apply(line):
                if isinstance(event, ApprovalChanged) and event.resolved:
                    self._emit(event)
        self.on_log()
        if not self._finished:
            self._check()
        if not self._finished:
            self._watch()

    def detach(self) -> None:
        """Stop watching; the process goes on (how much of its log was shown is noted for the
        next ``attach``)."""
        if self._monitor is not None:
            self._monitor.cancel()
            self._monitor = None
        if not self._finished:
            write_seen(self.reader.path, self.reader.consumed)

    def team_deleted(self) -> None:
        """The team was deleted (its folder, logs included, is gone): the teammate had left
        it already -- a team is only deleted once no teammate is a member -- so it ended."""
        if self._finished:
            return
        self.on_log()
        if self._finished:
            return
        snap = self.agent.snapshot
        if snap.status not in TERMINAL_STATUSES:
            snap.status, snap.status_since = "completed", time.time()
            snap.ended_at = snap.status_since
            self._emit(StatusChanged(self.spec.name, "completed", ""))
        self._finish()

    def kill(self) -> None:
        if self._finished:
            return
        if self._signal(signal.SIGTERM):
            self._kill_at = time.monotonic() + KILL_GRACE
        else:
            self._reap("killed before its process started", status="killed")

    def interrupt(self) -> None:
        self._signal(signal.SIGINT)

    def inject(self, text: str) -> None:
        """The person's message: first in the teammate's queue (it reads ``user`` mail first)."""
        self.home.mailbox(self.spec.team).append(
            self.spec.name, InboxMessage(sender=USER_NAME, text=text)
        )

    def wake(self) -> None:
        """Nothing to do: the process has a watcher of its own."""

    def snapshot(self) -> AgentSnapshot:
        return self.agent.snapshot

    def transcript(self) -> list[TranscriptEntry]:
        return list(self.agent.transcript)

    # ------------------------------------------------------------------ to override

    def launch(self) -> None:
        raise NotImplementedError

    def process_alive(self) -> bool:
        """Whether the teammate's process still runs (by its record and heartbeat)."""
        found = read_record(self._record_path)
        if found is None:
            if self.orphan:
                return False
            return self.record is None and time.monotonic() - self._since < START_TIMEOUT
        self.record, age = found
        return is_alive(self.record, age)

    # ------------------------------------------------------------------ the log

    def on_log(self) -> None:
        """The log grew: fold the new lines in and re-emit them."""
        for line in self.reader.read_new():
            for event in self.agent.apply(line):
                self._emit(event)
        if self.agent.exit is not None and not self._finished:
            self._finish()

    # ------------------------------------------------------------------ liveness

    def _watch(self) -> None:
        if self._monitor is None and not self._finished:
            self._monitor = asyncio.ensure_future(self._run_monitor())

    async def _run_monitor(self) -> None:
        await asyncio.sleep(CHECK_S * check_phase(self.spec.name))
        while not self._finished:
            await asyncio.sleep(CHECK_S)
            try:
                self._check()
            except Exception:  # a check must never end the watch silently
                log.exception("checking teammate %s failed", self.spec.name)

    def _check(self) -> None:
        self.on_log()
        if self._finished:
            return
        if self.process_alive():
            if self._kill_at is not None and time.monotonic() >= self._kill_at:
                self._signal(signal.SIGKILL)
                self._kill_at = None
                self._reap("killed", status="killed")
            return
        self.on_log()  # its last words, if it wrote them before it ended
        if self._finished:
            return
        if self._kill_at is not None:
            self._reap("killed", status="killed")
        elif self.orphan:
            self._reap("no process runs it (it ran in a dashboard that has ended)")
        elif self.start_error is not None:
            self._reap(f"could not start its process: {self.start_error}", status="failed")
        elif self.record is None:
            self._reap("its process never started", status="failed")
        else:
            self._reap(f"its process (pid {self.record.pid}) ended without leaving the team")

    def _signal(self, sig: signal.Signals) -> bool:
        pid = self.pid
        if pid is None or not pid_exists(pid):
            return False
        try:
            if sig == signal.SIGKILL:
                with contextlib.suppress(OSError):  # its commands too, when it leads a group
                    if os.getpgid(pid) == pid:
                        os.killpg(pid, sig)
                        return True
            os.kill(pid, sig)
        except ProcessLookupError:
            return False
        except PermissionError as exc:
            log.warning("cannot signal %s (pid %d): %s", self.spec.name, pid, exc)
            return False
        return True

    def _reap(self, how: str, *, status: AgentStatus = "failed") -> None:
        """The process is gone without having left the team: leave on its behalf."""
        if self._finished:
            return
        name = self.spec.name
        if self.dropped:
            kinds = " and ".join(sorted({f"{a.kind} request" for a in self.dropped}))
            how += f"; its unanswered {kinds} can no longer be answered and was dropped"
        headline = f'Teammate "{name}" {"was killed" if status == "killed" else "failed"}: {how}.'
        spec = self.spec
        channel = TeamChannel(self.home, spec.team, name, spec.color, backend=self.backend)
        channel.leave("terminated", headline=headline, tell_lead=self.tell_lead)
        with contextlib.suppress(OSError):  # the team folder may be gone with it
            append_lines(self.reader.path, [exit_line(status, how, how, reapedBy=os.getpid())])
        self.error = how
        snap = self.agent.snapshot
        snap.error = how
        snap.ended_at = time.time()
        if snap.status != status:
            snap.status = status
            snap.status_since = snap.ended_at
            self._emit(StatusChanged(name, snap.status, how))
        self._finish()

    def _finish(self) -> None:
        self._finished = True
        if self._monitor is not None and self._monitor is not asyncio.current_task():
            self._monitor.cancel()
        self._monitor = None
        self._on_exit(self)

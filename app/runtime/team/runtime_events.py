"""The runtime's event stream and the wake-ups: who hears of what, and when agents wake.

A mixin of :class:`~app.runtime.team.runtime.TeamRuntime`: listeners (the dashboard, the
headless runner) get every :class:`~app.runtime.events.RuntimeEvent`; every file change (any
process's) arrives from the one watcher and wakes the agents it concerns -- the lead's inbox
is scanned for requests once per burst, a teammate's inbox closes requests answered from
elsewhere, the task list wakes those who may claim.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from app.core.events import AgentLogChanged, ChangeEvent, InboxChanged, TaskChanged, TeamRemoved
from app.core.paths import LEAD_NAME
from app.runtime.agent.channel import Sent, sent_event
from app.runtime.events import RuntimeEvent

if TYPE_CHECKING:
    from app.core.models import InboxMessage
    from app.runtime.agent.lead import Lead
    from app.runtime.team.answers import RequestDesk
    from app.runtime.team.crew import Crew
    from app.runtime.team.lead_inbox import LeadInbox
    from app.runtime.team.processes import TeamProcesses
    from app.runtime.team.task_wakeups import TaskWakeups

Listener = Callable[[RuntimeEvent], None]


class TeamEvents:
    """The event stream and the file changes' wake-ups (``TeamRuntime`` sets the parts)."""

    _listeners: list[Listener]
    _scheduled: set[str]
    _loop: asyncio.AbstractEventLoop | None
    team: str | None
    lead: Lead
    lead_inbox: LeadInbox
    desk: RequestDesk
    crew: Crew
    processes: TeamProcesses | None
    task_wakeups: TaskWakeups

    def subscribe(self, callback: Listener) -> Callable[[], None]:
        self._listeners.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return unsubscribe

    async def events(self) -> AsyncIterator[RuntimeEvent]:
        queue: asyncio.Queue[RuntimeEvent] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()

    def _emit(self, event: RuntimeEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _on_sent(self, sent: Sent) -> None:
        """A message this process's agents wrote becomes an event. (A request to the lead
        reaches the queue as any process's does: the watcher reports it, the inbox is scanned.)"""
        self._emit(sent_event(sent))

    def _on_watch_batch(self, batch: list[ChangeEvent]) -> None:
        for event in batch:
            self.on_file_change(event)

    def on_file_change(self, event: ChangeEvent) -> None:
        """Wake the agents a file change concerns (the lead's inbox is also scanned for
        requests, once per burst)."""
        if isinstance(event, InboxChanged):
            if event.team != self.team:
                return
            if event.agent == LEAD_NAME:
                self._soon("scan_lead", self.lead_inbox.scan)
                self.lead.wake.set()
            else:  # a teammate's: an answer to its request from elsewhere closes it here
                self._soon(f"answers {event.agent}", lambda: self.desk.note_answers(event.agent))
                if (runner := self.crew.runners.get(event.agent)) is not None:
                    runner.wake()
        elif isinstance(event, AgentLogChanged) and self.processes is not None:
            self.processes.on_log(event)
        elif isinstance(event, TaskChanged):
            if event.team != self.team:
                return
            self._soon("claimable", self.task_wakeups.tasks_changed)
        elif isinstance(event, TeamRemoved) and event.team == self.team:
            self.lead.hurry()

    def _soon(self, key: str, job: Callable[[], None]) -> None:
        """Run ``job`` once on the loop, however often it is asked for before it runs."""
        if key in self._scheduled:
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            job()
            return
        self._scheduled.add(key)

        def run() -> None:
            self._scheduled.discard(key)
            job()

        loop.call_soon_threadsafe(run)

    # ============================================================ the lead's inbox

    def _request_queued(self) -> None:
        """A request reached the queue: the lead reads its mail now, without the hold that
        spaces out a flood (it may be the lead's to decide)."""
        self.lead.hurry()

    def observe_lead_frame(self, message: InboxMessage, frame: Any) -> None:
        """Queue a plan/permission request found in the lead's inbox (idempotent)."""
        self.lead_inbox.observe(message, frame)

"""The lead session: the person's prompts are turns; the lead's inbox is delivered automatically.

* When idle, new mail starts a turn; when busy, it is added at the next tool-result boundary.
* Pure idle notifications (and task_completed notes) are coalesced and never wake the model by
  themselves: they ride along with the next real message.
* Every read takes all the unread mail at once, and mail that comes during a turn wakes exactly
  one more turn (the wake-up is kept, never lost: :mod:`app.runtime.agent.wakeup`). Mail that
  keeps coming is held a little before the next read (:mod:`app.runtime.agent.mail_hold`): a
  teammate flooding the lead costs a few model calls, not one per message. The person's
  prompt and a request the lead has to act on end the hold at once.
* Plan, permission and shutdown frames feed the approvals queue. When the lead model decides
  requests, they are delivered to it; when the person decides, the model only gets a note that
  names no request id (it has nothing to answer: only the person's signed answer acts).
* The lead's own member entry keeps ``isActive`` current like a teammate's (seed 000's
  ``setMemberActive``: true while it works, false when idle; written only on change). The seeds'
  TeamCreate writes the lead's entry without the field; it appears at the first transition
  after the team exists (the first tool-result boundary after TeamCreate).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import TYPE_CHECKING, Any, Protocol

from app.core.errors import CorruptFileError, TeamdeckError
from app.core.paths import LEAD_NAME
from app.core.protocol import (
    IdleNotification,
    PermissionRequest,
    PlanApprovalRequest,
    TaskCompleted,
    parse_frame,
    wrap_teammate_message,
)
from app.runtime.agent.loop import run_turn
from app.runtime.agent.mail_hold import MailHold
from app.runtime.agent.session import AgentSession
from app.runtime.agent.wakeup import Wakeup
from app.runtime.events import TurnOutcome

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from app.core import Home
    from app.core.mailbox import Mailbox
    from app.core.models import InboxMessage
    from app.runtime.api import Decider


class LeadHost(Protocol):
    """What the lead's loop needs from its runtime."""

    home: Home
    team: str | None
    decider: Decider

    def observe_lead_frame(self, message: InboxMessage, frame: Any) -> None: ...

    def lead_turn_ended(self, outcome: TurnOutcome) -> None: ...


class Lead:
    def __init__(self, runtime: LeadHost, session: AgentSession) -> None:
        self.runtime = runtime
        self.session = session
        self.prompts: deque[str] = deque()
        self.wake = Wakeup()
        self.idle_notes: dict[str, str] = {}
        self.notes: list[str] = []
        self.turns = 0
        #: The ``isActive`` last written, for which team.
        self._active: tuple[str, bool] | None = None
        #: Spaces out the turns that only mail started (a flood of messages).
        self.hold = MailHold()

    def submit(self, text: str) -> None:
        self.prompts.append(text)
        self.wake.set()
        self.hold.hurry()  # the person goes first

    def hurry(self) -> None:
        """Something the lead has to act on came (a request it may decide, the team's end):
        wake it, without the hold that spaces out a flood."""
        self.hold.hurry()
        self.wake.set()

    async def run(self) -> None:
        self.wake.bind(asyncio.get_running_loop())
        self.hold.bind(asyncio.get_running_loop())
        while True:
            self.wake.clear()
            if not self.prompts:
                await self.hold.wait()  # mail read afterwards: nothing that came is lost
            by_person = bool(self.prompts)
            prompt = await self._next_prompt()
            if prompt is None:
                await self.wake.wait(5.0)
                continue
            self.hold.turn_started(by_mail=not by_person)
            self.session.set_status("running")
            self._mark_active(True)
            try:
                outcome = await run_turn(self.session, prompt, drain=self.drain)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug must end the turn visibly, not kill the lead
                message = f"{type(exc).__name__}: {exc}"
                self.session.record("error", message)
                self.session.set_error(message)
                outcome = TurnOutcome("error", "", message)
            self.turns += 1
            self.hold.turn_ended()
            self.session.set_status("idle")
            self._mark_active(False)
            self.runtime.lead_turn_ended(outcome)

    def _mark_active(self, active: bool) -> None:
        """``isActive`` of the lead's entry in the team config, written on change only (a
        config rewrite: off the loop, in the lead's order)."""
        team = self.runtime.team
        if team is None or self._active == (team, active):
            return
        self._active = (team, active)

        def failed(exc: Exception) -> None:
            if not self.runtime.home.layout.config_path(team).parent.is_dir():
                return  # the team was deleted meanwhile (TeamDelete): nothing to update
            log.warning("could not update the lead's isActive in the config: %s", exc)
            if self._active == (team, active):
                self._active = None  # written again on the next change

        # Written with the team's other member changes (app.core.member_states).
        self.runtime.home.teams.states.set(team, LEAD_NAME, is_active=active, on_error=failed)

    async def _next_prompt(self) -> str | None:
        delivered = await self.drain()
        if self.prompts:
            parts = [self.prompts.popleft(), *delivered]
            return "\n\n".join(parts)
        if delivered:
            return "\n\n".join(delivered)
        return None

    async def drain(self) -> list[str]:
        """Read the lead's unread mail: returns the texts to show the model (empty if nothing
        needs it); idle notifications are coalesced into one line alongside real messages."""
        team = self.runtime.team
        if not team:
            return []
        if self.session.status == "running":  # e.g. the first boundary after TeamCreate
            self._mark_active(True)
        box = self.runtime.home.mailbox(team)
        try:  # the inbox (a lock shared with every writer): off the loop, in the lead's order
            unread = await self.session.io.run(_take_unread, box)
        except CorruptFileError as exc:
            self.session.set_error(str(exc))
            return []
        except TeamdeckError as exc:
            log.warning("cannot read the lead's inbox: %s", exc)
            return []
        if not unread:
            return []
        wake: list[str] = []
        for _, message in unread:
            frame = None if message.plain_text else parse_frame(message.text)
            self.runtime.observe_lead_frame(message, frame)
            wrapped = wrap_teammate_message(
                message.sender,
                message.text,
                message.color,
                message.summary,
                plain=bool(message.plain_text),
            )
            if isinstance(frame, IdleNotification) and frame.failure_reason:
                wake.append(wrapped)  # a failed turn needs the lead: its task is stuck
            elif isinstance(frame, IdleNotification):
                self.idle_notes[frame.sender] = frame.summary or frame.idle_reason or "idle"
            elif isinstance(frame, TaskCompleted):
                self.notes.append(f"{frame.sender} completed task #{frame.task_id}")
            elif isinstance(frame, PlanApprovalRequest | PermissionRequest):
                if self.runtime.decider == "lead":
                    wake.append(wrapped)
                else:
                    what = (
                        "plan" if isinstance(frame, PlanApprovalRequest) else "permission request"
                    )
                    self.notes.append(
                        f"{message.sender}'s {what} awaits the person's review in the "
                        "dashboard; do not answer it."
                    )
            else:
                wake.append(wrapped)
        if not wake:
            return []
        extra: list[str] = []
        if self.idle_notes:
            idle = ", ".join(f"{n} ({s})" for n, s in sorted(self.idle_notes.items()))
            extra.append(f"[idle teammates: {idle}]")
            self.idle_notes.clear()
        if self.notes:
            extra.append("[notes: " + "; ".join(self.notes) + "]")
            self.notes.clear()
        return wake + extra


def _take_unread(box: Mailbox) -> list[tuple[int, InboxMessage]]:
    """The lead's unread messages, marked read."""
    unread = box.unread(LEAD_NAME)
    if unread:
        box.mark_read(LEAD_NAME, [i for i, _ in unread], durable=False)
    return unread

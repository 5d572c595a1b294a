"""TeamChannel: what one agent says to its team, through the files only.

Every message an agent sends, every request it makes (plan approval, permission), every
answer it gives (shutdown) and its leaving (tasks unassigned, membership removed, the lead
told) is a write to the team's inboxes, tasks or config. Nothing here knows which process the
agent runs in: an in-process teammate, a ``teamdeck agent`` process and the lead's runtime all
use the same channel, exactly as a Claude Code teammate in another terminal would.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core import authority
from app.core.errors import TeamdeckError
from app.core.inbox_limits import check_size
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME
from app.core.protocol import (
    Frame,
    idle_notification,
    make_request_id,
    parse_frame,
    permission_request,
    plan_approval_request,
    shutdown_approved,
    shutdown_rejected,
    shutdown_request,
)
from app.runtime.events import MessageSent
from app.runtime.scheduling.offload import on_loop

if TYPE_CHECKING:
    from app.core import Home

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Sent:
    """A message this channel wrote: to whom, and the inbox entry (with its parsed frame)."""

    team: str
    recipient: str
    message: InboxMessage
    frame: Frame | None = None


def sent_event(sent: Sent) -> MessageSent:
    """The runtime event for a message a channel wrote (its frame already parsed)."""
    message = sent.message
    return MessageSent(
        sent.team,
        message.sender,
        sent.recipient,
        message.text,
        message.summary,
        _frame_type(sent),
        message.timestamp,
        message.answered_by,
        bool(message.plain_text),
    )


def _frame_type(sent: Sent) -> str | None:
    """The type of the frame a message carries: ``None`` for text, an agent's text that
    imitates a frame included; the runtime's own notes (``task_completed``) are frames."""
    if sent.frame is not None:
        return sent.frame.type
    if sent.message.plain_text or sent.message.text[:1] != "{":
        return None
    frame = parse_frame(sent.message.text)
    return frame.type if frame is not None else None


class TeamChannel:
    """File-protocol operations of agent ``name`` in ``team``.

    ``on_sent`` is told about every message written (the runtime turns it into a
    ``MessageSent`` event without parsing the frame again). ``key``: the team's key (set by
    whoever holds it: the runtime, a teammate process from its handoff); every frame this
    channel writes is signed with it (``app.core.authority``), message text never is."""

    def __init__(
        self,
        home: Home,
        team: str,
        name: str,
        color: str | None,
        *,
        backend: str = "in-process",
        on_sent: object = None,
        key: authority.TeamKey | None = None,
    ) -> None:
        self.home = home
        self.key = key
        self.team = team
        self.name = name
        self.color = color
        self.backend = backend
        self._on_sent = on_sent

    @property
    def agent_id(self) -> str:
        return f"{self.name}@{self.team}"

    # ------------------------------------------------------------------ messages

    def deliver(
        self,
        recipient: str,
        text: str,
        summary: str | None = None,
        *,
        frame: Frame | None = None,
        resolve: bool = True,
        answered_by: str | None = None,
    ) -> str:
        """Append a message to ``recipient``'s inbox; returns the member name it went to.

        ``resolve``: check the recipient is a member (UnknownRecipientError otherwise)."""
        box = self.home.mailbox(self.team)
        name = box.resolve_recipient(recipient) if resolve else recipient
        if name == self.name:
            raise TeamdeckError("you cannot send a message to yourself")
        message = InboxMessage(sender=self.name, text=text, summary=summary, color=self.color)
        if answered_by:
            message.answered_by = answered_by
        if frame is None and text[:1] == "{" and parse_frame(text) is not None:
            message.plain_text = True  # an agent's text that imitates a frame: text it stays
        check_size(box.path(name), message)
        box.append(name, message)
        self._sent(Sent(self.team, name, message, frame))
        return name

    def send_frame(
        self,
        recipient: str,
        frame: Frame,
        *,
        answered_by: str | None = None,
        origin: str = authority.RUNTIME,
    ) -> str:
        """``answered_by``: who decided the answer ``frame`` carries, when not this agent
        (``InboxMessage.answered_by``); ``origin``: who it is signed as (``app.core.authority``)."""
        text = authority.sign_text(self.key, frame.to_text(), to=recipient, origin=origin)
        return self.deliver(recipient, text, frame=frame, resolve=False, answered_by=answered_by)

    def broadcast(self, text: str, summary: str | None) -> list[str]:
        config = self.home.teams.require(self.team)
        recipients = [m.name for m in config.members if m.name.lower() != self.name.lower()]
        for recipient in recipients:
            self.deliver(recipient, text, summary, resolve=False)
        return recipients

    def _sent(self, sent: Sent) -> None:
        if callable(self._on_sent):  # a write made off the loop tells the runtime on the loop
            on_loop(self._on_sent, sent)

    # ------------------------------------------------------------------ requests

    def request_plan_approval(self, plan: str) -> str:
        """Write the plan (``plans/{name}.md``) and ask the lead to approve it; returns the id."""
        request_id = make_request_id("plan_approval", self.name)
        plan_path = self.home.layout.team_dir(self.team) / "plans" / f"{self.name}.md"
        try:
            plan_path.parent.mkdir(mode=0o700, exist_ok=True)
            plan_path.write_text(plan, "utf-8")
            path_text = str(plan_path)
        except OSError as exc:  # the plan still travels in the frame
            log.warning("could not keep %s's plan in %s: %s", self.name, plan_path, exc)
            path_text = ""
        frame = plan_approval_request(request_id, self.name, plan, path_text)
        self.send_frame(LEAD_NAME, frame)
        return request_id

    def request_permission(
        self,
        tool_name: str,
        tool_use_id: str,
        description: str,
        tool_input: dict[str, object],
        suggestion: str | None,
    ) -> str:
        request_id = make_request_id("permission", self.name)
        frame = permission_request(
            request_id,
            self.agent_id,
            tool_name,
            tool_use_id,
            description,
            tool_input,
            [suggestion] if suggestion else [],
        )
        self.send_frame(LEAD_NAME, frame)
        return request_id

    def request_shutdown(
        self, recipient: str, reason: str | None, *, origin: str | None = None
    ) -> tuple[str, str]:
        """Ask ``recipient`` to shut down; returns (its member name, the request id).
        ``origin``: who asks (the person; by default the lead, or a teammate's runtime)."""
        if origin is None:
            origin = authority.LEAD if self.name == LEAD_NAME else authority.RUNTIME
        name = self.home.mailbox(self.team).resolve_recipient(recipient)
        if name in (LEAD_NAME, "user") or name == self.name:
            raise TeamdeckError(f"{name} cannot be asked to shut down")
        request_id = make_request_id("shutdown", name)
        self.send_frame(name, shutdown_request(request_id, self.name, reason), origin=origin)
        return name, request_id

    # ------------------------------------------------------------------ answers

    def answer_shutdown(self, requester: str, request_id: str, approve: bool, reason: str) -> None:
        """Tell ``requester`` this agent's answer to its shutdown request."""
        frame: Frame
        if approve:
            frame = shutdown_approved(request_id, self.name, self.backend, self.backend)
        else:
            frame = shutdown_rejected(request_id, self.name, reason or "no reason given")
        self.send_frame(requester, frame)

    def idle(
        self,
        *,
        reason: str,
        summary: str | None,
        completed_task_id: str | None = None,
        failure: str | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        """Tell the lead this agent is idle; ``notes`` (its turn's task_completed messages,
        each in Claude Code's shape) go first, in the same write of the lead's inbox."""
        frame = idle_notification(
            self.name,
            idle_reason=reason,
            summary=summary,
            completed_task_id=completed_task_id,
            completed_status="success" if completed_task_id else None,
            failure_reason=failure,
        )
        if not notes:
            self.send_frame(LEAD_NAME, frame)
            return
        sent = [Sent(self.team, LEAD_NAME, self._message(text), None) for text in notes]
        sent.append(Sent(self.team, LEAD_NAME, self._message(frame.to_text()), frame))
        self._write_all(LEAD_NAME, sent)

    def notes_to_lead(self, notes: Sequence[str]) -> None:
        """The turn's held notes, in one write (when it leaves without going idle)."""
        if notes:
            self._write_all(
                LEAD_NAME, [Sent(self.team, LEAD_NAME, self._message(t)) for t in notes]
            )

    def _message(self, text: str) -> InboxMessage:
        return InboxMessage(sender=self.name, text=text, color=self.color)

    def _write_all(self, recipient: str, sent: list[Sent]) -> None:
        box = self.home.mailbox(self.team)
        for each in sent:
            check_size(box.path(recipient), each.message)
        box.append(recipient, sent[0].message, more=[s.message for s in sent[1:]])
        for each in sent:
            self._sent(each)

    # ------------------------------------------------------------------ leaving

    def leave(self, reason: str, *, headline: str = "", tell_lead: bool = True) -> str:
        """Leave the team: membership removed, unfinished tasks back to pending, the lead told
        which tasks came back (``headline`` goes first, e.g. why it failed). Returns the
        message for the lead. Each step is attempted even
        if an earlier one fails; failures are logged with their reason."""
        message = f"{self.name} has shut down." if reason == "shutdown" else ""
        # Membership first: an assignment racing this either sees it gone (and is refused or
        # undone, see TaskUpdate) or lands before the tasks are returned just below.
        try:
            self.home.teams.remove_member(self.team, name=self.name)
        except (TeamdeckError, OSError) as exc:
            log.warning("%s: could not leave the team config: %s", self.name, exc)
        try:
            result = self.home.tasks(self.team).unassign(self.name, self.agent_id, reason)
            message = result.notification_message
            returned = bool(result.unassigned_tasks)
        except (TeamdeckError, OSError) as exc:
            log.warning("%s: could not return its tasks to the board: %s", self.name, exc)
            message = message or f"{self.name} left; its tasks could not be returned: {exc}"
            returned = True
        if headline:
            message = f"{headline} {message}"
        if tell_lead and (returned or reason != "shutdown" or headline):
            try:
                self.deliver(LEAD_NAME, message, f"{self.name} left the team", resolve=False)
            except (TeamdeckError, OSError) as exc:
                log.warning("%s: could not tell the lead it left: %s", self.name, exc)
        return message

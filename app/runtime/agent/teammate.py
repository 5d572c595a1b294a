"""The teammate main loop (seed 002), event-driven instead of polling every 500 ms.

work a turn -> go idle (one idle_notification per idle transition) -> wait for the next prompt,
ONE message per turn, in seed 002's order: a message typed by the person, then a shutdown
request, then the lead's oldest unread message, then anyone's oldest unread message, then the
lowest-id unblocked unowned pending task (claimed with the busy check). Before going idle its
``TeammateIdle`` hooks run: one that blocks keeps it working, its feedback the next prompt.

A teammate speaks to its team only through the files
(:class:`~app.runtime.agent.channel.TeamChannel`):
plan and permission requests go to the lead's inbox and are answered in its own, so the same
loop runs in the dashboard's process or in a ``teamdeck agent`` process. What it shows (status,
transcript, usage) leaves through its session's events.

Status, by seed 001 §12's UI status strings (``shutdownRequested ? "stopping" :
awaitingPlanApproval ? "awaiting approval" : isIdle ? "idle" : progress ?? "running"``):
stopping (a shutdown request is unanswered, or waits unread while a permission answer is awaited)
> awaiting approval (a plan or permission request is unanswered) > idle > running. The seed's
``progress`` (a free-text activity in place of "running") is not a status here: the panel shows
the last activity on a line of its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.core.errors import CorruptFileError, TeamdeckError
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME, USER_NAME
from app.core.protocol import (
    PermissionResponse,
    PlanApprovalResponse,
    ShutdownRequest,
    wrap_teammate_message,
)
from app.runtime.agent.loop import run_turn
from app.runtime.agent.permission_flow import ask_lead_by_inbox
from app.runtime.agent.team_hooks import idle_feedback
from app.runtime.agent.teammate_answers import TeammateAnswers
from app.runtime.agent.teammate_services import TeammateServices
from app.runtime.agent.wakeup import Wakeup
from app.runtime.events import AgentStatus, TurnOutcome

if TYPE_CHECKING:
    from app.runtime.agent.channel import TeamChannel
    from app.runtime.agent.session import AgentSession
    from app.runtime.tools.base import Tool

log = logging.getLogger(__name__)
Prompt = str | list[dict[str, Any]]
#: A safety net only: every wake-up is event-driven; this bounds the cost of a missed event.
FALLBACK_POLL = 5.0
#: How long a teammate stays idle before ``isActive: false`` is written (see ``_set_active``).
IDLE_WRITE_DELAY = 0.25


class Teammate:
    """One teammate: its session (conversation, events), its channel (the files) and its loop.

    Args:
        session: the agent's session; its ``services`` and ``ask_permission`` are set here.
        channel: the agent's channel to its team.
        prompt: the first prompt (from the lead's Task call).
        permission_timeout: how long a permission request waits for an answer.
        on_exit: called once when the loop has ended and the teammate has left the team.
        on_request_dropped: told when a permission request stops being waited for.
        bypass_allowed: whether the person allowed bypassPermissions (``teammate_answers``:
            which messages act, and the answers an in-process teammate is handed).
    """

    def __init__(
        self,
        session: AgentSession,
        channel: TeamChannel,
        prompt: str,
        *,
        permission_timeout: float = 300.0,
        on_exit: Callable[[Teammate], None] | None = None,
        on_request_dropped: Callable[[str, str], None] | None = None,
        bypass_allowed: Callable[[], bool] = lambda: False,
    ) -> None:
        self.session = session
        self.channel = channel
        self.initial_prompt = prompt
        self.permission_timeout = permission_timeout
        self.on_exit = on_exit
        self.on_request_dropped = on_request_dropped
        self.pending_user: deque[str] = deque()
        #: The turn's task_completed messages for the lead, sent with its idle notification.
        self.lead_notes: list[str] = []
        self.wake = Wakeup()
        self.handle: object | None = None
        self.finished = False
        #: An unanswered shutdown request to this teammate: (request id, requester).
        self.shutdown_request: tuple[str, str] | None = None
        #: A shutdown request sits unread in the inbox while a permission answer is awaited
        #: (it is read, and answered, once the turn ends: seed 002 handles it between turns).
        self.shutdown_seen = False
        self.awaiting_permission: str | None = None
        self.answers = TeammateAnswers(channel, session, self.wake, bypass_allowed)
        self.idle = False
        self._active: bool | None = None  # the isActive last written
        self._want_active = False
        self._idle_write: asyncio.TimerHandle | None = None
        self._marks: list[tuple[int, bool]] = []  # inbox messages read, to be marked
        session.services = TeammateServices(self)
        session.ask_permission = self._ask_permission

    @property
    def name(self) -> str:
        return self.session.name

    @property
    def team(self) -> str:
        return self.channel.team

    @property
    def home(self) -> Any:
        return self.channel.home

    # ------------------------------------------------------------------ main loop

    async def run(self) -> None:
        self.wake.bind(asyncio.get_running_loop())
        try:
            await self._main()
        except asyncio.CancelledError:
            if not self.finished:
                self.exit("killed", reason="terminated")
            raise
        except Exception as exc:  # a crash: mark failed, unassign, tell the lead
            log.exception("teammate %s crashed", self.name)
            self.exit("failed", reason="terminated", error=f"{type(exc).__name__}: {exc}")
            return
        self.exit("completed", reason="shutdown")

    async def _main(self) -> None:
        prompt: Prompt | None = wrap_teammate_message(LEAD_NAME, self.initial_prompt)
        blocked = 0  # TeammateIdle blocks in a row
        while prompt is not None:
            self.idle = False
            self.show()
            outcome = await run_turn(self.session, prompt)
            if self.session.shutdown_approved:
                return
            prompt = await idle_feedback(self.session, outcome, blocked)
            blocked = blocked + 1 if prompt is not None else 0
            if prompt is None:
                await self._go_idle(outcome)
                prompt = await self.next_prompt()

    def show(self, detail: str = "") -> None:
        """Set the status the flags call for (the seeds' UI priority) and ``isActive``."""
        if self.finished:
            return
        status: AgentStatus
        if self.shutdown_request is not None or self.shutdown_seen:
            status = "stopping"
        elif self.session.pending_plan_request is not None or self.awaiting_permission:
            status = "awaiting approval"
            detail = detail or self.awaiting_permission or "plan"
        elif self.idle:
            status = "idle"
        else:
            status = "running"
        self.session.set_status(status, detail)
        self._set_active(status != "idle")

    def _set_active(self, active: bool) -> None:
        """Keep ``isActive`` in the config current, as Claude Code does (written on change).

        Going idle is written ``IDLE_WRITE_DELAY`` later, and not at all if the teammate is
        active again by then: one that takes its next task straight away (a claim between
        turns) stays active on disk, which spares two config rewrites per task -- and every
        watcher's re-read of the config -- while a team works through its list."""
        self._want_active = active
        if self._idle_write is not None:
            self._idle_write.cancel()
            self._idle_write = None
        if active:
            self._write_active()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on a loop (a test driving it directly): write at once
            self._write_active()
            return
        self._idle_write = loop.call_later(IDLE_WRITE_DELAY, self._write_active)

    def _write_active(self) -> None:
        self._idle_write = None
        active = self._want_active
        if active == self._active or self.finished:
            return
        self._active = active

        def failed(exc: Exception) -> None:
            log.warning("%s: could not update isActive in the config: %s", self.name, exc)

        # Written with the team's other member changes (app.core.member_states): a config
        # rewrite per batch, off the loop.
        self.home.teams.states.set(self.team, self.name, is_active=active, on_error=failed)

    async def _go_idle(self, outcome: TurnOutcome) -> None:
        """Tell the lead (an inbox append, off the loop), then show idle: whoever sees the
        teammate idle finds its idle notification in the lead's inbox."""
        session = self.session
        reason = {"interrupted": "interrupted", "error": "failed"}.get(outcome.status)
        if reason is None:
            waiting = session.pending_plan_request is not None
            reason = "awaiting plan approval" if waiting else "available"
        completed = session.completed_this_turn[-1] if session.completed_this_turn else None
        last_text = outcome.text.rsplit("\n", 1)[-1] if outcome.text else ""
        summary = _summarize(last_text) or (outcome.error or None)
        peer_dm = session.take_peer_dm()
        if peer_dm:
            summary = f"{summary or ''} {peer_dm}".strip()
        notes, self.lead_notes = self.lead_notes, []
        try:
            await session.io.run(
                self.channel.idle,
                reason=reason,
                summary=summary,
                completed_task_id=completed,
                failure=outcome.error,
                notes=notes,
            )
        except (TeamdeckError, OSError) as exc:
            session.record("error", f"could not tell the lead it is idle: {exc}")
        self.idle = True
        if outcome.status == "error" and outcome.error:
            # The turn failed (e.g. the model-call cap, an API error): its panel says why.
            session.set_error(outcome.error)
            self.show(f"turn failed: {outcome.error}")
        else:
            self.show()

    def exit(
        self, status: AgentStatus, *, reason: str, error: str | None = None, note: str = ""
    ) -> None:
        """Leave the team (once): tasks back to the board, membership removed, lead told
        (``note`` first, when it says why)."""
        if self.finished:
            return
        self.finished = True
        if self._idle_write is not None:  # it leaves the team: no isActive to write
            self._idle_write.cancel()
            self._idle_write = None
        session = self.session
        if error:
            session.set_error(error)
            session.record("error", error)
        headline = f'Teammate "{self.name}" failed: {error}.' if error else note
        session.io.flush()  # its queued writes land before it leaves
        notes, self.lead_notes = self.lead_notes, []
        try:  # the turn's task_completed notes, had it not gone idle since
            self.channel.notes_to_lead(notes)
        except (TeamdeckError, OSError) as exc:
            log.warning("%s: could not tell the lead of its completed tasks: %s", self.name, exc)
        self.channel.leave(reason, headline=headline)
        if status == "completed" and self.shutdown_request is not None:
            request_id, requester = self.shutdown_request  # answered once it has left
            self._answer(requester, request_id, True, "")
        session.set_status(status, error or "")
        if self.on_exit is not None:
            self.on_exit(self)

    # ------------------------------------------------------------------ waiting

    async def next_prompt(self) -> Prompt | None:
        """Wait for the next thing to work on; ``None`` when the loop should end."""
        while True:
            self.wake.clear()
            if self.session.shutdown_approved:
                return None
            prompt = await self._poll()
            if prompt is not None:
                return prompt
            await self.wake.wait(FALLBACK_POLL)

    def inject(self, text: str) -> None:
        """A message from the person: handled before any mail (seed 002)."""
        self.pending_user.append(text)
        self.wake.set()

    async def _poll(self) -> Prompt | None:
        if self.pending_user:
            # Already in the transcript (recorded when the person sent it): passed as blocks,
            # which the turn does not record a second time.
            text = self.pending_user.popleft()
            self.session.set_activity("message from the person")
            return [{"type": "text", "text": text}]
        box = self.home.mailbox(self.team)
        try:
            unread = await self.session.io.run(box.unread, self.name)  # off the loop
        except CorruptFileError as exc:
            self.session.set_error(str(exc))
            return None
        except TeamdeckError as exc:
            log.warning("%s: cannot read its inbox: %s", self.name, exc)
            return None
        prompt = self._from_person(unread)
        if prompt is None:
            prompt = self._from_inbox(unread)
        if self._marks:  # read before the turn starts, as when they were written here
            await self.session.io.run(self._write_marks)
        if prompt is not None:
            return prompt
        if self.session.pending_plan_request is None and self.shutdown_request is None:
            return await self.session.io.run(self._claim_task)  # a scan of every task file
        return None

    def _mark_read(self, index: int, *, durable: bool) -> None:
        """Mark an inbox message read: held until ``_poll`` writes the marks in the lane."""
        self._marks.append((index, durable))

    def _write_marks(self) -> None:
        """The marks of one look at the inbox, in the lane (each an inbox rewrite under its
        lock, which with in-process teammates was the dashboard's loop's to wait for)."""
        marks, self._marks = self._marks, []
        box = self.home.mailbox(self.team)
        for index, durable in marks:
            box.mark_read(self.name, index, durable=durable)

    def _from_person(self, unread: list[tuple[int, InboxMessage]]) -> Prompt | None:
        """The person's message through the inbox (how a dashboard reaches a teammate in
        another process): handled before any other mail, like ``inject`` (seed 002)."""
        for index, message in unread:
            if message.sender == USER_NAME and self.answers.acting(message)[0] is None:
                self._mark_read(index, durable=False)
                self.session.record("user", message.text, source="person")
                self.session.set_activity("message from the person")
                return [{"type": "text", "text": message.text}]
        return None

    def _from_inbox(self, unread: list[tuple[int, InboxMessage]]) -> Prompt | None:
        """Seed 002 §"Message Polling" step 2, one message per turn: 2a, a shutdown request
        anywhere in the unread inbox; 2b, the lead's oldest unread message, else anyone's.
        Answers to this teammate's own requests are read in the same 2b order; one that
        answers nothing pending (stale, or a duplicate) is marked read and the next is taken."""
        frames = [(index, message, *self.answers.acting(message)) for index, message in unread]
        for index, message, frame, _ in frames:  # 2a
            if isinstance(frame, ShutdownRequest):
                self._mark_read(index, durable=False)
                return self._on_shutdown_request(frame, message)
        self.shutdown_seen = False
        if (handed := self.answers.take_plan()) is not None:
            return self._on_plan_response(*handed)
        ordered = [f for f in frames if f[1].sender == LEAD_NAME]  # 2b
        ordered += [f for f in frames if f[1].sender != LEAD_NAME]
        for index, message, frame, origin in ordered:
            if isinstance(frame, PermissionResponse):
                self._mark_read(index, durable=True)  # stale: its waiter has given up
                continue
            self._mark_read(index, durable=False)
            if isinstance(frame, PlanApprovalResponse):
                if self.answers.direct is not None:
                    continue  # the record of an answer the runtime hands over itself
                prompt = self._on_plan_response(frame, origin)
                if prompt is None:
                    continue
                return prompt
            if message.sender == USER_NAME:
                return message.text
            return wrap_teammate_message(
                message.sender,
                message.text,
                message.color,
                message.summary,
                plain=bool(message.plain_text),
            )
        return None

    def _on_shutdown_request(self, frame: ShutdownRequest, message: InboxMessage) -> str:
        self.shutdown_request = (frame.request_id, frame.sender or message.sender)
        self.shutdown_seen = False
        self.show(frame.reason or "")
        return wrap_teammate_message(message.sender, message.text, message.color, message.summary)

    def _on_plan_response(self, frame: PlanApprovalResponse, origin: str) -> str | None:
        session = self.session
        if frame.request_id != session.pending_plan_request:
            return None  # an answer to an older request, or a duplicate: already resolved
        session.pending_plan_request = None
        if frame.approved:
            self.set_mode(self.answers.approved_mode(frame.permission_mode, origin))
            return (
                "Your plan was approved by the team lead. You are out of plan mode: carry out "
                "the plan now."
            )
        feedback = frame.feedback or "no feedback given"
        return (
            f"Your plan was rejected by the team lead. Feedback: {feedback}\n"
            "Revise the plan and submit it again with ExitPlanMode."
        )

    def set_mode(self, mode: str) -> None:
        """Change the permission mode (shown in the panel, written to the config)."""
        self.session.set_mode(mode)
        try:
            self.home.teams.update_member(self.team, self.name, mode=mode)
        except (TeamdeckError, OSError) as exc:
            self.session.record("notice", f"mode {mode} not written to the team config: {exc}")

    def _claim_task(self) -> str | None:
        tasks = self.home.tasks(self.team)
        try:
            result = tasks.claim_next(self.name, status="in_progress")
        except TeamdeckError as exc:  # unreadable list, a lock timeout: the next wake retries
            log.warning("%s: cannot claim from the task list: %s", self.name, exc)
            return None
        if result is None or not result.success or result.task is None:
            return None
        task = result.task
        return (
            f"You claimed task #{task.id} from the task list: {task.subject}\n\n"
            f"{task.description}\n\nWork on it, mark it completed with TaskUpdate, and "
            "report to team-lead with SendMessage."
        )

    # ------------------------------------------------------------------ requests

    async def _ask_permission(
        self, session: AgentSession, tool: Tool, tool_input: dict[str, Any], tool_use_id: str
    ) -> tuple[bool, str]:
        self.awaiting_permission = tool.describe(tool_input)
        self.show()
        try:
            return await ask_lead_by_inbox(
                self.channel, self.wake, session, tool, tool_input, tool_use_id,
                self.permission_timeout, self.on_request_dropped, peek=self._peek,
                acting=self.answers.acting,
                take=self.answers.take_permission if self.answers.direct is not None else None,
            )  # fmt: skip
        finally:
            self.awaiting_permission = None
            self.answers.awaited = None
            self.show()

    def _peek(self, unread: list[tuple[int, InboxMessage]]) -> None:
        """While a permission answer is awaited, the rest of the inbox stays unread; a shutdown
        request among it still shows as "stopping" at once (seed 001 §12: stopping outranks
        awaiting approval)."""
        seen = any(isinstance(self.answers.acting(m)[0], ShutdownRequest) for _, m in unread)
        if seen != self.shutdown_seen:
            self.shutdown_seen = seen
            self.show()

    def answer_shutdown(self, request_id: str, approve: bool, reason: str | None) -> str:
        """The model's SendMessage shutdown_response."""
        pending = self.shutdown_request
        if pending is None or pending[0] != request_id:
            known = f" (pending: {pending[0]})" if pending else ""
            return f"no pending shutdown request {request_id!r} addressed to you{known}"
        if approve:
            self.session.shutdown_approved = True  # the loop ends after this turn
            self.wake.set()
            return f"Shutdown approved. Agent {self.name} is now exiting."
        self.shutdown_request = None
        self._answer(pending[1], request_id, False, reason or "")
        self.show()
        return f"Shutdown rejected by {self.name}: {reason}"

    def _answer(self, requester: str, request_id: str, approve: bool, reason: str) -> None:
        try:
            self.channel.answer_shutdown(requester, request_id, approve, reason)
        except (TeamdeckError, OSError) as exc:
            self.session.record("error", f"could not answer the shutdown request: {exc}")


def _summarize(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"

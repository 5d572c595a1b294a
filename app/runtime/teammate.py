"""The teammate main loop (seed 002), event-driven instead of polling every 500 ms.

work a turn -> go idle (one idle_notification per idle transition) -> wait for the next prompt:
messages typed by the person first, then shutdown requests, then the lead's messages, then
anyone's, then the lowest-id unblocked unowned pending task (claimed with the busy check).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING

from app.core.errors import CorruptFileError, TeamdeckError
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME, USER_NAME
from app.core.protocol import (
    PermissionResponse,
    PlanApprovalResponse,
    ShutdownRequest,
    parse_frame,
    wrap_teammate_message,
)
from app.runtime.events import AgentStatus
from app.runtime.loop import TurnOutcome, run_turn
from app.runtime.session import AgentSession
from app.runtime.signals import Wakeup

if TYPE_CHECKING:
    from app.runtime.team import TeamRuntime

#: A safety net only: every wake-up is event-driven; this bounds the cost of a missed event.
FALLBACK_POLL = 5.0


class Teammate:
    def __init__(self, runtime: TeamRuntime, session: AgentSession, prompt: str) -> None:
        self.runtime = runtime
        self.session = session
        self.initial_prompt = prompt
        self.pending_user: deque[str] = deque()
        self.wake = Wakeup()
        self.handle: object | None = None
        self.finished = False
        #: Shutdown approved (by the model or the person on its behalf): request id to answer.
        self.shutdown_request_id: str | None = None

    @property
    def name(self) -> str:
        return self.session.name

    @property
    def team(self) -> str:
        assert self.session.identity.team
        return self.session.identity.team

    # ------------------------------------------------------------------ main loop

    async def run(self) -> None:
        self.wake.bind(asyncio.get_running_loop())
        try:
            await self._main()
        except asyncio.CancelledError:
            if not self.finished:
                self.runtime.teammate_killed(self)
            raise
        except Exception as exc:  # a crash: mark failed, unassign, tell the lead
            self.runtime.teammate_failed(self, f"{type(exc).__name__}: {exc}")
            return
        self.runtime.teammate_finished(self)

    async def _main(self) -> None:
        prompt: str | None = wrap_teammate_message(LEAD_NAME, self.initial_prompt)
        while prompt is not None:
            if not self.session.shutdown_approved:
                self.session.set_status("stopping" if self._stopping() else "running")
            outcome = await run_turn(self.session, prompt)
            if self.session.shutdown_approved:
                return
            self._go_idle(outcome)
            prompt = await self.next_prompt()

    def _stopping(self) -> bool:
        return bool(self.runtime.queue.pending_for(self.name, "shutdown"))

    def _go_idle(self, outcome: TurnOutcome) -> None:
        session = self.session
        waiting_plan = session.pending_plan_request is not None
        # A shutdown request still unanswered keeps the teammate "stopping" between turns.
        resting: AgentStatus = "stopping" if self._stopping() else "idle"
        session.set_status("awaiting approval" if waiting_plan else resting)
        reason = {
            "interrupted": "interrupted",
            "error": "failed",
        }.get(outcome.status, "awaiting plan approval" if waiting_plan else "available")
        completed = session.completed_this_turn[-1] if session.completed_this_turn else None
        last_text = outcome.text.rsplit("\n", 1)[-1] if outcome.text else ""
        summary = _summarize(last_text) or (outcome.error or None)
        self.runtime.send_idle_notification(
            self,
            idle_reason=reason,
            summary=summary,
            completed_task_id=completed,
            completed_status="success" if completed else None,
            failure_reason=outcome.error,
        )

    # ------------------------------------------------------------------ waiting

    async def next_prompt(self) -> str | None:
        """Wait for the next thing to work on; ``None`` when the loop should end."""
        while True:
            self.wake.clear()
            if self.session.shutdown_approved:
                return None
            prompt = self._poll()
            if prompt is not None:
                return prompt
            await self.wake.wait(FALLBACK_POLL)

    def inject(self, text: str) -> None:
        self.pending_user.append(text)
        self.wake.set()

    def _poll(self) -> str | None:
        if self.pending_user:
            text = self.pending_user.popleft()
            self.session.snapshot.last_activity = "message from the person"
            return text
        try:
            unread = self.runtime.home.mailbox(self.team).unread(self.name)
        except CorruptFileError as exc:
            self.session.snapshot.error = str(exc)
            return None
        except TeamdeckError:
            return None
        prompt = self._from_inbox(unread)
        if prompt is not None:
            return prompt
        if self.session.pending_plan_request is None and not self._stopping():
            return self._claim_task()
        return None

    def _from_inbox(self, unread: list[tuple[int, InboxMessage]]) -> str | None:
        box = self.runtime.home.mailbox(self.team)
        plain: list[tuple[int, InboxMessage]] = []
        for index, message in unread:
            frame = parse_frame(message.text)
            if isinstance(frame, ShutdownRequest):
                box.mark_read(self.name, index, durable=False)
                return self._on_shutdown_request(frame, message)
            if isinstance(frame, PlanApprovalResponse):
                box.mark_read(self.name, index, durable=False)
                prompt = self._on_plan_response(frame)
                if prompt is not None:
                    return prompt
                continue
            if isinstance(frame, PermissionResponse):
                box.mark_read(self.name, index)  # stale: its waiter has given up
                continue
            plain.append((index, message))
        if not plain:
            return None
        lead = [(i, m) for i, m in plain if m.sender == LEAD_NAME]
        user = [(i, m) for i, m in plain if m.sender == USER_NAME]
        chosen = user or lead or plain
        box.mark_read(self.name, [i for i, _ in chosen], durable=False)
        return "\n\n".join(
            m.text
            if m.sender == USER_NAME
            else wrap_teammate_message(m.sender, m.text, m.color, m.summary)
            for _, m in chosen
        )

    def _on_shutdown_request(self, frame: ShutdownRequest, message: InboxMessage) -> str | None:
        self.runtime.register_shutdown(self.name, frame)
        self.session.set_status("stopping", frame.reason or "")
        if self.runtime.shutdown_decider == "person":
            return None  # the person approves or rejects on the teammate's behalf
        return wrap_teammate_message(message.sender, message.text, message.color, message.summary)

    def _on_plan_response(self, frame: PlanApprovalResponse) -> str | None:
        session = self.session
        if frame.request_id != session.pending_plan_request:
            return None  # an answer to an older request, or a duplicate: already resolved
        session.pending_plan_request = None
        if frame.approved:
            mode = frame.permission_mode or "default"
            self.runtime.set_teammate_mode(self, mode)
            return (
                "Your plan was approved by the team lead. You are out of plan mode: carry out "
                "the plan now."
            )
        feedback = frame.feedback or "no feedback given"
        return (
            f"Your plan was rejected by the team lead. Feedback: {feedback}\n"
            "Revise the plan and submit it again with ExitPlanMode."
        )

    def _claim_task(self) -> str | None:
        tasks = self.runtime.home.tasks(self.team)
        try:
            available = tasks.available()
        except TeamdeckError:
            return None
        for task in available:
            result = tasks.claim(task.id, self.name, check_busy=True, status="in_progress")
            if result.success:
                return (
                    f"You claimed task #{task.id} from the task list: {task.subject}\n\n"
                    f"{task.description}\n\nWork on it, mark it completed with TaskUpdate, and "
                    "report to team-lead with SendMessage."
                )
            if result.reason == "agent_busy":
                return None
        return None

    async def wait_for_permission(
        self, request_id: str, within: float
    ) -> PermissionResponse | None:
        """Wait for the lead's permission_response to ``request_id`` in this agent's inbox."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        box = self.runtime.home.mailbox(self.team)
        while True:
            self.wake.clear()
            try:
                unread = box.unread(self.name)
            except TeamdeckError:
                unread = []
            for index, message in unread:
                frame = parse_frame(message.text)
                if isinstance(frame, PermissionResponse) and frame.request_id == request_id:
                    box.mark_read(self.name, index, durable=False)
                    return frame
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            await self.wake.wait(min(remaining, FALLBACK_POLL))


def _summarize(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"

"""Approvals: the plan and permission requests a person (or the lead model) answers.

One function builds an :class:`~app.runtime.api.Approval` from a protocol frame
(:func:`approval_from_frame`), whoever reads it: the runtime scanning its lead's inbox, the
dashboard's file reader watching a team it does not run, the CLI's ``teamdeck approvals``.
:func:`answered_id` says which request a response frame closes.

:class:`Approvals` is the runtime's queue. Requests come from the files (a frame in the lead's
inbox) or, for the lead's own tool calls, from this process; answers come from the person
(dashboard keys) or the lead model (SendMessage). The first valid answer wins; every later one is
told "already resolved" and changes nothing. Shutdown requests are not approvals: the teammate
they are addressed to answers them itself.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime

from app.core.frame_text import agent_name, one_line
from app.core.protocol import (
    Frame,
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
)
from app.runtime.api import Answer, AnswerStatus, Approval
from app.runtime.events import ApprovalChanged, ApprovalKind, RuntimeEvent

TITLE_LIMIT = 80


def approval_from_frame(
    frame: Frame | None,
    *,
    sender: str,
    timestamp: str | None = None,
    suggestion: str | None = None,
) -> Approval | None:
    """The request ``frame`` opens (a plan or permission request), ``None`` for any other frame.

    ``sender``: the inbox message's ``from`` (used when the frame does not name its agent);
    ``timestamp``: the message's ISO time (the request's age; now when absent);
    ``suggestion``: the allow rule "always allow" adds, when the caller knows a better one than
    the frame's first permission suggestion."""
    created = _epoch(timestamp)
    if isinstance(frame, PlanApprovalRequest):
        who = agent_name(frame.sender or sender)
        return Approval(
            frame.request_id,
            "plan",
            who,
            f"{who}: plan approval",
            body=frame.plan_content,
            created_at=created,
        )
    if isinstance(frame, PermissionRequest):
        who = agent_name(frame.agent_id) if frame.agent_id else sender
        what = frame.description or frame.tool_name
        tool_input = frame.input if isinstance(frame.input, dict) else None
        rule = suggestion or _first_rule(frame.permission_suggestions)
        return Approval(
            frame.request_id,
            "permission",
            who,
            one_line(f"{who}: {what}", TITLE_LIMIT),
            body=permission_body(frame.input),
            tool_name=frame.tool_name,
            tool_input=tool_input,
            suggestion=rule,
            created_at=created,
        )
    return None


def answered_id(frame: Frame | None) -> str | None:
    """The id of the plan or permission request ``frame`` answers, else ``None``."""
    if isinstance(frame, PlanApprovalResponse | PermissionResponse):
        return frame.request_id
    return None


def permission_body(tool_input: object) -> str:
    return json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)


def _first_rule(suggestions: list[object]) -> str | None:
    """A suggestion usable as an allow rule: teamdeck writes rule strings (``Bash(git:*)``);
    Claude Code writes ``{"type": "addRules", "rules": [{"toolName", "ruleContent"}]}``."""
    for suggestion in suggestions:
        if isinstance(suggestion, str) and suggestion:
            return suggestion
        if isinstance(suggestion, dict):
            for rule in suggestion.get("rules") or []:
                if isinstance(rule, dict) and isinstance(rule.get("toolName"), str):
                    content = rule.get("ruleContent")
                    return f"{rule['toolName']}({content})" if content else rule["toolName"]
    return None


def _epoch(timestamp: str | None) -> float:
    if not timestamp:
        return datetime.now().timestamp()
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return datetime.now().timestamp()


class Approvals:
    def __init__(self, emit: Callable[[RuntimeEvent], None]) -> None:
        self._emit = emit
        self._items: dict[str, Approval] = {}
        self._lock = threading.Lock()

    def add(self, approval: Approval) -> bool:
        """Queue a request; False if that request id is already known (idempotent)."""
        with self._lock:
            if approval.request_id in self._items:
                return False
            self._items[approval.request_id] = approval
        self._emit(ApprovalChanged(approval.request_id, approval.kind, approval.agent, False))
        return True

    def get(self, request_id: str) -> Approval | None:
        return self._items.get(request_id)

    def claim(
        self, request_id: str, outcome: str, kind: ApprovalKind | None = None, by: str = ""
    ) -> Approval | Answer:
        """Mark a request answered (``by``: who answered, for the record); returns it, or the
        typed reason why it cannot be answered."""
        with self._lock:
            approval = self._items.get(request_id)
            if approval is None:
                text = f"unknown request id {request_id!r}"
                return Answer(AnswerStatus.UNKNOWN, text, request_id=request_id)
            if kind is not None and approval.kind != kind:
                text = f"{request_id} is a {approval.kind} request, not a {kind} request"
                return Answer(
                    AnswerStatus.WRONG_KIND,
                    text,
                    approval.agent,
                    request_id,
                    kind=approval.kind,
                )
            if approval.outcome is not None:
                return Answer(
                    AnswerStatus.ALREADY,
                    f"already resolved ({approval.outcome})",
                    approval.agent,
                    request_id,
                    previous=approval.outcome,
                )
            approval.outcome = outcome
        self._emit(ApprovalChanged(request_id, approval.kind, approval.agent, True, outcome, by))
        return approval

    def pending(self) -> list[Approval]:
        with self._lock:
            items = [a for a in self._items.values() if a.outcome is None]
        return sorted(items, key=lambda a: a.created_at)

    def pending_for(self, agent: str, kind: ApprovalKind | None = None) -> list[Approval]:
        return [a for a in self.pending() if a.agent == agent and (kind is None or a.kind == kind)]

    def drop_agent(self, agent: str, outcome: str) -> None:
        """Resolve an agent's pending requests when it leaves (killed, failed, shut down)."""
        for approval in self.pending_for(agent):
            self.claim(approval.request_id, outcome)

    def clear(self) -> None:
        """Forget every request (a new team starts)."""
        with self._lock:
            self._items.clear()

"""The approvals queue: plan, permission and shutdown requests, each answered exactly once.

Requests come from the files (a frame in the lead's inbox) or from this process; answers come
from the person (dashboard keys) or the lead model (SendMessage). The first valid answer wins;
every later one is told "already resolved" and changes nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from app.runtime.api import Approval
from app.runtime.events import ApprovalChanged, ApprovalKind, RuntimeEvent


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
        self, request_id: str, outcome: str, kind: ApprovalKind | None = None
    ) -> Approval | str:
        """Mark a request answered; returns it, or a one-line reason why it cannot be answered."""
        with self._lock:
            approval = self._items.get(request_id)
            if approval is None:
                return f"unknown request id {request_id!r}"
            if kind is not None and approval.kind != kind:
                return f"{request_id} is a {approval.kind} request, not a {kind} request"
            if approval.outcome is not None:
                return f"already resolved ({approval.outcome})"
            approval.outcome = outcome
        self._emit(ApprovalChanged(request_id, approval.kind, approval.agent, True, outcome))
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


def permission_body(tool_input: object) -> str:
    return json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)

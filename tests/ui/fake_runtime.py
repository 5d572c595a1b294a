"""A RuntimeAPI for UI tests: records every call, answers approvals once, emits events on demand."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.dashboard.team_source import RuntimeSource
from app.runtime.api import AgentSnapshot, Answer, AnswerStatus, Approval, Decider
from app.runtime.events import (
    AgentStatus,
    ApprovalChanged,
    ModeChanged,
    RuntimeEvent,
    StatusChanged,
    TeammateModeChanged,
    TextDelta,
    TranscriptEntry,
)

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z: every fixed time in the UI tests starts here


class FakeRuntime:
    """Implements ``RuntimeAPI``; ``calls`` lists ``(method, *args)`` in call order."""

    def __init__(
        self,
        team: str | None = "alpha",
        agents: list[AgentSnapshot] | None = None,
        approvals: list[Approval] | None = None,
        transcripts: dict[str, list[TranscriptEntry]] | None = None,
    ) -> None:
        self.team = team
        self.model_description = "offline model — set ANTHROPIC_API_KEY for Claude"
        self.sandbox_description = ""  # the header says nothing of it
        self.decider: Decider = "person"
        self.teammate_mode = "default"
        self.allow_bypass = False
        self.teammate_backend = "in-process"
        self.agents: list[AgentSnapshot] = agents or []
        self._approvals: dict[str, Approval] = {a.request_id: a for a in approvals or []}
        self.transcripts: dict[str, list[TranscriptEntry]] = transcripts or {}
        self.calls: list[tuple[Any, ...]] = []
        #: the words sent with each permission answer, by request id
        self.feedback: dict[str, str | None] = {}
        self.spawner: Any = None
        self.watcher: Any = None
        self._listeners: list[Callable[[RuntimeEvent], None]] = []
        self.started = False
        self.cwd: Path | None = None  # the project's folder (the app's diffs read it)

    def factory(self, watcher: Any, spawner: Any) -> FakeRuntime:
        """A ``RuntimeFactory`` for the app: keeps what the app injects, returns this runtime."""
        self.watcher, self.spawner = watcher, spawner
        return self

    def source(self, **options: Any) -> RuntimeSource:
        """The app's ``TeamSource``: this runtime (``options``: team, goal, modes)."""
        return RuntimeSource(self.factory, **options)

    # ------------------------------------------------------------------ events

    def subscribe(self, callback: Callable[[RuntimeEvent], None]) -> Callable[[], None]:
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    async def events(self) -> AsyncIterator[RuntimeEvent]:
        queue: asyncio.Queue[RuntimeEvent] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()

    def emit(self, event: RuntimeEvent) -> None:
        if isinstance(event, TranscriptEntry):
            self.transcripts.setdefault(event.agent, []).append(event)
        for listener in list(self._listeners):
            listener(event)

    def stream(self, agent: str, *chunks: str) -> None:
        """Stream text, then record the whole assistant entry (as the real loop does)."""
        for chunk in chunks:
            self.emit(TextDelta(agent, chunk))
        self.emit(TranscriptEntry(agent, "assistant", "".join(chunks)))

    def set_status(self, agent: str, status: AgentStatus, detail: str = "") -> None:
        self.agents = [replace(a, status=status) if a.name == agent else a for a in self.agents]
        self.emit(StatusChanged(agent, status, detail))

    def set_mode(self, agent: str, mode: str) -> None:
        """The agent's permission mode changed (as a teammate's does when its plan is approved)."""
        self.agents = [replace(a, mode=mode) if a.name == agent else a for a in self.agents]
        self.emit(ModeChanged(agent, mode))

    def reopen(self, request_id: str) -> None:
        """An answered request pending again (tests that answer it in several ways, one app)."""
        approval = self._approvals[request_id]
        if approval.outcome is None:
            return
        approval.outcome = None
        self.emit(ApprovalChanged(request_id, approval.kind, approval.agent, False))

    def add_approval(self, approval: Approval) -> None:
        self._approvals[approval.request_id] = approval
        self.emit(ApprovalChanged(approval.request_id, approval.kind, approval.agent, False))

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.calls.append(("stop",))

    # ------------------------------------------------------------------ the person's API

    def submit(self, text: str) -> None:
        self.calls.append(("submit", text))

    def inject_message(self, agent: str, text: str) -> None:
        self.calls.append(("inject_message", agent, text))

    def request_shutdown(self, agent: str, reason: str | None = None) -> Answer:
        self.calls.append(("request_shutdown", agent, reason))
        request_id = f"shutdown-{int(T0 * 1000) + 700_000}@{agent}"  # as TeamRuntime makes them
        return Answer(AnswerStatus.DONE, f"shutdown requested from {agent}", agent, request_id)

    def set_lead_mode(self, mode: str) -> None:
        self.calls.append(("set_lead_mode", mode))

    def set_teammate_permission_mode(self, mode: str) -> None:
        self.calls.append(("set_teammate_permission_mode", mode))
        self.teammate_mode = mode
        self.emit(TeammateModeChanged(mode))

    def kill(self, agent: str) -> Answer:
        self.calls.append(("kill", agent))
        self.set_status(agent, "killed")
        return Answer(AnswerStatus.DONE, f"killed {agent}", agent)

    def interrupt(self, agent: str) -> None:
        self.calls.append(("interrupt", agent))

    def _resolve(self, request_id: str, outcome: str, text: str = "Answered") -> Answer:
        approval = self._approvals.get(request_id)
        if approval is None:
            unknown = f"unknown request id {request_id!r}"
            return Answer(AnswerStatus.UNKNOWN, unknown, request_id=request_id)
        if approval.outcome is not None:
            previous = approval.outcome
            line = f"already resolved ({previous})"
            return Answer(AnswerStatus.ALREADY, line, approval.agent, request_id, previous)
        approval.outcome = outcome
        self.emit(ApprovalChanged(request_id, approval.kind, approval.agent, True, outcome))
        return Answer(AnswerStatus.DONE, f"{text} for {approval.agent}", approval.agent, request_id)

    def approve_plan(self, request_id: str) -> Answer:
        self.calls.append(("approve_plan", request_id))
        return self._resolve(request_id, "approved", "Plan approved")

    def reject_plan(self, request_id: str, feedback: str) -> Answer:
        self.calls.append(("reject_plan", request_id, feedback))
        return self._resolve(request_id, "rejected", "Plan rejected")

    def answer_permission(
        self, request_id: str, allow: bool, always: bool = False, feedback: str | None = None
    ) -> Answer:
        self.calls.append(("answer_permission", request_id, allow, always))
        self.feedback[request_id] = feedback
        verdict = "allowed" if allow else "denied"
        return self._resolve(request_id, verdict, f"Permission {verdict}")

    def snapshot(self) -> list[AgentSnapshot]:
        return list(self.agents)

    def approvals(self) -> list[Approval]:
        pending = [a for a in self._approvals.values() if a.outcome is None]
        return sorted(pending, key=lambda a: a.created_at)

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        return list(self.transcripts.get(agent, []))

    async def spawn_teammate(
        self,
        name: str,
        prompt: str,
        *,
        plan_mode: bool = False,
        agent_type: str | None = None,
        mode: str | None = None,
    ) -> str:
        self.calls.append(("spawn_teammate", name, prompt, plan_mode, mode))
        self.agents.append(AgentSnapshot(name=name, color="cyan", status="running", started_at=T0))
        self.emit(StatusChanged(name, "running"))
        return f"spawned {name}"

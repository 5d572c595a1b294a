"""AgentSession: one agent's identity, conversation, transcript, usage and status.

The session is state plus event emission; ``loop.run_turn`` drives it. Teammate and lead
loops own a session each.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.runtime.agent.compaction import MessageSizes
from app.runtime.api import AgentSnapshot
from app.runtime.events import (
    TERMINAL_STATUSES,
    ActivityChanged,
    AgentStatus,
    ErrorChanged,
    ModeChanged,
    RuntimeEvent,
    StatusChanged,
    TextDelta,
    TranscriptEntry,
    UsageChanged,
)
from app.runtime.model.client import DEFAULT_MAX_TOKENS, is_offline
from app.runtime.model.pricing import call_cost
from app.runtime.permissions import PermissionRules, RulesFeed
from app.runtime.scheduling.offload import Lane
from app.runtime.scheduling.turn_slots import TurnGate, TurnSlot
from app.runtime.tools.base import AgentIdentity, TeamServices, Tool, ToolHooks

if TYPE_CHECKING:
    import anthropic

    from app.core import Home
    from app.runtime.sandbox import SandboxConfig

Emit = Callable[[RuntimeEvent], None]
#: Asks someone (the lead, the person) whether a tool call may run: -> (allowed, reason).
AskPermission = Callable[["AgentSession", Tool, dict[str, Any], str], Awaitable[tuple[bool, str]]]
TRANSCRIPT_LIMIT = 2000


@dataclass
class TurnStats:
    """Timing of the last turns, to measure the runtime's own overhead (model time excluded)."""

    turns: int = 0
    total_seconds: list[float] = field(default_factory=list)
    model_seconds: list[float] = field(default_factory=list)

    def overheads_ms(self) -> list[float]:
        return [
            (t - m) * 1000 for t, m in zip(self.total_seconds, self.model_seconds, strict=False)
        ]


class AgentSession:
    def __init__(
        self,
        identity: AgentIdentity,
        *,
        home: Home,
        client: anthropic.AsyncAnthropic,
        model: str,
        system_prompt: str,
        tools: list[Tool],
        emit: Emit,
        mode: str = "default",
        rules: PermissionRules | None = None,
        services: TeamServices | None = None,
        ask_permission: AskPermission | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.identity = identity
        self.home = home
        self.client = client
        self.model = model
        self.system_prompt = system_prompt
        self.tools = tools
        self.emit = emit
        self.mode = mode
        self.rules = rules or PermissionRules()
        self.services = services
        self.ask_permission = ask_permission
        self.max_tokens = max_tokens
        self.messages: list[dict[str, Any]] = []
        #: Its messages' sizes, kept between requests (``compaction.compact``).
        self.message_sizes = MessageSizes()
        self.transcript: list[TranscriptEntry] = []
        self.interrupt_event = asyncio.Event()
        self.stats = TurnStats()
        self.snapshot = AgentSnapshot(
            name=identity.name,
            color=identity.color,
            status="idle",
            is_lead=identity.is_lead,
            model=model,
            mode=mode,
            agent_type=identity.agent_type,
            cost_usd=0.0,
        )
        #: Set by the ExitPlanMode tool: the plan request we are waiting on.
        self.pending_plan_request: str | None = None
        #: Set when this agent approved its own shutdown (its loop ends after the turn).
        self.shutdown_approved = False
        #: Task ids this agent marked completed during the current turn.
        self.completed_this_turn: list[str] = []
        #: Awaited before each model call (the run's budget holds new calls while it is spent).
        self.gate: Callable[[AgentSession], Awaitable[None]] | None = None
        #: Model calls this agent shares with the process's other in-process teammates (a few
        #: at once: ``team.runtime.IN_PROCESS_CALLS``); ``None``: not capped (the lead, a
        #: teammate process).
        self.slots: asyncio.Semaphore | None = None
        #: The in-process turns of its process, a few at once (``scheduling.turn_slots``);
        #: ``None``: not gated (the lead, a teammate process). ``turn_slot``: this turn's.
        self.turn_gate: TurnGate | None = None
        self.turn_slot: TurnSlot | None = None
        #: "[to analyst] found 3 files": the last direct message to a peer this turn, for the
        #: idle notification's summary (the panel shows the last DM from the files).
        self.last_peer_dm: str | None = None
        #: Where its commands and hooks run (set by whoever builds it; ``None``: unconfined).
        self.sandbox: SandboxConfig | None = None
        #: A teammate's rules follow the run's (set by whoever builds it; ``None``: its own).
        self.rules_feed: RulesFeed | None = None
        #: Its team hooks (``app.runtime.agent.team_hooks.hooks_of`` makes them at first use).
        self.hooks: ToolHooks | None = None
        #: This agent's blocking file work, off the event loop and in order
        #: (app.runtime.scheduling.offload).
        self.io = Lane(identity.name)
        self._status_detail = ""
        try:
            self._offline = is_offline(client)
        except AttributeError:  # a test double, not an SDK client
            self._offline = False

    # ------------------------------------------------------------------ identity

    @property
    def name(self) -> str:
        return self.identity.name

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    @property
    def status(self) -> AgentStatus:
        return self.snapshot.status

    def set_status(self, status: AgentStatus, detail: str = "") -> None:
        if status == self.snapshot.status and detail in ("", self._status_detail):
            return
        if status != self.snapshot.status:
            self.snapshot.status_since = time.time()
        self.snapshot.status = status
        self._status_detail = detail
        if status in TERMINAL_STATUSES:
            self.snapshot.ended_at = time.time()
        self.emit(StatusChanged(self.name, status, detail))

    def set_mode(self, mode: str) -> None:
        if mode == self.mode:
            return
        self.mode = mode
        self.snapshot.mode = mode
        self.emit(ModeChanged(self.name, mode))

    def set_error(self, error: str | None) -> None:
        """The error the agent's panel shows (``None`` clears it)."""
        if error == self.snapshot.error:
            return
        self.snapshot.error = error
        self.emit(ErrorChanged(self.name, error))

    def note_peer_dm(self, recipient: str, summary: str) -> None:
        self.last_peer_dm = f"[to {recipient}] {summary}"

    def take_peer_dm(self) -> str | None:
        """The last peer DM of the turn (once: the next turn starts without one)."""
        dm, self.last_peer_dm = self.last_peer_dm, None
        return dm

    def set_activity(self, text: str) -> None:
        if text == self.snapshot.last_activity:
            return
        self.snapshot.last_activity = text
        self.emit(ActivityChanged(self.name, text))

    # ------------------------------------------------------------------ transcript

    def record(self, kind: Any, text: str, **data: Any) -> None:
        entry = TranscriptEntry(self.name, kind, text, data)
        self.transcript.append(entry)
        if len(self.transcript) > TRANSCRIPT_LIMIT:
            del self.transcript[: len(self.transcript) - TRANSCRIPT_LIMIT]
        self.emit(entry)

    def delta(self, text: str) -> None:
        self.emit(TextDelta(self.name, text))

    def add_usage(self, usage: Any, tool_calls: int = 0) -> None:
        snap = self.snapshot
        if usage is not None:
            counts = [
                getattr(usage, name, 0) or 0
                for name in (
                    "input_tokens",
                    "output_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                )
            ]
            snap.input_tokens += counts[0]
            snap.output_tokens += counts[1]
            snap.cache_read_tokens += counts[2]
            snap.cache_write_tokens += counts[3]
            snap.model_calls += 1
            cost = call_cost(self.model, *counts, offline=self._offline)
            if cost is None:
                snap.unpriced_calls += 1
            else:
                snap.cost_usd = (snap.cost_usd or 0.0) + cost
        snap.tool_calls += tool_calls
        self.emit(
            UsageChanged(
                self.name,
                snap.input_tokens,
                snap.output_tokens,
                snap.cache_read_tokens,
                snap.cache_write_tokens,  # (a resumed lead's total includes its earlier calls)
                snap.tool_calls,
                snap.model_calls,
                snap.cost_usd,
                snap.unpriced_calls,
            )
        )

    # ------------------------------------------------------------------ interrupt

    def interrupt(self) -> None:
        self.interrupt_event.set()

    @property
    def interrupted(self) -> bool:
        return self.interrupt_event.is_set()

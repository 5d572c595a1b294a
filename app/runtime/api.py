"""The runtime API the dashboard and headless runner use (implemented by ``TeamRuntime``).

Kept as a Protocol so the UI can be tested against a fake runtime, and so the contract between
the layers is written down in one place.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol

from app.runtime.events import AgentStatus, ApprovalKind, RuntimeEvent, TranscriptEntry

if TYPE_CHECKING:
    from app.core.watch import Watcher

#: Runs an agent's main coroutine: ``spawner(agent_name, coroutine_factory)``. The dashboard
#: uses a Textual worker per agent (group ``agent-{name}``); headless uses asyncio tasks.
Spawner = Callable[[str, Callable[[], Awaitable[None]]], Any]
Decider = Literal["person", "lead"]


@dataclass
class AgentSnapshot:
    """What a teammate panel shows."""

    name: str
    color: str | None
    status: AgentStatus
    is_lead: bool = False
    model: str = ""
    mode: str = "default"
    agent_type: str | None = None  # the team config's agentType ("team-lead" for the lead)
    current_task: str | None = None  # "#3 Write the summary" (the file reader's, in the UI)
    last_activity: str = ""  # tool in use, or the last peer-DM summary
    started_at: float = field(default_factory=time.time)
    status_since: float = field(default_factory=time.time)  # entered ``status`` (0: unknown)
    ended_at: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: USD so far, each model call priced as it ends (``app.runtime.model.pricing``; 0 for the
    #: offline model); ``None``: not counted here (an agent of another program, seen in files).
    cost_usd: float | None = None
    unpriced_calls: int = 0  # model calls whose model has no known price (not in ``cost_usd``)
    tool_calls: int = 0
    model_calls: int = 0
    error: str | None = None
    worktree: str | None = None  # ``--worktrees``: its git worktree (the config's worktreePath)
    #: a team across machines: the machine it runs on (the engine's members' machine column);
    #: ``None`` when the team runs on one machine
    machine: str | None = None

    @property
    def elapsed(self) -> float:
        return (self.ended_at or time.time()) - self.started_at


@dataclass
class Approval:
    """A pending (or answered) plan or permission request (the person or the lead answers it;
    shutdown requests are answered by the teammate they are addressed to)."""

    request_id: str
    kind: ApprovalKind
    agent: str  # who asks
    title: str  # one line, in words: "engineer: plan approval"
    body: str = ""  # plan markdown; permission: the tool input as JSON
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    suggestion: str | None = None  # rule added by "always allow", e.g. "Bash(git:*)"
    created_at: float = field(default_factory=time.time)
    outcome: str | None = None  # None while pending
    #: where it comes from when that is not the team shown alone: a Claude Code request's
    #: session, team and folder ("Claude Code session 510c9ba6 · team ... · /home/me/project")
    origin: str | None = None
    #: where "always allow" puts the rule, when the dialog should say (a Claude Code request's)
    rule_home: str | None = None
    #: the rules "always allow" may add, ``(rule, words)``, ``suggestion`` among them (a Claude
    #: Code request's: this exact command, its prefix, a file's directory)
    rule_choices: tuple[tuple[str, str], ...] = ()
    #: what approving does when it is not the person's word alone (a Claude Code teammate's
    #: plan: "the lead approves ... by itself"), shown where the dialog offers it
    approve_words: str | None = None


class AnswerStatus(StrEnum):
    """What came of one of the person's calls on a request or an agent."""

    DONE = "done"  # the team was told (the answer is in the requester's inbox)
    UNKNOWN = "unknown"  # no such request (never queued here, or a new team since)
    WRONG_KIND = "wrong kind"  # the id names another kind of request (see ``kind``)
    ALREADY = "already"  # answered before, by anyone (see ``previous``)
    UNDELIVERED = "undelivered"  # answered here, but the requester's inbox was not written


@dataclass(frozen=True, slots=True)
class Answer:
    """The runtime's typed reply to a steering call (``approve_plan``, ``kill``, ...).

    ``text`` is one line in the runtime's words (what the lead's tools return to the model);
    the other fields are what a caller decides on, so nobody has to read the line.
    """

    status: AnswerStatus
    text: str
    agent: str = ""  # whose request, or which agent
    request_id: str = ""  # the request answered, or the one this call opened (shutdown)
    previous: str | None = None  # ALREADY: how it was answered ("approved", "timed out", ...)
    kind: ApprovalKind | None = None  # WRONG_KIND: the kind of request the id names
    note: str = ""  # DONE: what else came of it, e.g. "rule Bash(git:*) added"

    @property
    def ok(self) -> bool:
        return self.status is AnswerStatus.DONE


class RuntimeAPI(Protocol):
    """What the dashboard drives. The watcher and the spawner are given at construction."""

    team: str | None
    model_description: str
    decider: Decider
    #: How teammates run: ``in-process``, ``process`` or ``tmux`` (then the team can be left
    #: running when the dashboard quits).
    teammate_backend: str
    #: The process's one file watcher (the dashboard reads the files through it too).
    watcher: Watcher
    #: Runs each agent's loop (a Textual worker per agent in the dashboard).
    spawner: Spawner
    #: bypassPermissions may be entered (the flag, or the person's confirmation, gives it).
    allow_bypass: bool

    @property
    def sandbox_description(self) -> str:
        """Where agents' commands run, for the header: ``sandbox``, ``no sandbox``, ..."""

    def subscribe(self, callback: Callable[[RuntimeEvent], None]) -> Callable[[], None]: ...

    def events(self) -> AsyncIterator[RuntimeEvent]: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def submit(self, text: str) -> None:
        """The person's prompt to the lead."""

    def inject_message(self, agent: str, text: str) -> None:
        """The person's message to a teammate: handled before any other mail (seed 002)."""

    def request_shutdown(self, agent: str, reason: str | None = None) -> Answer:
        """Send ``agent`` a shutdown request (the answer's ``request_id``); NotFoundError for
        an unknown agent or no team."""

    def set_lead_mode(self, mode: str) -> None:
        """The lead's permission mode (shift+tab); ValueError for an unknown mode."""

    def set_teammate_permission_mode(self, mode: str) -> None:
        """The permission mode teammates spawned from now on start in (an event says so);
        ValueError for an unknown mode."""

    def kill(self, agent: str) -> Answer:
        """Stop ``agent`` now; NotFoundError for an unknown agent."""

    def interrupt(self, agent: str) -> None: ...

    def approve_plan(self, request_id: str) -> Answer: ...

    def reject_plan(self, request_id: str, feedback: str) -> Answer: ...

    def answer_permission(
        self, request_id: str, allow: bool, always: bool = False, feedback: str | None = None
    ) -> Answer: ...

    def snapshot(self) -> list[AgentSnapshot]:
        """Lead first, then teammates in spawn order."""

    def approvals(self) -> list[Approval]:
        """Pending approvals, oldest first."""

    def transcript(self, agent: str) -> list[TranscriptEntry]: ...

    async def spawn_teammate(
        self,
        name: str,
        prompt: str,
        *,
        plan_mode: bool = False,
        agent_type: str | None = None,
        mode: str | None = None,
    ) -> str:
        """A teammate the person starts; ``mode`` is its permission mode (else the team's)."""

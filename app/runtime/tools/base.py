"""The tool interface: a name, a JSON input schema, and an async ``call``.

A tool returns a ToolResult (or raises ToolError for a failure the model should see). Results
are JSON where the seeds give a result shape (``{"data": {...}}`` is unwrapped to its content),
plain text otherwise. Tools never print and never touch the UI.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, ParamSpec, Protocol, TypeVar

from app.runtime.scheduling import offload

if TYPE_CHECKING:
    from app.core import Home
    from app.runtime.sandbox import SandboxConfig
    from app.runtime.scheduling.offload import Lane
    from app.runtime.scheduling.turn_slots import TurnSlot

P = ParamSpec("P")
T = TypeVar("T")


class ToolError(Exception):
    """A tool failure shown to the model as an ``is_error`` tool result (one line)."""


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    data: Any = None

    @classmethod
    def json(cls, data: Any, *, is_error: bool = False) -> ToolResult:
        return cls(json.dumps(data, indent=2, ensure_ascii=False), is_error, data)

    @classmethod
    def compact_json(cls, data: Any, *, is_error: bool = False) -> ToolResult:
        """One line of JSON without spaces (the C encoder's; ``json`` indents in Python)."""
        return cls(json.dumps(data, ensure_ascii=False, separators=(",", ":")), is_error, data)


@dataclass
class AgentIdentity:
    """Who is calling a tool."""

    name: str  # member name: "team-lead" for the lead
    team: str | None  # current team (the lead has none before TeamCreate)
    color: str | None = None
    model: str = ""
    cwd: Path = field(default_factory=Path.cwd)
    is_lead: bool = False
    #: Claude Code's agent type and plan-mode flag; ``None``: read from the team config.
    agent_type: str | None = None
    plan_mode_required: bool | None = None
    #: Tasks this agent created, by team (TaskCreate's cap: ``tools.tasks.MAX_TASKS_PER_AGENT``).
    tasks_created: dict[str, int] = field(default_factory=dict)

    @property
    def agent_id(self) -> str:
        return f"{self.name}@{self.team}" if self.team else self.name


class HookOutcome(Protocol):
    """What a tool reads of its hooks' run: whether one blocked, and why."""

    @property
    def blocked(self) -> bool: ...

    @property
    def feedback(self) -> str: ...


class ToolHooks(Protocol):
    """The calling agent's team hooks as a tool sees them (``agent.team_hooks.TeamHooks``)."""

    async def has(self, event: str) -> bool: ...

    async def fire(self, event: str, *, task: Any = None) -> HookOutcome: ...


class TeamServices(Protocol):
    """What the team tools need from the runtime (implemented by TeamRuntime)."""

    home: Home

    def current_team(self) -> str | None: ...

    def team_created(self, team: str) -> None: ...

    def team_name_for(self, requested: str) -> str:
        """The name TeamCreate gives the team (a run across machines leads the engine's)."""
        ...

    def team_deleted(self, team: str) -> None: ...

    async def spawn_teammate(self, caller: AgentIdentity, spec: dict[str, Any]) -> dict[str, Any]:
        """Spawn an in-process teammate from a Task tool input; returns the seeds' result data."""
        ...

    def send(
        self,
        caller: AgentIdentity,
        recipient: str,
        text: str,
        summary: str | None = None,
    ) -> str:
        """Validate the recipient and append to its inbox; returns the member name."""
        ...

    def broadcast(self, caller: AgentIdentity, team: str, message: Any) -> list[str]:
        """Send ``message`` (an InboxMessage) to every member but the caller."""
        ...

    def note_peer_dm(self, caller: AgentIdentity, recipient: str, summary: str) -> None:
        """Remember a teammate's last DM to a peer (for its idle notification; the panel shows
        the last DM the files hold)."""
        ...

    def answer_plan(
        self, caller: AgentIdentity, request_id: str, approve: bool, feedback: str | None
    ) -> str:
        """Answer a plan approval request; returns a result line ("already resolved"...)."""
        ...

    def answer_permission_from_lead(
        self, caller: AgentIdentity, request_id: str, allow: bool, reason: str | None
    ) -> str: ...

    def answer_shutdown(
        self, caller: AgentIdentity, request_id: str, approve: bool, reason: str | None
    ) -> str:
        """A teammate answers a shutdown request (approval ends its loop)."""
        ...

    def request_shutdown_from(
        self, caller: AgentIdentity, recipient: str, reason: str | None
    ) -> str:
        """Send a shutdown_request; returns the request id."""
        ...

    async def request_plan_approval(self, caller: AgentIdentity, plan: str) -> str:
        """Send plan_approval_request to the lead; returns the request id (does not wait)."""
        ...


@dataclass
class ToolContext:
    home: Home
    agent: AgentIdentity
    services: TeamServices | None = None
    tool_use_id: str = ""
    # Extra read/write roots allowed by permission rules (besides agent.cwd).
    extra_roots: tuple[Path, ...] = ()
    #: The calling agent's team hooks (TaskCreated, TaskCompleted); ``None``: none run.
    hooks: ToolHooks | None = None
    #: The agent's lane for blocking file work (``None``: such work runs inline).
    lane: Lane | None = None
    #: Where commands run (``None``: as before the sandbox existed, for library callers).
    sandbox: SandboxConfig | None = None
    #: The calling turn's slot (an in-process teammate's): given up while the lane works.
    slot: TurnSlot | None = None

    async def blocking(self, func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking core call (file I/O, a task-list scan) off the event loop, after the
        agent's earlier ones; its result or exception (see ``app.runtime.scheduling.offload``).
        The turn waits meanwhile: its slot goes to another (``scheduling.turn_slots``); the
        worker threads are a few already, and an fsync is a wait, not work."""
        if self.lane is None:
            return func(*args, **kwargs)
        if self.slot is None or not offload.enabled():  # inline: the turn's own work
            return await self.lane.run(func, *args, **kwargs)
        async with self.slot.waiting():
            return await self.lane.run(func, *args, **kwargs)

    def require_team(self) -> str:
        team = self.agent.team or (self.services.current_team() if self.services else None)
        if not team:
            raise ToolError("Not in a team context. Create a team with TeamCreate first.")
        return team

    def require_services(self) -> TeamServices:
        if self.services is None:
            raise ToolError("team services are not available in this context")
        return self.services


class Tool:
    """Base class for tools. Subclasses set ``name``, ``description``, ``input_schema``."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[dict[str, Any]]
    #: Never changes anything: allowed in plan mode, may run concurrently with other readers.
    read_only: ClassVar[bool] = False
    #: Edits files (acceptEdits mode allows it without asking).
    edits_files: ClassVar[bool] = False
    #: Coordination tools are always allowed (SendMessage, Task*, Team*).
    coordination: ClassVar[bool] = False
    #: Mostly waits on something outside the process (a command): an in-process turn gives
    #: its slot to another turn meanwhile (``scheduling.turn_slots``).
    waiting: ClassVar[bool] = False

    def waits(self, tool_input: dict[str, Any]) -> bool:
        """Whether this call mostly waits rather than works (``waiting``)."""
        return self.waiting

    def is_read_only(self, tool_input: dict[str, Any]) -> bool:
        return self.read_only

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        """What a rule's parenthesised pattern matches: a command for Bash, a path for file
        tools, ``None`` when the tool has no subject."""
        return None

    def describe(self, tool_input: dict[str, Any]) -> str:
        """One line for a permission prompt or the transcript."""
        subject = self.permission_subject(tool_input)
        return f"{self.name}({subject})" if subject else self.name

    def to_api(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

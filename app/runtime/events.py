"""Runtime events: what the dashboard (and headless output) observe of a running team.

Plain dataclasses, no Textual: the UI turns them into Textual messages. Every event names the
agent it concerns (``agent`` is the member name: ``team-lead`` for the lead).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: "gone": a teammate of a team teamdeck only watches left it (shutdown, or removed from the
#: config); the files do not say whether it finished its work.
AgentStatus = Literal[
    "running", "idle", "awaiting approval", "stopping", "completed", "failed", "killed", "gone"
]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "killed", "gone"})
ApprovalKind = Literal["plan", "permission", "shutdown"]


@dataclass(frozen=True, slots=True)
class StatusChanged:
    agent: str
    status: AgentStatus
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ModeChanged:
    """An agent's permission mode changed (e.g. a teammate left plan mode)."""

    agent: str
    mode: str


@dataclass(frozen=True, slots=True)
class TeammateModeChanged:
    """The permission mode teammates spawned from now on start in changed."""

    mode: str


@dataclass(frozen=True, slots=True)
class ErrorChanged:
    """An agent's error (shown in its panel) was set, or cleared (``error`` ``None``)."""

    agent: str
    error: str | None


@dataclass(frozen=True, slots=True)
class ActivityChanged:
    """What an agent is doing now (the tool it calls, thinking, paused)."""

    agent: str
    text: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A chunk of streamed assistant text."""

    agent: str
    text: str


@dataclass(frozen=True, slots=True)
class TranscriptEntry:
    """A whole transcript item: ``kind`` is user | assistant | tool_call | tool_result | notice
    | error. ``tool_call``/``tool_result`` carry ``tool``, ``tool_use_id`` and ``input`` or
    ``is_error`` in ``data`` (a tool call may also say ``collapsed``: shown folded, one line)."""

    agent: str
    kind: Literal["user", "assistant", "tool_call", "tool_result", "notice", "error"]
    text: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UsageChanged:
    """An agent's counts so far (cumulative); ``cost_usd`` and ``unpriced_calls`` as on its
    ``AgentSnapshot`` (``None``: not counted by the emitter)."""

    agent: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    tool_calls: int
    model_calls: int
    cost_usd: float | None = None
    unpriced_calls: int = 0


@dataclass(frozen=True, slots=True)
class MessageSent:
    """A message written to an inbox by this runtime (frames included)."""

    team: str
    sender: str
    recipient: str
    text: str
    summary: str | None
    frame_type: str | None
    timestamp: str
    #: who decided the answer the message carries, when not its sender (the person answering
    #: as ``team-lead``: the message's ``answeredBy``)
    answered_by: str | None = None
    #: an agent's text that imitates a frame (the message's ``plainText``): shown as text
    plain: bool = False


@dataclass(frozen=True, slots=True)
class ApprovalChanged:
    """An approval was queued (``resolved`` False) or answered (``resolved`` True)."""

    request_id: str
    kind: ApprovalKind
    agent: str
    resolved: bool
    outcome: str = ""  # approved | rejected | allowed | denied | timed out | ...
    #: Who answered: ``user`` (the person), ``team-lead`` (the lead's model); "" when nobody
    #: did (timed out, cancelled, the teammate left).
    by: str = ""


@dataclass(frozen=True, slots=True)
class TeamLifecycle:
    team: str
    event: Literal["created", "deleted"]


@dataclass(frozen=True, slots=True)
class HookRan:
    """A team hook command ended (``TeammateIdle``, ``TaskCreated``, ``TaskCompleted``):
    ``outcome`` ok, blocked (``message``: the feedback handed to the agent) or warning
    (``message``: the one-line warning). ``agent`` is whose action ran it."""

    agent: str
    hook_event: str
    outcome: Literal["ok", "blocked", "warning"]
    command: str
    message: str = ""
    task_id: str | None = None
    team: str | None = None


@dataclass(frozen=True, slots=True)
class WorktreeReleased:
    """``--worktrees``: a teammate left and its worktree was removed (nothing changed in it)
    or kept (``summary`` says why: changed files, commits, or an error)."""

    agent: str
    path: str
    branch: str
    removed: bool
    summary: str
    team: str | None = None


@dataclass(frozen=True, slots=True)
class RunFinished:
    ok: bool
    reason: str


@dataclass
class TurnOutcome:
    """How one turn of an agent's loop ended (``text``: its last reply; ``error``: why it
    failed). Not streamed to the views: the lead's and teammates' loops act on it."""

    status: Literal["end_turn", "max_tokens", "interrupted", "error"]
    text: str = ""
    error: str | None = None


RuntimeEvent = (
    StatusChanged
    | ModeChanged
    | TeammateModeChanged
    | ErrorChanged
    | ActivityChanged
    | TextDelta
    | TranscriptEntry
    | UsageChanged
    | MessageSent
    | ApprovalChanged
    | TeamLifecycle
    | HookRan
    | WorktreeReleased
    | RunFinished
)

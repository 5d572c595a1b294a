"""What the views show, as plain values (no Textual, no file reading).

The app keeps one value of each kind in a reactive (``TeamDeckApp.agents``, ``.approvals``,
``.files``, ``.header``, ...) and the views watch them. Here are the types of those values
and the pure rules that build them:

- :class:`FeedItem`: one message of the team feed.
- :class:`TeamFiles`: what the team's files say (config, errors, open tasks, current tasks,
  last peer DMs), as of the store's last delta.
- :func:`merge_agents`: the agents the panels show, runtime snapshots merged with the files.
- :class:`HeaderInfo`: the header line's values, counted from the same agents as the panels.

What a burst of runtime events asks of the app (and the notifications' words) is in
``app.dashboard.event_burst``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core import TeamConfig
from app.core.frame_text import describe_hook, frame_of
from app.core.models import now_iso
from app.core.paths import LEAD_NAME
from app.core.protocol import PermissionRequest
from app.display.agent_text import command_line, elide_middle, flat, shown
from app.display.feed_facts import idle_fact
from app.display.format import FeedLine, describe
from app.display.request_text import asked_words, subject
from app.display.text_search import haystack
from app.runtime.api import AgentSnapshot, Approval
from app.runtime.by_files.status import is_stale
from app.runtime.events import (
    TERMINAL_STATUSES,
    AgentStatus,
    HookRan,
)
from app.runtime.model.pricing import format_usd

# ============================================================================ feed items


@dataclass(slots=True, eq=False)
class FeedItem:
    """One message of the team feed (a broadcast is one item with several recipients)."""

    timestamp: str
    seq: int
    sender: str
    recipients: tuple[str, ...]
    text: str
    summary: str | None = None
    _line: FeedLine | None = None
    _haystack: str | None = field(default=None, repr=False, compare=False)
    #: An agent's text that imitates a frame (``plainText``): worded as the text it is.
    plain: bool = False
    #: the fact the line tells when another source may tell it too (``fact_key``)
    fact: str | None = None

    @property
    def sort_key(self) -> tuple[str, int]:
        return (self.timestamp, self.seq)

    @property
    def fact_key(self) -> str | None:
        """The fact this line tells, when two sources tell it: a Claude Code teammate going
        idle is told by its ``TeammateIdle`` hook and by the ``idle_notification`` it leaves in
        the lead's inbox (``idle:<agent>``). The feed shows one line per fact and moment
        (``FEED_TWIN_SECONDS``); ``None``: the line is its own fact."""
        if self.fact is not None:
            return self.fact
        if self.line.kind == "idle_notification":
            return idle_fact(self.sender)
        return None

    @property
    def search_text(self) -> str:
        """What feed search matches: the line shown, sender, recipients, frame type, the
        whole text (lowered; computed on first search)."""
        if self._haystack is None:
            line = self.line
            self._haystack = haystack(
                line.plain(), self.sender, " ".join(self.recipients), line.kind, self.text
            )
        return self._haystack

    @property
    def line(self) -> FeedLine:
        """The readable line (computed on first use: only drawn items pay for it)."""
        if self._line is None:
            recipient = self.recipients[0] if len(self.recipients) == 1 else ""
            frame = frame_of(self.text, plain=self.plain)
            line = describe(
                self.sender, recipient, self.text, self.summary, frame=frame, plain=self.plain
            )
            if isinstance(frame, PermissionRequest):  # the command, not its description alone
                line = dataclasses.replace(line, text=asked_words(frame) or line.text)
            if len(self.recipients) > 1 and line.target is not None:
                line = dataclasses.replace(line, target=", ".join(self.recipients))
            self._line = shown_line(line)
        return self._line

    def involves(self, agent: str) -> bool:
        return self.sender == agent or agent in self.recipients

    def add_recipient(self, name: str) -> None:
        if name not in self.recipients:
            self.recipients = (*self.recipients, name)
            self._line = self._haystack = None


def shown_line(line: FeedLine) -> FeedLine:
    """``line`` as the person may see it (:func:`app.display.agent_text.shown`): the feed
    and the replay draw these words as they are."""
    target = None if line.target is None else shown(line.target)
    return FeedLine(shown(line.actor), target, shown(line.text), line.kind)


def hook_item(event: HookRan, seq: int) -> FeedItem:
    """A hook that blocked or warned, as a feed line of its agent (now). ``seq``: negative,
    so it never meets a message's (the store counts those up from 1)."""
    line = describe_hook(event.agent, event.hook_event, event.outcome, event.message, event.task_id)
    full = describe_hook(event.agent, event.hook_event, event.outcome, "", event.task_id).text
    text = f"{full} — {event.message}" if event.message else full
    return FeedItem(now_iso(), seq, event.agent, (), text, None, shown_line(line))


# ============================================================================ the team's files


@dataclass(frozen=True)
class TeamFiles:
    """What the files of the team shown say (the store keeps it; see ``app.dashboard.store``).

    Compared by value: a view redraws only when something in it changed.
    """

    team: str | None = None
    removed: bool = False  # the team shown was deleted (its last state stays on screen)
    config: TeamConfig | None = None
    config_error: str | None = None
    inbox_errors: Mapping[str, str] = field(default_factory=dict)  # agent -> error
    task_errors: Mapping[str, str] = field(default_factory=dict)  # task id -> error
    open_tasks: int = 0
    current_tasks: Mapping[str, str] = field(default_factory=dict)  # owner -> "#3 subject"
    last_dm: Mapping[str, str] = field(default_factory=dict)  # sender -> "✉ to: summary"
    teams: tuple[str, ...] = ()  # every team in the home
    #: teammate -> status the files imply (a viewer: ``app.runtime.by_files.status``)
    statuses: Mapping[str, AgentStatus] = field(default_factory=dict)
    #: teammate -> since when (epoch seconds) it is in that status, where the files tell
    status_since: Mapping[str, float] = field(default_factory=dict)
    #: the newest modification time among the team's files (a viewer)
    last_activity: float | None = None
    #: no file changed for long and nobody works (``app.runtime.by_files.status.is_stale``): the
    #: panels' timers stop at ``last_activity`` (set by the app: it depends on the time)
    stale: bool = False

    def stale_now(self, now: float) -> bool:
        """Whether the team is stale at ``now`` (only a viewer knows its last activity)."""
        if self.team is None or self.config is None or self.last_activity is None:
            return False
        return is_stale(self.last_activity, self.statuses.values(), now)

    def as_of(self, now: float) -> TeamFiles:
        """These files with ``stale`` as of ``now`` (``self`` when that changes nothing)."""
        stale = self.stale_now(now)
        return self if stale == self.stale else dataclasses.replace(self, stale=stale)


def agent_colors(files: TeamFiles, agents: Iterable[AgentSnapshot]) -> dict[str, str]:
    """Each agent's colour: the config's, overridden by the runtime's."""
    config = files.config
    colors = {m.name: m.color for m in config.members if m.color} if config else {}
    colors.update({a.name: a.color for a in agents if a.color})
    return colors


# ============================================================================ agents


def merge_agents(
    snapshots: Sequence[AgentSnapshot] | None, files: TeamFiles
) -> tuple[AgentSnapshot, ...]:
    """The agents the panels show: the lead first, then teammates (runtime order, then
    members only the files know about).

    The runtime (``snapshots``; ``None`` for a read-only viewer) knows status, mode, usage
    and what an agent is doing now; the files know current tasks (live, even for another
    process's team) and each agent's last peer DM. The activity line shows what the agent is
    doing, or, once it is idle (or doing nothing the runtime knows of), the last DM it sent.
    A member's ``worktreePath`` fills in its worktree.
    """
    merged: dict[str, AgentSnapshot] = {}
    for snap in snapshots or []:
        merged.setdefault(snap.name, snap)
    config = files.config
    if config is not None:
        for member in config.members:
            if member.name in merged:
                continue
            is_lead = member.agent_id == config.lead_agent_id or member.name == LEAD_NAME
            started = member.joined_at / 1000 if member.joined_at else 0.0
            status = files.statuses.get(member.name) or ("running" if member.is_active else "idle")
            merged[member.name] = _from_files(
                files,
                AgentSnapshot(
                    name=member.name,
                    color=member.color,
                    status=status,
                    is_lead=is_lead,
                    model=member.model or "",
                    mode=member.mode or "default",
                    started_at=started,
                    status_since=files.status_since.get(member.name) or started,
                ),
            )
        for name, status in files.statuses.items():  # left the config: still shown, as gone
            if name not in merged and status == "gone":
                since = files.status_since.get(name, 0.0)
                merged[name] = _from_files(
                    files, AgentSnapshot(name, None, "gone", started_at=0.0, status_since=since)
                )
    worktrees = {m.name: m.worktree_path for m in config.members} if config is not None else {}
    agents: list[AgentSnapshot] = []
    for snap in merged.values():
        current = files.current_tasks.get(snap.name, snap.current_task)
        last_dm = files.last_dm.get(snap.name, "")
        activity = last_dm if last_dm and snap.status == "idle" else snap.last_activity or last_dm
        worktree = snap.worktree or worktrees.get(snap.name)
        if (current, activity, worktree) != (snap.current_task, snap.last_activity, snap.worktree):
            snap = dataclasses.replace(
                snap, current_task=current, last_activity=activity, worktree=worktree
            )
        agents.append(snap)
    agents.sort(key=lambda a: not a.is_lead)  # stable: lead first, order kept
    return tuple(agents)


#: The counters a goal's lead starts again from (``since_goal``).
COUNTERS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "tool_calls",
    "model_calls",
    "unpriced_calls",
)


def since_goal(
    agents: Sequence[AgentSnapshot], bases: Sequence[AgentSnapshot]
) -> tuple[AgentSnapshot, ...]:
    """``agents`` with the lead's counts (tokens, calls, cost) since ``bases``' first, a copy
    of the lead as it was when the previous goal's run ended (none before a goal ended): one
    lead serves every goal of a dashboard, and each goal's team (and its history run) counts
    only its own work."""
    if not bases:
        return tuple(agents)
    base = bases[0]
    out: list[AgentSnapshot] = []
    for snap in agents:
        if snap.is_lead and snap.name == base.name:
            changes: dict[str, Any] = {
                name: max(0, getattr(snap, name) - getattr(base, name)) for name in COUNTERS
            }
            if snap.cost_usd is not None:
                changes["cost_usd"] = max(0.0, snap.cost_usd - (base.cost_usd or 0.0))
            snap = dataclasses.replace(snap, **changes)
        out.append(snap)
    return tuple(out)


def _from_files(files: TeamFiles, snap: AgentSnapshot) -> AgentSnapshot:
    """A snapshot built from the files only: its timers stop when it left (gone) or when the
    team went quiet (stale), instead of counting up forever."""
    end: float | None = None
    if snap.status == "gone":
        end = snap.status_since or files.last_activity
    elif files.stale:
        end = files.last_activity
    if end is None:
        return snap
    since = min(snap.status_since, end) if snap.status_since else end
    return dataclasses.replace(snap, ended_at=end, status_since=since)


def with_usage(
    agents: Sequence[AgentSnapshot], usage: Mapping[str, tuple[Any, ...]]
) -> tuple[AgentSnapshot, ...]:
    """``agents`` with token usage and tool calls from elsewhere than the runtime (a viewer:
    the agents' own session transcripts). ``usage``: name -> (input, output, cache read,
    tool calls[, USD, unpriced calls])."""
    out: list[AgentSnapshot] = []
    for snap in agents:
        counts = usage.get(snap.name)
        if counts is not None:
            tokens_in, tokens_out, cache_read, tools = counts[:4]
            cost: dict[str, Any] = {}
            if len(counts) >= 6:
                cost = {"cost_usd": counts[4], "unpriced_calls": counts[5]}
            snap = dataclasses.replace(
                snap,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                cache_read_tokens=cache_read,
                tool_calls=tools,
                **cost,
            )
        out.append(snap)
    return tuple(out)


def find_agent(agents: Iterable[AgentSnapshot], name: str | None) -> AgentSnapshot | None:
    return next((a for a in agents if a.name == name), None)


def teammates(agents: Iterable[AgentSnapshot]) -> list[AgentSnapshot]:
    return [a for a in agents if not a.is_lead]


def request_label(approval: Approval, detail: int = 14) -> str:
    """A request in a few words, for the footer: ``researcher: Bash(wc -l … .md)``,
    ``writer's plan``, ``tester's shutdown``. The command keeps its start and its end
    (``detail`` cells), never its asker's description."""
    agent = flat(approval.agent)
    if approval.kind != "permission":
        return f"{agent}'s {flat(approval.kind)}"
    tool = flat(approval.tool_name or "permission")
    command = command_line(subject(approval.tool_input))
    inside = elide_middle(command, detail) if detail > 0 else ""  # 0: the tool alone
    return f"{agent}: {tool}({inside})" if inside else f"{agent}: {tool}"


def valid_selection(selected: str | None, agents: Sequence[AgentSnapshot]) -> str | None:
    """``selected`` if it is still shown, else the first agent (the lead), else nothing."""
    if any(a.name == selected for a in agents):
        return selected
    return agents[0].name if agents else None


# ============================================================================ the header


@dataclass(frozen=True)
class HeaderInfo:
    """The header line: its fields are ``StatusBar.show``'s arguments."""

    team: str | None = None
    model: str = ""
    teammates: int = 0
    open_tasks: int = 0
    approvals: int = 0
    read_only: bool = False
    demo: bool = False
    error: str | None = None
    mode: str = ""  # the lead's permission mode when it is not "default"
    cost: str = ""  # the run's cost so far ("$0.0123", "$1.20 of $5.00"); "" for a viewer
    stale_since: float | None = None  # the team is stale: its last activity (epoch seconds)


def header_info(
    files: TeamFiles,
    agents: Sequence[AgentSnapshot],
    approvals: Sequence[Approval],
    *,
    model: str,
    read_only: bool,
    demo: bool,
    priced: bool = True,
    budget_limit: float | None = None,
    sandbox: str = "",
) -> HeaderInfo:
    """Counts come from what the panels show: teammates still with the team (a killed,
    failed or finished one keeps its panel but is not counted); the cost (``priced``: a run
    of ours, whose model calls are counted) is every agent's, gone ones included. The
    sandbox's state (``sandbox``, ``no sandbox``...; "" for a viewer, which runs nothing)
    follows the model's words, before the model's hint."""
    team = files.team
    head, dash, hint = model.partition(" — ")
    return HeaderInfo(
        team=f"{team} (deleted)" if team and files.removed else team,
        model=f"{head} · {sandbox}{dash}{hint}" if sandbox else model,
        teammates=sum(1 for a in teammates(agents) if a.status not in TERMINAL_STATUSES),
        open_tasks=files.open_tasks,
        approvals=len(approvals),
        read_only=read_only,
        demo=demo,
        error=files.config_error,
        mode=next((a.mode for a in agents if a.is_lead and a.mode != "default"), ""),
        cost=run_cost(agents, budget_limit) if priced else "",
        stale_since=files.last_activity if files.stale else None,
    )


def run_cost(agents: Sequence[AgentSnapshot], budget_limit: float | None = None) -> str:
    """The run's cost so far: the agents' costs summed (``$?`` once a call could not be
    priced), and the budget when there is one."""
    unknown = any(a.unpriced_calls for a in agents)
    total = None if unknown else sum(a.cost_usd or 0.0 for a in agents)
    text = format_usd(total)
    return f"{text} of {format_usd(budget_limit)}" if budget_limit is not None else text

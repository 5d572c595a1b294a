"""A finished run, replayable: the team's state at any point of its timeline (no Textual).

``Replay.load`` reads the run's events once. The state after the first ``n`` events (agents
with their status and cost, the task board, the messages so far, any agent's transcript) is
computed from the nearest checkpoint (one every ``CHECKPOINT`` events, built while loading)
plus at most ``CHECKPOINT`` events, so a scrub to any point costs the same wherever it lands.

``Search`` filters events by text, sender or frame type (all words must match, any case).
"""

from __future__ import annotations

import bisect
import copy
import sqlite3
from dataclasses import dataclass, field

from app.archive import query
from app.archive.query import Event, RunSummary
from app.archive.timeline import event_line
from app.display.text_search import IndexSearch, haystack

CHECKPOINT = 500


@dataclass
class AgentState:
    name: str
    color: str | None = None
    agent_type: str | None = None
    status: str = "idle"
    detail: str = ""
    model_calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    last: str = ""


@dataclass
class TaskState:
    id: str
    subject: str
    status: str
    owner: str | None


@dataclass
class State:
    """The team after some events: what the replay's panels draw."""

    position: int = 0  # events applied
    agents: dict[str, AgentState] = field(default_factory=dict)
    tasks: dict[str, TaskState] = field(default_factory=dict)
    cost: float = 0.0
    tokens: int = 0

    def apply(self, event: Event) -> None:
        self.position += 1
        data = event.data or {}
        agent = self.agents.get(event.agent or "") if event.agent else None
        if event.agent and agent is None and event.kind in ("status", "usage", "transcript"):
            agent = self.agents[event.agent] = AgentState(event.agent)
        match event.kind:
            case "status" if agent is not None:
                agent.status = event.frame or agent.status
                agent.detail = event.text
            case "usage" if agent is not None:
                tokens = int(data.get("input", 0)) + int(data.get("output", 0))
                cost = float(data.get("cost_usd") or 0.0)
                agent.model_calls += 1
                agent.tokens += tokens
                agent.cost += cost
                self.tokens += tokens
                self.cost += cost
            case "transcript" if agent is not None:
                if event.frame == "tool_call":
                    agent.last = f"calling {event.target}"
                elif event.frame == "assistant":
                    agent.last = event.text.splitlines()[0][:80] if event.text else ""
            case "task":
                task_id = event.target or "?"
                if event.frame == "deleted":
                    self.tasks.pop(task_id, None)
                else:
                    self.tasks[task_id] = TaskState(
                        task_id, event.text, event.frame or "pending", data.get("owner")
                    )
            case "mode":
                pass


class Replay:
    """One run's timeline with random access to the state at any event."""

    def __init__(self, run: RunSummary, events: list[Event], agents: list[dict[str, object]]):
        self.run = run
        self.events = events
        self.times = [e.at for e in events]
        self.messages = [i for i, e in enumerate(events) if e.kind == "message"]
        self.by_agent: dict[str, list[int]] = {}
        for i, event in enumerate(events):
            if event.kind == "transcript" and event.agent:
                self.by_agent.setdefault(event.agent, []).append(i)
        base = State()
        for info in agents:
            name = str(info["name"])
            base.agents[name] = AgentState(
                name,
                color=info.get("color"),  # type: ignore[arg-type]
                agent_type=info.get("agent_type"),  # type: ignore[arg-type]
                status="not started",
            )
        self._checkpoints: list[State] = [copy.deepcopy(base)]
        state = base
        for i, event in enumerate(events, 1):
            state.apply(event)
            if i % CHECKPOINT == 0:
                self._checkpoints.append(copy.deepcopy(state))
        self.final = state

    @classmethod
    def load(cls, conn: sqlite3.Connection, ref: str) -> Replay:
        run = query.resolve_run(conn, ref)
        events = list(query.events(conn, run.id))
        return cls(run, events, query.agents(conn, run.id))

    def __len__(self) -> int:
        return len(self.events)

    def state_at(self, position: int) -> State:
        """The state after the first ``position`` events."""
        position = max(0, min(position, len(self.events)))
        if position == len(self.events):
            return self.final
        checkpoint = self._checkpoints[position // CHECKPOINT]
        state = copy.deepcopy(checkpoint)
        for event in self.events[checkpoint.position : position]:
            state.apply(event)
        return state

    def feed(self, position: int, limit: int = 200) -> list[Event]:
        """The last ``limit`` messages sent before ``position``."""
        end = bisect.bisect_left(self.messages, position)
        return [self.events[i] for i in self.messages[max(0, end - limit) : end]]

    def transcript(self, agent: str, position: int, limit: int = 500) -> list[Event]:
        indexes = self.by_agent.get(agent, [])
        end = bisect.bisect_left(indexes, position)
        return [self.events[i] for i in indexes[max(0, end - limit) : end]]

    def position_at(self, when: float) -> int:
        """How many events happened at or before ``when`` (epoch seconds)."""
        return bisect.bisect_right(self.times, when)

    def time_at(self, position: int) -> float:
        if not self.events:
            return self.run.started_at
        if position <= 0:
            return self.run.started_at
        return self.events[min(position, len(self.events)) - 1].at


class Search(IndexSearch):
    """Incremental search over events (the line shown, its agent, frame type and target):
    each keystroke filters the events (see ``app.display.text_search``)."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        super().__init__(haystack(event_line(e), e.agent, e.frame, e.target) for e in events)

"""The team's state at a point of a recorded run, and its checkpoints as JSON (no Textual).

A ``State`` is what the replay's panels draw: the agents with their status and cost, the task
board, the run's totals. It is built by applying the events that change it (``STATE_KINDS``)
in order, from the state before the first event.

A checkpoint stored in the archive (``app.archive.replay_index``) is *raw*: built from the
events alone, without the run's ``agents`` rows, which the recorder may still fill in after the
checkpoint was written (an agent's colour, an agent first seen later). The replay adds them when
it reads a checkpoint (``resolve``): every agent of the run is there from the start, "not
started" until an event sets its status. In a raw state an agent no event has given a status
yet has the status ``UNSET``, so ``resolve`` can tell "never set" from "set".
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, replace
from typing import Any

from app.archive.query import Event

#: The kinds that change a ``State`` (the others only move its position).
STATE_KINDS = ("status", "usage", "transcript", "task")
#: A raw state's status for an agent that no event has given one (an event never sets an empty
#: status: ``State.apply`` keeps the old one for an empty frame).
UNSET = ""


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

    def copy(self) -> State:
        """An independent copy (a task's state is replaced, never changed, so it is shared)."""
        agents = {name: copy.copy(agent) for name, agent in self.agents.items()}
        return State(self.position, agents, dict(self.tasks), self.cost, self.tokens)

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


def apply_raw(state: State, event: Event) -> None:
    """``state.apply(event)`` on a raw state: an agent met for the first time starts ``UNSET``
    (``State.apply`` would start it "idle")."""
    name = event.agent
    if name and event.kind != "task" and name not in state.agents:
        state.agents[name] = AgentState(name, status=UNSET)
    state.apply(event)


def base_state(agents: list[dict[str, Any]]) -> State:
    """The state before the first event: the run's agents (its ``agents`` rows), not started."""
    base = State()
    for info in agents:
        name = str(info["name"])
        base.agents[name] = AgentState(
            name,
            color=info.get("color"),
            agent_type=info.get("agent_type"),
            status="not started",
        )
    return base


def resolve(raw: State, base: State) -> State:
    """The state the replay shows for a raw one: ``base``'s agents (in their order) with what
    the events did to them, then the agents only the events name (in the order they came)."""
    agents = {name: copy.copy(agent) for name, agent in base.agents.items()}
    for name, got in raw.agents.items():
        known = agents.get(name)
        if known is None:
            agents[name] = replace(got, status=got.status or "idle")
        else:
            agents[name] = replace(
                got,
                color=known.color,
                agent_type=known.agent_type,
                status=got.status or known.status,
            )
    return State(raw.position, agents, dict(raw.tasks), raw.cost, raw.tokens)


def dump_state(state: State) -> str:
    """A raw state as compact JSON (lists, in order: agents and tasks keep their order; floats
    round-trip exactly)."""
    agents = [
        [a.name, a.status, a.detail, a.model_calls, a.tokens, a.cost, a.last]
        for a in state.agents.values()
    ]
    tasks = [[t.id, t.subject, t.status, t.owner] for t in state.tasks.values()]
    document = [state.position, state.cost, state.tokens, agents, tasks]
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def load_state(text: str) -> State:
    """The raw state ``dump_state`` wrote."""
    position, cost, tokens, agents, tasks = json.loads(text)
    state = State(int(position), cost=float(cost), tokens=int(tokens))
    for name, status, detail, calls, agent_tokens, agent_cost, last in agents:
        state.agents[name] = AgentState(
            name,
            status=status,
            detail=detail,
            model_calls=calls,
            tokens=agent_tokens,
            cost=agent_cost,
            last=last,
        )
    for task_id, subject, status, owner in tasks:
        state.tasks[task_id] = TaskState(task_id, subject, status, owner)
    return state

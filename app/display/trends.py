"""Look rather than read: each agent's tokens and cost over time, sampled once a second, and the
task board's progress, as values a sparkline and a bar draw (``widgets.usage_trend``).

A sample is an agent's running totals; what is drawn is what each interval added (tokens per
``bucket`` seconds), over the last ``SAMPLES`` buckets, so a burst of model calls is a peak.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.core.models import Task
from app.runtime.api import AgentSnapshot

SAMPLES = 60  # buckets kept per agent (a minute at one a second)


@dataclass(frozen=True)
class AgentTrend:
    """One agent's line: tokens added per bucket (oldest first), its totals now."""

    name: str
    color: str | None
    tokens: tuple[int, ...]
    total_tokens: int
    cost: float | None


@dataclass(frozen=True)
class Progress:
    """The task board as a bar: ``done`` of ``total`` completed."""

    done: int = 0
    total: int = 0


def agent_tokens(agent: AgentSnapshot) -> int:
    return (
        agent.input_tokens
        + agent.output_tokens
        + agent.cache_read_tokens
        + agent.cache_write_tokens
    )


class UsageHistory:
    """Running totals per agent, sampled over time; the task statuses of the board."""

    def __init__(self, samples: int = SAMPLES) -> None:
        self.samples = samples
        self._totals: dict[str, deque[int]] = {}
        self._tasks: dict[str, str] = {}

    def sample(self, agents: Iterable[AgentSnapshot]) -> None:
        """Record every agent's totals now (called once per bucket)."""
        for agent in agents:
            totals = self._totals.setdefault(agent.name, deque(maxlen=self.samples + 1))
            totals.append(agent_tokens(agent))

    def trends(self, agents: Sequence[AgentSnapshot]) -> list[AgentTrend]:
        found = []
        for agent in agents:
            totals = list(self._totals.get(agent.name, ()))
            added = tuple(max(0, b - a) for a, b in zip(totals, totals[1:], strict=False))
            found.append(
                AgentTrend(agent.name, agent.color, added, agent_tokens(agent), agent.cost_usd)
            )
        return found

    def tasks(self, upserts: Iterable[Task], removals: Iterable[str], *, reset: bool) -> Progress:
        """Apply a store delta's task changes; the board's progress after them."""
        if reset:
            self._tasks.clear()
        for task in upserts:
            self._tasks[task.id] = str(task.status)
        for task_id in removals:
            self._tasks.pop(task_id, None)
        return self.progress()

    def progress(self) -> Progress:
        statuses = list(self._tasks.values())
        return Progress(sum(s == "completed" for s in statuses), len(statuses))

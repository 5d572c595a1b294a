"""The replay's trends (``widgets.usage_trend``): each agent's tokens over the run up to the
position shown, and the board's progress there. The run is cut into ``POINTS`` equal stretches
of events; the team's state at each cut is read once (``Replay.state_at``) and kept, so playing
and scrubbing cost one state per cut at most."""

from __future__ import annotations

from app.archive.replay import Replay, State
from app.display.trends import AgentTrend, Progress

POINTS = 40


class ReplayTrends:
    def __init__(self, replay: Replay, points: int = POINTS) -> None:
        self.replay = replay
        self.points = points
        self._tokens: dict[int, dict[str, int]] = {}

    def _at(self, position: int) -> dict[str, int]:
        if position not in self._tokens:
            state = self.replay.state_at(position)
            self._tokens[position] = {a.name: a.tokens for a in state.agents.values()}
        return self._tokens[position]

    def values(self, position: int, state: State) -> tuple[list[AgentTrend], Progress]:
        """The trends at ``position``, whose state (``state``) the caller has read already."""
        count = len(self.replay)
        cuts = sorted({round(i * count / self.points) for i in range(self.points + 1)})
        samples = [self._at(cut) for cut in cuts if cut < position]
        samples.append({a.name: a.tokens for a in state.agents.values()})
        trends = []
        for agent in state.agents.values():
            totals = [s.get(agent.name, 0) for s in samples]
            added = tuple(max(0, b - a) for a, b in zip(totals, totals[1:], strict=False))
            trends.append(AgentTrend(agent.name, agent.color, added, agent.tokens, agent.cost))
        tasks = list(state.tasks.values())
        done = sum(t.status == "completed" for t in tasks)
        return trends, Progress(done, len(tasks))

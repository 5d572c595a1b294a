"""The roster's digits follow the crew's order (lead 0, teammates 1-9 in spawn order): a
teammate that leaves keeps its place. Teammates adopted by ``teamdeck attach`` start at their
``joinedAt`` (milliseconds), which three spawns of one response may share: the ones that left
moved behind the others, and after a leave -> attach -> finish the researcher was 2 and the
analyst 1 (issue 30, M7 pass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from app.runtime.api import AgentSnapshot
from app.runtime.runners.base import Runner
from app.runtime.team.crew import Crew


@dataclass
class _Spec:
    name: str


class _Runner:
    def __init__(self, name: str, started_at: float) -> None:
        self.spec = _Spec(name)
        self.snap = AgentSnapshot(name, None, "running", started_at=started_at)

    def snapshot(self) -> AgentSnapshot:
        return self.snap


def _runner(name: str, started_at: float) -> Runner:
    return cast(Runner, _Runner(name, started_at))


def test_teammates_that_joined_in_one_millisecond_keep_their_order_as_they_leave() -> None:
    crew = Crew()
    runners = [_runner(name, 1795968238.658) for name in ("researcher", "analyst", "writer")]
    for runner in runners:
        crew.add(runner)
    order: list[list[str]] = [[s.name for s in crew.snapshots()]]
    for runner in (runners[1], runners[0], runners[2]):  # analyst leaves first
        assert crew.left(runner)
        order.append([s.name for s in crew.snapshots()])
    assert all(names == ["researcher", "analyst", "writer"] for names in order), order


def test_the_start_time_still_orders_teammates_added_out_of_order() -> None:
    crew = Crew()
    crew.add(_runner("late", 20.0))
    crew.add(_runner("early", 10.0))
    assert [s.name for s in crew.snapshots()] == ["early", "late"]

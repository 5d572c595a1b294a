"""The views' beat (``app.dashboard.view_beat``): a quiet team's change is shown at once, a busy
team's changes are applied together at most about once a gap, in order, and none is lost."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.dashboard.view_beat import ViewBeat


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(gap: float = 0.1) -> tuple[ViewBeat[int], list[list[int]], Clock]:
    applied: list[list[int]] = []
    clock = Clock()
    return ViewBeat(gap, applied.append, clock), applied, clock


def test_a_quiet_teams_change_is_applied_at_once() -> None:
    beat, applied, clock = make()
    beat.store(1)
    assert applied == [[1]]
    clock.now += 0.5
    beat.runtime()  # a runtime event after a quiet spell: flushed at once too
    assert applied == [[1], []]


def test_a_burst_waits_for_the_next_tick_and_comes_in_order() -> None:
    beat, applied, clock = make()
    beat.store(1)
    clock.now += 0.01
    beat.store(2)
    beat.runtime()
    clock.now += 0.01
    beat.store(3)
    assert applied == [[1]] and beat.kept == 2  # drawn once so far
    clock.now += 0.08
    beat.tick()
    assert applied == [[1], [2, 3]] and beat.kept == 0


def test_a_tick_right_after_a_prompt_beat_waits_for_the_next() -> None:
    beat, applied, clock = make()
    beat.store(1)
    clock.now += 0.02
    beat.store(2)
    beat.tick()  # 20 ms after the last beat: not yet
    assert applied == [[1]]
    clock.now += 0.1
    beat.tick()
    assert applied == [[1], [2]]


@given(st.lists(st.tuples(st.sampled_from(["store", "runtime", "tick"]), st.floats(0, 0.3))))
def test_every_delta_is_applied_once_in_order(steps: list[tuple[str, float]]) -> None:
    beat, applied, clock = make()
    stored = 0
    for what, wait in steps:
        clock.now += wait
        if what == "store":
            stored += 1
            beat.store(stored)
        elif what == "runtime":
            beat.runtime()
        else:
            beat.tick()
        since = [b for b in applied if b]
        assert len(applied) <= 1 + sum(1 for _ in steps)  # never more beats than calls
        assert [d for b in since for d in b] + list(range(stored - beat.kept + 1, stored + 1)) == (
            list(range(1, stored + 1))
        )
    clock.now += 1
    beat.tick()
    assert [d for b in applied for d in b] == list(range(1, stored + 1))

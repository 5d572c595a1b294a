"""The views' beat (``app.dashboard.view_beat``): a quiet team's change is shown at once, a busy
team's changes are applied together, about once a gap at most, in order, and none is lost."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from app.dashboard.view_beat import BURST, HOLD_LIMIT, MAX_WAIT, SHARE, ViewBeat

GAP = 0.1


class Clock:
    """The time, and the timers set (``advance`` fires those that come due)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def __call__(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> None:
        assert delay > 0  # a Textual timer set for 0 or less spins the loop forever
        self.timers.append((self.now + delay, callback))

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while due := sorted((t for t in self.timers if t[0] <= end), key=lambda t: t[0]):
            self.timers.remove(due[0])
            self.now = due[0][0]
            due[0][1]()
        self.now = end


def make(*, events: bool = True) -> tuple[ViewBeat[int], list[list[int]], Clock]:
    """A beat whose ``apply`` records what it got. It drew something if it got deltas, or
    always with ``events`` (the runtime's events: ``runtime()`` and ``tick()`` stand for them)."""
    applied: list[list[int]] = []
    clock = Clock()

    def apply(kept: list[int]) -> bool:
        applied.append(kept)
        return events or bool(kept)

    return ViewBeat(GAP, apply, clock.schedule, clock), applied, clock


def test_a_quiet_teams_changes_are_applied_at_once() -> None:
    beat, applied, clock = make()
    beat.store(1)
    assert applied == [[1]]
    clock.advance(0.5)
    beat.runtime()  # a runtime event after a quiet spell: flushed at once too
    assert applied == [[1], []]
    for delta in (2, 3, 4):  # a message now and then
        clock.advance(GAP)
        beat.store(delta)
        assert applied[-1] == [delta]


def test_a_burst_is_applied_together_when_the_next_beat_is_available() -> None:
    beat, applied, clock = make()
    beat.store(1)
    clock.advance(0.005)
    beat.store(2)  # the second beat of a burst
    assert applied == [[1], [2]]
    for delta in (3, 4, 5):
        clock.advance(0.005)
        beat.store(delta)
    beat.runtime()
    assert applied == [[1], [2]] and beat.kept == 3
    assert len(clock.timers) == 1  # one timer for the rest of the burst
    clock.advance(GAP)
    assert applied == [[1], [2], [3, 4, 5]] and beat.kept == 0


def test_a_beat_that_drew_nothing_holds_no_change_back() -> None:
    beat, applied, clock = make(events=False)
    for _ in range(5):
        beat.tick()  # the interval, with nothing to draw
    beat.store(1)
    beat.store(2)
    assert applied[-2:] == [[1], [2]]  # at once: the empty ticks took no beat


def test_the_interval_draws_streamed_text_without_a_prompt() -> None:
    beat, applied, clock = make()
    beat.tick()
    beat.tick()
    beat.tick()  # two beats in a row at most
    assert applied == [[], []]
    clock.advance(GAP)
    beat.tick()
    assert applied == [[], [], []]


def test_a_key_press_holds_the_teams_changes_until_its_frame() -> None:
    beat, applied, clock = make()
    beat.hold(0.05)
    beat.store(1)
    beat.runtime()
    beat.tick()
    assert applied == [] and beat.kept == 1
    clock.advance(0.049)
    assert applied == []
    clock.advance(0.001)
    assert applied == [[1]]


def test_keys_held_down_do_not_hold_the_team_back() -> None:
    clock = Clock()
    waited: list[float] = []
    stored: dict[int, float] = {}

    def apply(kept: list[int]) -> bool:
        waited.extend(clock.now - stored[d] for d in kept)
        return bool(kept)

    beat = ViewBeat(GAP, apply, clock.schedule, clock)
    for n in range(40):  # a key every 30 ms, each holding for 50, and a change after each
        beat.hold(0.05)
        stored[n] = clock.now
        beat.store(n)
        clock.advance(0.03)
    clock.advance(1)
    assert len(waited) == 40 and max(waited) <= HOLD_LIMIT + 1e-9


def test_while_keys_follow_each_other_the_teams_changes_are_drawn_after_each_keys_frame() -> None:
    """A key every 100 ms and a change of the team's every 10 ms: one beat after each key's
    hold, none between two keys (a frame the next key would wait behind); once the keys stop,
    the team's beats go on."""
    beat, applied, clock = make(events=False)
    beats: list[float] = []
    apply = beat._apply
    beat._apply = lambda kept: bool(beats.append(clock.now) or apply(kept))  # type: ignore[func-returns-value]
    delta = 0
    keys = [clock.now + 0.1 * k for k in range(10)]
    for _key in keys:
        beat.hold(0.05)
        for _ in range(10):
            delta += 1
            beat.store(delta)
            clock.advance(0.01)
    assert [round(t - k, 9) for t, k in zip(beats, keys, strict=True)] == [0.05] * 10
    clock.advance(1)
    assert [d for b in applied for d in b] == list(range(1, delta + 1))
    delta += 1
    beat.store(delta)  # no key for a while: at once again
    assert applied[-1] == [delta]


def test_a_beat_that_took_long_to_draw_makes_the_next_wait_in_proportion() -> None:
    """The time budget: a beat whose changes took four times ``SHARE`` of a gap to reach the
    screen costs four tokens; a cheap one costs one (the next is drawn at once)."""
    beat, applied, clock = make()
    beat.store(1)
    beat.spent(SHARE * GAP / 2)  # a cheap frame
    beat.store(2)  # the burst's second token: at once
    assert applied == [[1], [2]]
    clock.advance(1.0)  # quiet: the bucket is full again
    beat.store(3)
    beat.spent(SHARE * GAP * 4)
    beat.store(4)
    assert applied[-1] == [3] and beat.kept == 1  # waits three gaps more than it would
    clock.advance(3 * GAP - 0.001)
    assert applied[-1] == [3]
    clock.advance(0.002)
    assert applied[-1] == [4] and beat.kept == 0


def test_however_long_a_beat_took_the_next_waits_at_most_max_wait() -> None:
    beat, applied, clock = make()
    beat.store(1)
    beat.spent(60.0)  # a machine stalled for a minute
    beat.store(2)
    clock.advance(MAX_WAIT + 0.001)
    assert applied == [[1], [2]]


@given(
    st.lists(
        st.tuples(st.sampled_from(["store", "runtime", "tick", "hold", "after"]), st.floats(0, 0.3))
    )
)
def test_every_delta_is_applied_once_in_order_about_once_a_gap(
    steps: list[tuple[str, float]],
) -> None:
    beat, applied, clock = make()
    start = clock.now
    stored = 0
    asked: list[float] = []
    ran: list[tuple[float, float]] = []
    for what, wait in steps:
        clock.advance(wait)
        if what == "store":
            stored += 1
            beat.store(stored)
        elif what == "runtime":
            beat.runtime()
        elif what == "hold":
            beat.hold(0.05)
        elif what == "after":
            asked.append(clock.now)
            beat.after_keys(lambda at=clock.now: ran.append((at, clock.now)))
        else:
            beat.tick()
        done = [d for b in applied for d in b]
        assert done == list(range(1, stored - beat.kept + 1))  # in order, each once so far
        assert not beat.kept or clock.timers  # what waits has a beat coming
        assert len(applied) <= BURST + (clock.now - start) / GAP + 1e-6  # the cap
        if beat.kept:  # waiting at most a gap, or what keys may hold it back
            assert min(t for t, _ in clock.timers) <= clock.now + max(GAP, HOLD_LIMIT) + 1e-9
    clock.advance(1)
    assert [d for b in applied for d in b] == list(range(1, stored + 1))
    assert [at for at, _ in ran] == asked  # each redraw once, in order
    assert all(done - at <= HOLD_LIMIT + 1e-9 for at, done in ran)


def test_the_apps_own_redraw_waits_for_the_keys_beat_as_the_teams_changes_do() -> None:
    """``after_keys``: at once with no key pressed; during a key's hold, with the key's beat,
    in the same turn as the team's changes; while keys follow each other, with the next key's
    beat; never later than ``HOLD_LIMIT``."""
    beat, applied, clock = make(events=False)
    order: list[object] = []
    apply = beat._apply
    beat._apply = lambda kept: bool(order.append(kept) or apply(kept))  # type: ignore[func-returns-value]
    beat.after_keys(lambda: order.append("tick"))
    assert order == ["tick"]
    clock.advance(1)
    beat.hold(0.05)
    beat.store(1)
    beat.after_keys(lambda: order.append("tick"))
    assert order == ["tick"]
    clock.advance(0.05)
    assert order == ["tick", [1], "tick"]  # after the key's hold, with its beat
    beat.after_keys(lambda: order.append("tick"))  # between two keys: waits for the next
    clock.advance(0.05)
    assert order[-1] == "tick" and len(order) == 3
    beat.hold(0.05)
    clock.advance(0.05)
    assert order[-1] == "tick" and len(order) == 4  # after the next key's hold
    beat.hold(0.05)
    beat.store(2)
    clock.advance(0.05)
    assert order[-1] == [2]
    beat.after_keys(lambda: order.append("late"))  # no key comes: HOLD_LIMIT after the last
    clock.advance(HOLD_LIMIT - 0.05 - 0.001)
    assert "late" not in order
    clock.advance(0.001)
    assert order[-1] == "late"


def test_a_key_that_comes_when_a_beat_is_overdue_sets_no_timer_for_the_past() -> None:
    """On a loaded machine a timer fires late: a key then comes with a beat already due (what
    waits has waited its ``HOLD_LIMIT``); the beat is scheduled a moment ahead, not for a past
    time (a Textual timer set for no time or less spins the loop forever), and so is a redraw
    kept for the keys."""
    beat, applied, clock = make()
    beat.hold(0.05)
    beat.store(1)
    beat.after_keys(lambda: applied.append([-1]))
    clock.now += HOLD_LIMIT + 0.5  # the timers are late
    beat.hold(0.05)  # Clock.schedule asserts every delay is ahead
    clock.advance(0.01)
    assert applied == [[1], [-1]]

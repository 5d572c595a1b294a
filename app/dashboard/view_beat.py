"""One beat for what the team does: file changes and runtime events reach the views together,
about once a ``gap`` at most while the team is busy (no Textual).

A working team changes something many times a second: the store re-reads an inbox, a teammate's
status or counters move, the lead's transcript grows. Each change applied on its own was a frame
of its own (bench/live.py counted ~24 a second with 8 teammates at pace 0, at 6-10 ms of the
event loop each), and a key press waited behind them. The eye needs far fewer: so store deltas
and runtime flushes are applied in one go, on a beat.

The beats are paced like a token bucket: one beat per ``gap`` on average, up to ``BURST`` in a
row after a quiet spell. A quiet team's change (a message now and then) is drawn at once; only a
team that changes things faster than that waits, at most until the next token.

* ``store(delta)`` and ``runtime()`` (a runtime event asks for a prompt flush): applied at once
  if a beat is available, else kept for when the next one is (``schedule``: one timer at a
  time).
* ``tick()`` (the app's interval, every ``gap``): applies what is kept, and the runtime's
  streamed text (which asks for no prompt flush).
* ``after_keys(callback)``: the app's once-a-second redraw (elapsed times, the trend's sample:
  a frame of ~10-20 ms with 25 teammates) keeps out of the keys' way as the team's beats do.

* ``hold(seconds)``: input first. A key was pressed: what it changes is drawn on a frame of its
  own, and the team's changes wait until then (``seconds`` at most). A key that came while a
  beat's changes were being drawn waited for that whole frame too (bench/live.py's
  ``keypress`` row: a frame with the team's changes costs several times one with a key's).
  Then one beat draws what waited, and while keys follow each other (within ``HOLD_LIMIT``)
  the team's next changes wait for the next key's beat: drawn right after a key's frame, a
  beat's frame is over before the next key comes, where one drawn between two keys was what
  the slowest presses waited behind. Changes are never held more than ``HOLD_LIMIT`` in all:
  keys held down do not hold the team's drawing back.

* ``spent(seconds)``: a time budget for the team's drawing. The app says how much of the
  loop's CPU a beat's changes took to reach the screen (applied, laid out, drawn). A beat that
  took more than ``SHARE`` of a gap costs more than one token, in proportion, so the team's
  drawing keeps to about that share of the loop and the rest is the person's: a frame of a
  busy team's changes can take tens of ms, ten times a second, and a key waits behind them.
  A beat's frame of a few ms changes nothing. The next beat never waits more than
  ``MAX_WAIT``.

Deltas are applied in the order they came, each exactly once; nothing is dropped. A beat that
had nothing to draw costs no token.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

D = TypeVar("D")

BURST = 2.0
"""Beats available at once after a quiet spell."""
SHARE = 0.3
"""The share of the loop's time the team's drawing may take (``spent``)."""
MAX_WAIT = 0.5
"""Seconds an expensive beat may make the next one wait, at most (``spent``)."""
HOLD_LIMIT = 0.2
"""Seconds the keys may hold a change back, at most (``hold``)."""
MIN_DELAY = 0.001
"""Seconds a timer is set for, at least (``_timer``)."""
_ONE = 1 - 1e-9  # a whole beat, give or take the clock's rounding


class ViewBeat(Generic[D]):
    """See the module docstring. ``apply`` takes the kept store deltas (in order) and then
    flushes the runtime's events (the app wraps both in one ``batch_update``); it says whether
    there was anything to draw."""

    def __init__(
        self,
        gap: float,
        apply: Callable[[list[D]], bool],
        schedule: Callable[[float, Callable[[], None]], object],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.gap = gap
        self._apply = apply
        self._schedule = schedule
        self._clock = clock
        self._kept: list[D] = []
        self._tokens = BURST
        self._at = clock()  # when ``_tokens`` was counted
        self._timer_at: float | None = None  # when the earliest beat scheduled is due
        self._held_until = 0.0  # no beat before this (``hold``)
        self._key_at: float | None = None  # the last key press (``hold``)
        self._beat_after_key = False  # the last key's beat was drawn
        self._since: float | None = None  # when what waits for a beat began waiting
        self._after: list[Callable[[], None]] = []  # ``after_keys``' callbacks, waiting
        self._after_since = 0.0  # since when the first of them waits

    @property
    def kept(self) -> int:
        """Store deltas waiting for the next beat."""
        return len(self._kept)

    def store(self, delta: D) -> None:
        self._kept.append(delta)
        self.runtime()

    def runtime(self) -> None:
        """Something to draw: now if a beat is available, else when the next one is."""
        now = self._clock()
        if self._since is None:
            self._since = now
        due = self._due(now)
        if due <= now:
            self.beat()
        else:
            self._at_time(now, due)

    def tick(self) -> None:
        """The interval: apply what is kept and what streamed, if a beat is available."""
        if self._due(self._clock()) <= self._clock():
            self.beat()

    def hold(self, seconds: float) -> None:
        """A key was pressed: no beat for ``seconds``, then one (``HOLD_LIMIT`` in all)."""
        now = self._clock()
        self._key_at = now
        self._beat_after_key = False
        self._held_until = max(self._held_until, now + seconds)
        if self._since is not None:  # what waits: the beat after this key's frame
            self._at_time(now, self._due(now))
        if self._after:  # and the app's redraw
            self._timer(self._free_at(now) - now, self._call_after)

    def after_keys(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (a redraw of the app's own, e.g. once a second) now, or while keys
        follow each other with the next beat, like the team's changes (``HOLD_LIMIT`` at
        most); not held back by the time budget."""
        now = self._clock()
        if self._free_at(now) <= now:
            callback()
            return
        if not self._after:
            self._after_since = now
        self._after.append(callback)
        self._timer(self._free_at(now) - now, self._call_after)

    def _free_at(self, now: float) -> float:
        """When what ``after_keys`` keeps may run (the beat's wait without its tokens)."""
        until = self._held_until
        if self._key_at is not None and self._beat_after_key:
            until = max(until, self._key_at + HOLD_LIMIT)
        return min(until, (self._after_since if self._after else now) + HOLD_LIMIT)

    def spent(self, seconds: float) -> None:
        """The last beat's changes took ``seconds`` to reach the screen: beyond ``SHARE`` of a
        gap, the beat costs that many gaps' tokens more (the next one waits that much longer,
        ``MAX_WAIT`` at most)."""
        extra = seconds / (SHARE * self.gap) - 1
        if extra > 0:
            self._available()
            self._tokens = max(1 - MAX_WAIT / self.gap, self._tokens - extra)

    def beat(self) -> None:
        """Apply everything now."""
        kept, self._kept = self._kept, []
        self._since = None
        if self._apply(kept):
            self._available()
            self._tokens -= 1
            self._beat_after_key = True
        self._run_after()

    def _call_after(self) -> None:  # ``after_keys``' timer: a key's hold may have ended
        now = self._clock()
        if self._after and self._free_at(now) <= now + 1e-9:
            self._run_after()

    def _run_after(self) -> None:
        callbacks, self._after = self._after, []
        for callback in callbacks:
            callback()

    def _due(self, now: float) -> float:
        """When the next beat may be: a token, after the key's hold and, while keys follow
        each other, after the next key's (what waits is held ``HOLD_LIMIT`` at most)."""
        tokens = now + max(0.0, (1 - self._available()) * self.gap)
        held = self._held_until
        if self._key_at is not None and self._beat_after_key:
            held = max(held, self._key_at + HOLD_LIMIT)  # until the next key's beat
        if self._since is not None:
            held = min(held, self._since + HOLD_LIMIT)
        return max(tokens, held)

    def _at_time(self, now: float, due: float) -> None:
        """A beat at ``due``, unless one is scheduled before (one is enough)."""
        if self._timer_at is None or due < self._timer_at - 1e-9:
            self._timer_at = due
            self._timer(due - now, lambda: self._scheduled(due))

    def _timer(self, delay: float, callback: Callable[[], None]) -> None:
        """``schedule``, never with a delay of zero or less: a Textual timer set so (a beat
        due already, its timer late on a loaded machine) spins the loop forever."""
        self._schedule(max(delay, MIN_DELAY), callback)

    def _scheduled(self, due: float) -> None:  # a beat may be available now
        if self._timer_at == due:
            self._timer_at = None
        if self._since is not None:  # (a timer replaced by an earlier one finds nothing)
            self.runtime()

    def _available(self) -> float:
        now = self._clock()
        self._tokens = min(BURST, self._tokens + (now - self._at) / self.gap)
        self._at = now
        return self._tokens

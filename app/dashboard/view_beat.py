"""One beat for what the team does: file changes and runtime events reach the views together,
at most about once a ``gap`` (no Textual).

A working team changes something many times a second: the store re-reads an inbox, a teammate's
status or counters move, the lead's transcript grows. Each change applied on its own was a frame
of its own (bench/live.py counted ~24 a second with 8 teammates at pace 0, at 6-10 ms of the
event loop each), and a key press waited behind them. The eye needs far fewer: so store deltas
and runtime flushes are applied in one go, on a beat.

* ``store(delta)`` and ``runtime()`` (a runtime event asks for a prompt flush): applied at once
  if nothing was applied for a ``gap`` (a quiet team shows a change without delay), else kept
  for the next beat.
* ``tick()`` (the app's interval, every ``gap``): applies what is kept.

Deltas are applied in the order they came, each exactly once; nothing is dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

D = TypeVar("D")


class ViewBeat(Generic[D]):
    """See the module docstring. ``apply`` takes the kept store deltas (in order) and then
    flushes the runtime's events; the app wraps it in one ``batch_update``."""

    def __init__(
        self,
        gap: float,
        apply: Callable[[list[D]], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.gap = gap
        self._apply = apply
        self._clock = clock
        self._kept: list[D] = []
        self._last = float("-inf")

    @property
    def kept(self) -> int:
        """Store deltas waiting for the next beat."""
        return len(self._kept)

    def store(self, delta: D) -> None:
        self._kept.append(delta)
        if self._due(self.gap):
            self.beat()

    def runtime(self) -> None:
        if self._due(self.gap):
            self.beat()

    def tick(self) -> None:
        """The interval: apply what is kept (unless a prompt beat just did, half a gap ago
        at most: the next tick comes soon enough)."""
        if self._due(self.gap / 2):
            self.beat()

    def beat(self) -> None:
        """Apply everything now."""
        self._last = self._clock()
        kept, self._kept = self._kept, []
        self._apply(kept)

    def _due(self, gap: float) -> bool:
        return self._clock() - self._last >= gap

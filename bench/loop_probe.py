"""What the dashboard's loop was doing when it was late: bench/live.py ``--sizes ... --probe``.

A watchdog thread looks at the loop thread's stack (``sys._current_frames``) every millisecond
while the loop's heartbeat (a 5 ms sleep) is more than ``LATE`` overdue, and counts the samples
by what the stack shows: a frame being drawn, the team's beat being applied, a layout, a garbage
collection, the runtime's or the core's code on the loop, Textual's messages, or a wait (the
loop in ``select`` or waking up: the machine or another thread had the CPU or the interpreter).
The report is the share of the late samples per kind and the innermost frames of the most
frequent stacks: where the lag p99 comes from, and so what to cut next.

Sampling takes the interpreter lock too, and only when the loop is late: the figures of a run
with the probe are not the run's figures without it (they are printed, not compared).
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from collections import Counter
from types import FrameType
from typing import Any

LATE = 0.03
"""Seconds overdue after which the loop counts as late."""
HEARTBEAT = 0.005
KINDS: list[tuple[str, str]] = [  # the first found, from the loop's outermost frame inwards
    ("view_beat.py", "team beat (applied)"),
    ("_refresh_layout", "layout"),
    ("_on_timer_update", "frame"),
    ("/app/runtime/", "runtime on the loop"),
    ("/app/core/", "core on the loop"),
    ("store_feeder", "store"),
    ("_dispatch_message", "Textual messages"),
    ("/textual/", "Textual, other"),
]
WAITS = ("selectors.py:select", "_read_from_self", "_write_to_self")


class LoopProbe:
    """Start it on the loop to watch (``start``), ``stop`` it, then ``report()``."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.stacks: Counter[str] = Counter()
        self._beat = time.perf_counter()
        self._thread: int | None = None
        self._on = False
        self._in_gc = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._thread = threading.get_ident()
        self._on = True
        self._task = asyncio.get_running_loop().create_task(self._heartbeat())
        gc.callbacks.append(self._gc)
        threading.Thread(target=self._watch, name="loop-probe", daemon=True).start()

    def stop(self) -> None:
        self._on = False
        if self._task is not None:
            self._task.cancel()
        if self._gc in gc.callbacks:
            gc.callbacks.remove(self._gc)

    async def _heartbeat(self) -> None:
        while True:
            self._beat = time.perf_counter()
            await asyncio.sleep(HEARTBEAT)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if threading.get_ident() == self._thread:
            self._in_gc = phase == "start"

    def _watch(self) -> None:
        while self._on:
            time.sleep(0.001)
            if time.perf_counter() - self._beat < HEARTBEAT + LATE:
                continue
            frame = sys._current_frames().get(self._thread or 0)
            if frame is not None:
                kind, names = self._kind(frame)
                self.kinds[kind] += 1
                self.stacks[f"{kind}: " + " <- ".join(names[:4])] += 1

    def _kind(self, frame: FrameType) -> tuple[str, list[str]]:
        names: list[str] = []
        at: FrameType | None = frame
        while at is not None:
            names.append(f"{at.f_code.co_filename}:{at.f_code.co_name}")
            at = at.f_back
        short = [_short(n) for n in names]
        if self._in_gc:
            return "garbage collection", short
        if any(w in n for n in names[:2] for w in WAITS):
            return "waiting (CPU or interpreter)", short
        for part, kind in KINDS:
            if any(part in n for n in reversed(names)):
                return kind, short
        return "other", short

    def report(self, stacks: int = 8) -> str:
        total = sum(self.kinds.values())
        if not total:
            return "  the loop was never late"
        lines = [f"  the loop late ({total} samples of 1 ms):"]
        lines += [f"    {n / total:6.1%}  {kind}" for kind, n in self.kinds.most_common()]
        lines.append("  most frequent stacks (innermost first):")
        lines += [f"    {n:5d}  {stack[:160]}" for stack, n in self.stacks.most_common(stacks)]
        return "\n".join(lines)


def _short(name: str) -> str:
    """``…/site-packages/textual/screen.py:_refresh_layout`` -> ``textual/screen.py:…``; the
    project's files from its root; the standard library's by their file's name."""
    path, _, func = name.rpartition(":")
    for cut in ("/site-packages/", "/td-sign/", "/main/"):
        if cut in path:
            return f"{path.split(cut, 1)[1]}:{func}"
    return f"{path.rsplit('/', 1)[-1]}:{func}"

"""bench/live.py's key-press row: the dashboard while 8 in-process teammates work.

The real ``TeamDeckApp`` (headless ``run_test``, 120x40) drives a ``TeamRuntime`` on the
offline model at pace 0: its teammates are Textual workers on the app's loop, as in the
dashboard. Once they work, ``shift+down`` (select the next agent) is handed to the app every
80-120 ms exactly as the terminal driver hands it a key; latency = that moment -> the first
screen refresh after the selection moved (``call_after_refresh`` from the action), and the
loop thread's CPU time meanwhile (``key_cpu``: what the key waited behind and its own frame,
without the waits a loaded machine adds). A 10 ms
timer on the same loop records its lag meanwhile, and the CPU time of each screen update
(its thread's, far less sensitive to the machine's load than the latencies) is summed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from team import ACTIONS, make_workspace, pct, ticker

from app.core import Home
from app.runtime.model.client import make_client
from app.runtime.offline import export_pace
from app.runtime.offline.policies import OfflineModel
from app.runtime.scheduling import offload

TEAM = "live-keys"
MATES = 8
KEY = "shift+down"
MIN_PRESSES = 20  # keep pressing until this many, even if the team is done sooner
MAX_PRESSES = 200  # and stop after this many, even if it is not


@dataclass
class Presses:
    latencies: list[float] = field(default_factory=list)  # ms
    key_cpu: list[float] = field(default_factory=list)  # ms, the loop's CPU in each latency
    stalls: list[float] = field(default_factory=list)  # ms, the app loop's 10 ms timer
    spawn_s: float = 0.0  # spawning the whole team (the spawns overlap, as one response's)
    wall_s: float | None = None  # spawn start -> every task completed (None: not in time)
    rss_mb: float = 0.0  # the dashboard process's resident memory at the end
    frames: int = 0  # screen updates while the keys were pressed
    frame_cpu_ms: float = 0.0  # their CPU time (the loop thread's)

    def lag(self) -> tuple[float, float, float]:
        return pct(self.stalls, 0.5), pct(self.stalls, 0.99), max(self.stalls, default=0.0)

    @property
    def frame_cpu(self) -> float:
        """CPU ms per screen update (nan: none)."""
        return self.frame_cpu_ms / self.frames if self.frames else float("nan")


class FrameCounter:
    """Counts the screen updates and their CPU time into ``result`` while ``on``. Installed
    before the app starts: a screen's update timer keeps the method it was made with."""

    def __init__(self, result: Presses) -> None:
        from textual.screen import Screen

        self.on = False
        self._update = update = Screen._on_timer_update

        def counted(screen: Screen[Any]) -> None:
            if not self.on:
                return update(screen)
            began = time.thread_time()
            try:
                update(screen)
            finally:
                result.frames += 1
                result.frame_cpu_ms += (time.thread_time() - began) * 1000

        Screen._on_timer_update = counted  # type: ignore[method-assign]

    def close(self) -> None:
        from textual.screen import Screen

        Screen._on_timer_update = self._update  # type: ignore[method-assign]


async def keypresses(
    tasks: int,
    *,
    pace: str = "0",
    offloading: bool = True,
    time_limit: float = 120.0,
    mates: int = MATES,
    backend: str = "in-process",
    probe: Any = None,
) -> Presses:
    """``probe``: a ``loop_probe.LoopProbe`` to watch the loop while the keys are pressed."""
    from textual import events

    from app.dashboard.app import TeamDeckApp
    from app.dashboard.launch import runtime_factory
    from app.dashboard.screens.deck import DeckScreen
    from app.dashboard.team_source import RuntimeSource

    export_pace(pace)
    offload.set_enabled(offloading)
    result = Presses()
    root = Path(tempfile.mkdtemp(prefix="teamdeck-live-app-"))
    frames = FrameCounter(result)
    try:
        workdir = make_workspace(root)
        home = Home(root / "home")
        factory = runtime_factory(
            home,
            cwd=workdir,
            decider="lead",
            options={
                "client": make_client(handler=OfflineModel()),
                **({"teammate_backend": backend} if backend != "in-process" else {}),
            },
        )
        app = TeamDeckApp(home, RuntimeSource(factory))
        async with app.run_test(size=(120, 40)) as pilot:
            runtime: Any = app.runtime
            home.teams.create(TEAM, description="key bench", cwd=str(workdir))
            runtime.team_created(TEAM)
            board = home.tasks(TEAM)
            for i in range(1, tasks + 1):
                action = ACTIONS[(i - 1) % len(ACTIONS)]
                board.create(f"{action.capitalize()} batch {i}", f"action: {action}, **/*.py")
            await pilot.press("escape")  # leave the lead's input: keys go to the screen
            await pilot.pause(0.3)
            screen = app.screen
            assert isinstance(screen, DeckScreen), screen
            sent: list[float] = []
            sent_cpu: list[float] = []
            original = screen.action_select

            def select(step: int) -> None:
                original(step)
                t0, c0 = sent[-1], sent_cpu[-1]

                def landed() -> None:
                    result.latencies.append(_since(t0))
                    result.key_cpu.append((time.thread_time() - c0) * 1000)

                app.call_after_refresh(landed)

            screen.action_select = select  # type: ignore[method-assign]
            stop = asyncio.Event()
            tick = asyncio.create_task(ticker(result.stalls, stop))
            began = time.perf_counter()
            await asyncio.gather(
                *(
                    runtime.spawn_teammate(f"worker-{k + 1}", "Work on the task list.")
                    for k in range(mates)
                )
            )
            result.spawn_s = time.perf_counter() - began
            finished = asyncio.Event()

            async def watch_board() -> None:
                while True:  # the files, polled (a teammate process writes them too)
                    if await asyncio.to_thread(_all_done, board):
                        break
                    await asyncio.sleep(0.25)
                result.wall_s = time.perf_counter() - began
                finished.set()

            watching = asyncio.create_task(watch_board())
            rng = random.Random(5)
            deadline = time.perf_counter() + time_limit
            frames.on = True
            if probe is not None:
                probe.start()
            while time.perf_counter() < deadline:
                await asyncio.sleep(rng.uniform(0.08, 0.12))
                done = finished.is_set()
                if (done and len(result.latencies) >= MIN_PRESSES) or len(sent) >= MAX_PRESSES:
                    break
                key = events.Key(KEY, None)
                key.set_sender(app)
                sent.append(time.perf_counter())
                sent_cpu.append(time.thread_time())
                app._driver.send_message(key)  # as the terminal driver does
            frames.on = False
            if probe is not None:
                probe.stop()
            stop.set()
            await tick
            with contextlib.suppress(TimeoutError):  # the team's speed, keys or not
                await asyncio.wait_for(finished.wait(), max(0.0, deadline - time.perf_counter()))
            watching.cancel()
            for _ in range(200):  # the last key lands before the app closes
                if len(result.latencies) >= len(sent):
                    break
                await asyncio.sleep(0.01)
            result.rss_mb = _rss_mb()
            pids = [p for r in runtime.runners.values() if (p := getattr(r, "pid", None))]
            await runtime.stop()
            _kill(pids)
    finally:
        frames.close()
        offload.set_enabled(None)
        shutil.rmtree(root, ignore_errors=True)
    return result


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _kill(pids: list[int]) -> None:
    """Teammate processes outlive ``stop`` (a team left running): not a benchmark's."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def _all_done(board: Any) -> bool:
    try:
        return all(t.status == "completed" for t in board.list())
    except Exception:
        return False

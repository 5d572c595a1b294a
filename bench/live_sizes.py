"""bench/live.py ``--sizes``: the dashboard and the team's speed as the team grows.

    .venv/bin/python bench/live.py --sizes 8,25,50,100 [--backends in-process,process]
                                   [--tasks-per-teammate K] [--json] [--probe]

For each team size and each teammate mode (in-process, then process), the real dashboard
(``TeamDeckApp``, headless ``run_test``, as bench/live.py's ``keypress`` row) runs a team of
that size on ``K`` x size tasks (``--tasks-per-teammate K``: equal work per teammate, e.g. to
compare memory by size; by default 2 each and 96 at least, a run long enough that tasks/s is
the team's pace once running, not the teammate processes' start) at pace 0 while
``shift+down`` is pressed every 80-120 ms. One line per run:

* key press p95 (ms): the key handed to the app -> the screen refresh after the selection moved;
* loop lag p99 (ms): how late the dashboard loop's 10 ms timer fires;
* spawn (s): every teammate spawned (the spawns overlap, as the lead's one response's do);
* tasks/s: the tasks / (spawn start -> every task completed);
* RSS (MB): the dashboard process's resident memory at the end (each run is a process of its
  own, so this is that run's alone);
* frame (ms): CPU time per screen update while the keys were pressed (the loop thread's: much
  less sensitive to the machine's load than the latencies);
* keyCPU (ms): the loop thread's CPU time within a key press's latency, p95 (what the key
  waited behind and its own frame, without the waits a loaded machine adds);
* CPU/task (ms): the CPU time of the whole run (the dashboard process's, and each teammate
  process's read from ``/proc`` before it is ended) per task: what the team's speed is made
  of on a contended machine, and far less sensitive to the machine's load than tasks/s;
  mates (ms): the teammate processes' part of it (process mode; the dashboard's own CPU
  grows with the run's length, as it draws at its frame rate, the teammates' with the work).

``--repeat N`` runs each row N times, the backends alternating run by run (a shared machine's
load drifts: alternation puts both under the same drift). ``--offloading on`` leaves out the
baseline runs with offloading off. With ``$TEAMDECK_PROFILE_DIR`` set, teammate processes are
ended with SIGTERM (they leave the team and write their profile) instead of SIGKILL.

``--probe``: each run also prints what its loop was doing while it was late (``loop_probe``:
a watchdog thread samples the loop thread's stack), by kind, with the most frequent stacks.

The baseline, measured in the same run: the same sizes with offloading off
(``TEAMDECK_OFFLOAD=0``: every file operation on the dashboard's loop). The machine's load
average is printed beside the table (a shared machine is noisy: read the figures with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import live_app
from loop_probe import LoopProbe
from team import pct

MIN_TASKS = 96
"""Tasks of a run at least: at 8 teammates and 2 tasks each (16), a run of process teammates
was mostly their start (the interpreter and the SDK imported in each), and tasks/s said little
of the team's pace; ~96 tasks take 7-15 s at 8 teammates."""

TARGETS = "key p95 and lag p99 <= 50 ms (50 in-process, 25 process); spawn 100 <= 2 s"


@dataclass
class SizeRow:
    backend: str
    teammates: int
    tasks: int
    offloading: bool
    key_p95_ms: float
    lag_p99_ms: float
    spawn_s: float
    tasks_per_s: float | None
    rss_mb: float
    load: float  # the 1-minute load average when the run ended
    frame_cpu_ms: float = float("nan")  # CPU per screen update
    key_cpu_p95_ms: float = float("nan")  # the loop's CPU within a key press's latency, p95
    cpu_ms_per_task: float = float("nan")  # the run's CPU (dashboard + teammate processes)
    mates_cpu_ms_per_task: float = float("nan")  # the teammate processes' part (process mode)


async def size_row(
    backend: str, mates: int, tasks: int, offloading: bool, probe: bool = False
) -> SizeRow:
    """One run, in a process of its own (its RSS is this run's alone); ``probe``: what its
    loop did when late is printed (stderr, ``loop_probe``)."""
    argv = [sys.executable, __file__, backend, str(mates), str(tasks), "1" if offloading else "0"]
    argv += ["probe"] if probe else []
    child = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await child.communicate()
    return SizeRow(**json.loads(out.decode().strip().splitlines()[-1]))


async def _one_run(
    backend: str, mates: int, tasks: int, offloading: bool, probe: bool = False
) -> SizeRow:
    watch = LoopProbe() if probe else None
    ended = TeammateCPU()
    began = time.process_time()
    run = await live_app.keypresses(
        tasks, mates=mates, backend=backend, offloading=offloading, time_limit=300.0, probe=watch
    )
    cpu_s = time.process_time() - began + ended.seconds
    if watch is not None:
        mode = "offloading on" if offloading else "offloading off"
        print(f"{backend} {mates} ({mode}):\n{watch.report()}", file=sys.stderr, flush=True)
    return SizeRow(
        backend,
        mates,
        tasks,
        offloading,
        pct(run.latencies, 0.95),
        run.lag()[1],
        run.spawn_s,
        tasks / run.wall_s if run.wall_s else None,
        run.rss_mb,
        os.getloadavg()[0],
        run.frame_cpu,
        pct(run.key_cpu, 0.95),
        cpu_s * 1000 / tasks,
        ended.seconds * 1000 / tasks if backend != "in-process" else float("nan"),
    )


class TeammateCPU:
    """Wraps ``live_app._kill``: the CPU seconds of each teammate process are read from
    ``/proc/PID/stat`` just before it is ended (the fork server reaps its children, so their
    time never reaches this process's ``RUSAGE_CHILDREN``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        kill = live_app._kill

        def read_then_kill(pids: list[int]) -> None:
            self.seconds += sum(_process_cpu(pid) for pid in pids)
            if os.environ.get("TEAMDECK_PROFILE_DIR"):
                _stop_gently(pids)
            kill(pids)

        live_app._kill = read_then_kill


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of a live process (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stop_gently(pids: list[int], wait: float = 10.0) -> None:
    """SIGTERM, then wait for the processes to end (they write their profile as they do)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(Path(f"/proc/{p}/stat").exists() for p in pids):
        time.sleep(0.05)


async def curve(
    sizes: list[int],
    backends: list[str],
    per_mate: int | None,
    *,
    as_json: bool = False,
    repeat: int = 1,
    offloadings: tuple[bool, ...] = (True, False),
    probe: bool = False,
) -> int:
    runs: dict[tuple[str, int, bool], list[SizeRow]] = {}
    for mates in sizes:
        # Asked for: K each (equal work per teammate, e.g. memory by size); else at least MIN_TASKS.
        tasks = per_mate * mates if per_mate else max(MIN_TASKS, 2 * mates)
        for _ in range(repeat):  # the backends alternate: both see the same drift in load
            for backend in backends:
                for offloading in offloadings:
                    row = await size_row(backend, mates, tasks, offloading, probe)
                    runs.setdefault((backend, mates, offloading), []).append(row)
                    if not as_json:
                        print(f"  {_line(row)}", file=sys.stderr, flush=True)
    keys = sorted(runs, key=lambda k: (backends.index(k[0]), k[1], not k[2]))
    rows = [median_row(runs[key]) for key in keys]
    if as_json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    else:
        print(table(rows, repeat))
    return 0


def median_row(rows: list[SizeRow]) -> SizeRow:
    """The median of each figure of the same run repeated (one row: itself)."""
    if len(rows) == 1:
        return rows[0]
    figures: dict[str, Any] = {}
    for name, value in asdict(rows[0]).items():
        if isinstance(value, float):
            values = [v for r in rows if (v := getattr(r, name)) is not None]
            figures[name] = statistics.median(values) if values else None
        else:
            figures[name] = value
    return SizeRow(**figures)


def _line(r: SizeRow) -> str:
    speed = f"{r.tasks_per_s:.1f}" if r.tasks_per_s else "not done"
    return (
        f"{r.backend:<10} {r.teammates:>4} {'on ' if r.offloading else 'off'}  "
        f"{r.key_p95_ms:>6.0f} {r.lag_p99_ms:>6.0f} {r.spawn_s:>6.2f} {speed:>8} "
        f"{r.rss_mb:>6.0f}  {r.load:>5.2f} {r.frame_cpu_ms:>6.1f} {r.key_cpu_p95_ms:>6.0f} "
        f"{r.cpu_ms_per_task:>8.0f} {r.mates_cpu_ms_per_task:>6.0f}"
    )


def table(rows: list[SizeRow], repeat: int = 1) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    medians = f"; medians of {repeat} runs" if repeat > 1 else ""
    baseline = "; offloading off is the baseline"
    head = (
        f"{os.cpu_count()} CPUs, load average now {load}"
        f"{baseline if any(not r.offloading for r in rows) else ''}{medians}\n"
        f"{'mode':<10} {'size':>4} {'offl':<4} {'key95':>6} {'lag99':>6} {'spawn':>6} "
        f"{'tasks/s':>8} {'RSS MB':>6}  {'load':>5} {'frame':>6} {'keyCPU':>6} {'CPU/task':>8} "
        f"{'mates':>6}"
    )
    return "\n".join([head, *(_line(r) for r in rows), f"targets: {TARGETS}"])


def parse_sizes(text: str) -> list[int]:
    """``8,25,50,100`` -> [8, 25, 50, 100] (ValueError for anything else)."""
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or any(not 1 <= s <= 200 for s in sizes):
        raise ValueError(f"--sizes: team sizes from 1 to 200, comma-separated, not {text!r}")
    return sizes


def options(parsed: Any) -> dict[str, Any]:
    """What ``curve`` takes from bench/live.py's arguments."""
    return {
        "sizes": parse_sizes(parsed.sizes),
        "backends": [b for b in parsed.backends.split(",") if b],
        "per_mate": parsed.tasks_per_teammate,
        "as_json": parsed.json,
        "repeat": max(1, parsed.repeat),
        "offloadings": {"both": (True, False), "on": (True,), "off": (False,)}[parsed.offloading],
        "probe": parsed.probe,
    }


if __name__ == "__main__":  # one run (``size_row``): its row as JSON on the last line
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    logging.getLogger("app").setLevel(logging.ERROR)
    backend_arg, mates_arg, tasks_arg, offloading_arg = sys.argv[1:5]
    probing = sys.argv[5:6] == ["probe"]
    row = asyncio.run(
        _one_run(backend_arg, int(mates_arg), int(tasks_arg), offloading_arg == "1", probing)
    )
    print(json.dumps(asdict(row)))

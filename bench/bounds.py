"""Bounds under abuse: what a huge tool output, a huge task list and a flood cost.

    .venv/bin/python bench/bounds.py [--output-mb N] [--tasks N] [--archive-mb N] [--quick]
                                     [--json]

Each row against a baseline measured in the same run; the load average is printed beside them.

* ``output``: a Bash command printing ``--output-mb`` (200) MB. What reaches the model (the
  tool result's length: bounded by ``OUTPUT_MAX_CHARS``), the time, and this process's peak
  RSS growth. Baseline: the same command with its output sent to /dev/null.
* ``tasks``: ``--tasks`` (10,000) tasks on the board: the dashboard's task memory (tracemalloc:
  the store's load and the board's rows, from an empty board to 1,000 and to N tasks; the
  per-task cost shows whether it is flat), an idle teammate's claim (``claim_next``) and
  ``TaskList``'s result size. Baseline: an empty board.
* ``board``: the dashboard process (``teamdeck`` in a pseudo-terminal) showing a team of
  ``--board-tasks`` (5,000) tasks: its peak RSS once it has drawn and settled (25 s). Baseline:
  the same team with no task. Target <= 1.5x.
* ``cap``: ``TaskCreate`` beyond ``MAX_TASKS_PER_AGENT`` is refused (one agent's share).

* ``archive``: a ``--archive-mb`` (1,024) MB archive (bench/archive_gb.py: older runs
  bulk-inserted, then one run recorded through the real recorder): the run list, ``history
  show``, the replay's open and the dashboard's start, time and peak RSS. Baseline: the same
  with the recorded run alone. Recording itself is bench/archive_scale.py's.

``--quick``: a 20 MB output, 2,000 tasks (board and list), a 100 MB archive.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core import Home  # noqa: E402
from app.runtime.tools.workspace.bash import run_command  # noqa: E402
from app.runtime.tools.workspace.confinement import OUTPUT_MAX_CHARS  # noqa: E402

TEAM = "bounds"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def row_output(mb: int) -> dict[str, Any]:
    cwd = Path(tempfile.mkdtemp(prefix="teamdeck-bounds-"))
    command = f"head -c {mb}M /dev/zero | tr '\\0' 'a'"
    try:
        before = _peak_mb()
        t0 = time.perf_counter()
        result = await run_command(command, cwd, 300.0, dict(os.environ), sandbox=None)
        took = time.perf_counter() - t0
        grown = _peak_mb() - before
        t0 = time.perf_counter()
        await run_command(command + " > /dev/null", cwd, 300.0, dict(os.environ), sandbox=None)
        base = time.perf_counter() - t0
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    return {
        "row": "output",
        "measure": f"a {mb} MB Bash output: characters to the model, seconds, peak RSS growth",
        "value": f"{len(result.content):,} chars, {took:.1f} s, +{grown:.0f} MB",
        "baseline": f"output to /dev/null: {base:.1f} s",
        "target": f"<= {OUTPUT_MAX_CHARS:,} chars (+ a line saying what was cut)",
        "chars": len(result.content),
        "seconds": took,
        "rss_growth_mb": grown,
    }


def _board_memory(home: Home) -> tuple[float, int]:
    """tracemalloc bytes the dashboard's store and task board hold for the team's tasks."""
    from app.dashboard.store import Store
    from widgets.task_board import TaskBoard

    gc.collect()
    tracemalloc.start()
    store = Store(home, TEAM)
    delta = store.load()
    board = TaskBoard()
    rows = [board._row(task) for task in delta.task_upserts]  # what a row holds, per task
    gc.collect()
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del rows, store, board
    return current / 1e6, len(delta.task_upserts)


def row_tasks(count: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="teamdeck-bounds-"))
    try:
        home = Home(root / "home")
        home.teams.create(TEAM, description="bounds", cwd=str(root))
        tasks = home.tasks(TEAM)
        empty_mb, _ = _board_memory(home)
        sizes: dict[int, float] = {}
        made = 0
        for target in (1000, count):
            while made < target:
                made += 1
                tasks.create(f"Task {made}: inventory part {made}", "Inventory some files.")
            sizes[target], _ = _board_memory(home)
        t0 = time.perf_counter()
        claim = tasks.claim_next("worker-1", status="in_progress")
        claim_ms = (time.perf_counter() - t0) * 1000
        listing = json.dumps([t.model_dump(by_alias=True) for t in tasks.list()])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    per_1k = (sizes[1000] - empty_mb) * 1000 / 1000
    per_n = (sizes[count] - empty_mb) * 1000 / count
    return {
        "row": "tasks",
        "measure": f"{count:,} tasks: dashboard task memory (MB), KB per task at 1,000 / "
        f"{count:,}, a claim (ms), the list's JSON (MB)",
        "value": f"{sizes[count]:.1f} MB; {per_1k:.1f} / {per_n:.1f} KB per task; claim "
        f"{claim_ms:.0f} ms (won: {bool(claim and claim.success)}); "
        f"list {len(listing) / 1e6:.1f} MB",
        "baseline": f"empty board: {empty_mb:.2f} MB",
        "target": "KB per task flat (the same at 1,000 and N)",
        "empty_mb": empty_mb,
        "mb": sizes,
        "claim_ms": claim_ms,
    }


def row_board(count: int, settle: float = 25.0) -> dict[str, Any]:
    from archive_gb import dashboard_start

    root = Path(tempfile.mkdtemp(prefix="teamdeck-bounds-"))
    try:
        peaks = {}
        for size in (0, count):
            home = Home(root / f"home-{size}")
            home.teams.create(TEAM, description="bounds", cwd=str(root))
            tasks = home.tasks(TEAM)
            for n in range(1, size + 1):
                tasks.create(f"Task {n}: inventory part {n}", "Inventory some files.")
            _, peaks[size] = dashboard_start(home.root, settle)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ratio = peaks[count] / peaks[0]
    return {
        "row": "board",
        "measure": f"the dashboard's peak RSS showing {count:,} tasks (after {settle:.0f} s)",
        "value": f"{peaks[count]:.0f} MB ({ratio:.2f}x)",
        "baseline": f"the same team with no task: {peaks[0]:.0f} MB",
        "target": "<= 1.5x",
        "ratio": ratio,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--output-mb", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--archive-mb", type=int, default=1024)
    parser.add_argument("--board-tasks", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, to check it runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.output_mb, args.tasks, args.archive_mb, args.board_tasks = 20, 2000, 100, 2000
    from archive_gb import row_archive

    rows = [
        asyncio.run(row_output(args.output_mb)),
        row_tasks(args.tasks),
        row_board(args.board_tasks),
        row_archive(args.archive_mb),
    ]
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}")
    for r in rows:
        print(f"{r['measure']}\n    {r['value']}  | baseline: {r['baseline']}  [{r['target']}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 28, item 10: 5,000 tasks leave the dashboard's memory within 1.5x of an empty board's.

Each size runs in a process of its own (a fresh interpreter: peak RSS is the process's own,
not pytest's): the dashboard over a team of N tasks, driven headless until the board holds
every row, then its peak resident memory. A memory ratio, not a time: the load of a shared
machine does not move it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MEASURE = r"""
import asyncio, json, resource, sys
from pathlib import Path
from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.team_source import FilesSource
from widgets.task_board import TaskBoard

root, count = Path(sys.argv[1]), int(sys.argv[2])
home = Home(root)
home.teams.create("bounds", description="bounds", cwd=str(root))
if count:  # the first through the API, the rest in its shape (5,000 fsyncs take a minute)
    first = home.tasks("bounds").create("Task 1: inventory part 1", "Inventory some files.")
    folder = root / "tasks" / "bounds"
    shape = json.loads((folder / "1.json").read_text())
    for n in range(2, count + 1):
        task = dict(shape, id=str(n), subject=f"Task {n}: inventory part {n}")
        (folder / f"{n}.json").write_text(json.dumps(task))
    (folder / ".highwatermark").write_text(str(count))


async def main() -> int:
    deck = TeamDeckApp(home, FilesSource(team="bounds"), watch=False)
    async with deck.run_test(size=(120, 40)) as pilot:
        board = deck.query_one(TaskBoard)
        for _ in range(1200):
            await pilot.pause(0.05)
            if deck.loaded and board.row_count >= count:
                break
        await pilot.pause(0.5)
        return board.row_count


rows = asyncio.run(main())
print(json.dumps({"rows": rows, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def peak(root: Path, count: int) -> dict[str, int]:
    root.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(root), str(count)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_five_thousand_tasks_keep_the_dashboard_within_one_and_a_half_empty_boards(
    tmp_path: Path,
) -> None:
    empty = peak(tmp_path / "empty", 0)
    full = peak(tmp_path / "full", 5000)
    assert full["rows"] == 5000, "the board never showed every task"
    ratio = full["peak_kb"] / empty["peak_kb"]
    assert ratio <= 1.5, f"5,000 tasks: {full['peak_kb']} KB, empty: {empty['peak_kb']} KB"

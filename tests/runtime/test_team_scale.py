"""A large team on few cores: the person's process first, work proportional to what changed.

Each test counts work (nice values, wake-ups, config writes, model calls), never time.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core import Home
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Router, Script, settle, until

TEAM = "scale"


def _nice_of(pid: int) -> int:
    """The nice value of a process (``/proc/PID/stat``, field 19)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


async def test_teammate_processes_run_nicer_than_the_dashboard(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    runtime = TeamRuntime(home, cwd=project, decider="person", teammate_backend="process")
    runtimes.append(runtime)
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    for name in ("w1", "w2"):
        await runtime.spawn_teammate(name, "Wait for tasks.")
    pids = await until(
        lambda: (
            [p for r in runtime.runners.values() if (p := getattr(r, "pid", None))]
            if all(getattr(r, "pid", None) for r in runtime.runners.values())
            else None
        ),
        "the teammate processes' pids",
        within=120,
    )
    mine = os.nice(0)
    # Nicer by 10 than the dashboard, not 20: the fork server's children are not lowered twice.
    assert [_nice_of(pid) for pid in pids] == [min(19, mine + 10)] * 2


async def _idle_team(make_runtime: Any, home: Home, project: Path, size: int) -> TeamRuntime:
    """A runtime whose ``size`` in-process teammates answer every prompt with a line and idle."""
    runtime: TeamRuntime = make_runtime(Router(default=Script(then="Done.")))
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    for k in range(size):
        await runtime.spawn_teammate(f"w{k + 1}", "Wait for tasks.")
    await until(
        lambda: all(s.status == "idle" for s in runtime.snapshot()[1:]), "every teammate idle"
    )
    return runtime


async def test_a_new_task_wakes_one_idle_teammate_not_the_whole_team(
    make_runtime: Any, home: Home, project: Path
) -> None:
    runtime = await _idle_team(make_runtime, home, project, 8)
    wakes: Counter[str] = Counter()
    for name, teammate in runtime.teammates.items():
        original = teammate.wake.set

        def counted(name: str = name, original: Callable[[], None] = original) -> None:
            wakes[name] += 1
            original()

        teammate.wake.set = counted  # type: ignore[method-assign]
    tasks = home.tasks(TEAM)
    task = tasks.create("Count the files", "One task for a team of eight")
    owner = await until(lambda: tasks.get(task.id).owner, "the task claimed")  # type: ignore[union-attr]
    await until(
        lambda: all(s.status == "idle" for s in runtime.snapshot()[1:]), "the team idle again"
    )
    await settle()
    # One claimable task: one teammate woken (a second count of the same burst may wake it
    # again before its claim lands), never the other seven.
    assert set(wakes) == {owner}
    assert wakes[owner] <= 2

"""A large team on few cores: the person's process first, work proportional to what changed.

Each test counts work (nice values, wake-ups, config writes, model calls), never time.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core import Home
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import until

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
        lambda: [p for r in runtime.runners.values() if (p := getattr(r, "pid", None))]
        if all(getattr(r, "pid", None) for r in runtime.runners.values())
        else None,
        "the teammate processes' pids",
        within=120,
    )
    mine = os.nice(0)
    # Nicer by 10 than the dashboard, not 20: the fork server's children are not lowered twice.
    assert [_nice_of(pid) for pid in pids] == [min(19, mine + 10)] * 2

"""One rule for starting a task, in every teammate mode: a task blocked by an unfinished task
does not start, whoever owns it and however it is started (a claim, ``claim_next``, TaskUpdate's
``in_progress`` by its assigned owner or by the lead, ``teamdeck task update``).

Process teammates used to start a blocked task the lead had assigned to them before they were
up (their ``in_progress`` was not a claim, so nothing checked the blockers), while in-process
ones, quicker, claimed it first and were refused.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.core import Home, InboxMessage
from app.core.tasks import TaskList
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Router, Script, frames_in, until
from tests.runtime.test_runtime_api import create_team

#: Starting a teammate process on a loaded 2-core machine takes a while (a hang guard only).
GUARD = 120.0


def status_of(tasks: TaskList, task_id: str) -> str | None:
    task = tasks.get(task_id)
    return task.status if task is not None else None


@pytest.mark.parametrize("backend", ["in-process", "process"])
async def test_an_assigned_blocked_task_waits_in_every_teammate_mode(
    make_runtime: Callable[..., TeamRuntime], home: Home, backend: str
) -> None:
    """The lead assigns #2 (blocked by #1) before its teammate is up; the teammate does not
    start it, says why, and does it once told it is unblocked."""
    runtime = make_runtime(Router(team_lead=Script(then="Noted.")), teammate_backend=backend)
    await runtime.start()
    team = await create_team(runtime)
    tasks = home.tasks(team)
    tasks.create("Gather the inputs")
    tasks.create("Inventory the files", owner="researcher")
    tasks.add_dependency("1", "2")
    await runtime.spawn_teammate(
        "researcher", "Your task is #2: Inventory the files (action: inventory, files: **/*)."
    )
    idle = await until(
        lambda: frames_in(home, team, "team-lead", "idle_notification"), "idle", GUARD
    )
    assert status_of(tasks, "2") == "pending"
    assert "blocked" in str(idle[0].get("summary", "")), idle
    tasks.update("1", status="completed")
    home.mailbox(team).send(
        "researcher",
        InboxMessage(sender="team-lead", text="Task #2 is unblocked now: go ahead with it."),
    )
    await until(lambda: status_of(tasks, "2") == "completed", "task #2 done", GUARD)

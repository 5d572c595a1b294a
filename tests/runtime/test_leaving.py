"""A teammate leaving never strands a task: the lead can only assign current members, an
assignment racing a kill still ends back on the board, and a graceful shutdown tells the lead
which unfinished tasks came back (as a kill does)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from app.core import Home
from app.core.tasks import TaskList
from app.core.teams import Teams
from app.runtime.offline import ModelRequest, ResponsePlan, reply, text, tool_use
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import (
    Observer,
    Router,
    Script,
    call_tool,
    frames_in,
    inbox_of,
    member_of,
    spawn,
    start_team,
    until,
)

TEAM = "alpha"


async def started(
    make_runtime: Callable[..., TeamRuntime], router: Router
) -> tuple[TeamRuntime, Observer]:
    return await start_team(make_runtime, router, TEAM)


def left_notes(home: Home, name: str) -> list[dict[str, Any]]:
    return [
        m for m in inbox_of(home, TEAM, "team-lead") if m.get("summary") == f"{name} left the team"
    ]


async def test_the_lead_cannot_assign_a_task_to_someone_not_in_the_team(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    rt, _ = await started(make_runtime, Router(worker=Script(then="ok")))
    await spawn(rt, "worker")
    home.tasks(TEAM).create("Parse")
    content, is_error = await call_tool(
        rt.lead_session, "TaskUpdate", {"taskId": "1", "owner": "ghost"}
    )
    assert is_error
    assert content == f"'ghost' is not a member of team '{TEAM}' (members: team-lead, worker)"
    assert home.tasks(TEAM).require("1").owner is None
    # a teammate that has left is not a member either
    rt.kill("worker")
    content, is_error = await call_tool(
        rt.lead_session, "TaskUpdate", {"taskId": "1", "owner": "worker"}
    )
    assert is_error and "'worker' is not a member" in content
    task = home.tasks(TEAM).require("1")
    assert (task.owner, task.status) == (None, "pending")


async def test_an_assignment_racing_a_kill_ends_back_on_the_board(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, _ = await started(make_runtime, Router(worker=Script(then="ok")))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")
    tasks = home.tasks(TEAM)
    tasks.create("Parse")
    original = TaskList.update

    def kill_first(self: TaskList, task_id: str, *args: Any, **fields: Any) -> Any:
        if fields.get("owner") == "worker" and rt.status_of("worker") != "killed":
            # the kill lands after the lead's membership check, before its write: the
            # teammate's own return of its tasks finds nothing of this one yet
            rt.kill("worker")
        return original(self, task_id, *args, **fields)

    monkeypatch.setattr(TaskList, "update", kill_first)
    content, is_error = await call_tool(
        rt.lead_session, "TaskUpdate", {"taskId": "1", "owner": "worker", "status": "in_progress"}
    )
    assert rt.status_of("worker") == "killed"
    assert is_error
    assert content.startswith("worker left the team while task #1 was being assigned to it;")
    assert '1 task(s) were unassigned: #1 "Parse"' in content
    task = tasks.require("1")
    assert (task.owner, task.status) == (None, "pending")
    assert [t.id for t in tasks.available()] == ["1"]


async def test_an_assignment_landing_while_a_teammate_leaves_comes_back(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other order of the race: the assignment passed its checks and is written while the
    teammate is leaving (from any process): leaving removes the membership first and returns
    the tasks after, so the late write is returned too."""
    rt, _ = await started(make_runtime, Router(worker=Script(then="ok")))
    await spawn(rt, "worker")
    tasks = home.tasks(TEAM)
    tasks.create("Parse")
    original = Teams.remove_member

    def assigned_meanwhile(self: Teams, team: str, **who: Any) -> Any:
        tasks.update("1", owner="worker", status="in_progress")  # the lead's write lands now
        return original(self, team, **who)

    monkeypatch.setattr(Teams, "remove_member", assigned_meanwhile)
    rt.kill("worker")
    task = tasks.require("1")
    assert (task.owner, task.status) == (None, "pending")
    [note] = left_notes(home, "worker")
    assert '#1 "Parse"' in note["text"]


async def test_a_kill_returns_every_task_the_teammate_owns(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    rt, _ = await started(make_runtime, Router(worker=Script(then="ok")))
    await spawn(rt, "worker")
    tasks = home.tasks(TEAM)
    for subject in ("Parse", "Lex", "Done already"):
        tasks.create(subject)
        content, is_error = await call_tool(
            rt.lead_session,
            "TaskUpdate",
            {"taskId": tasks.list()[-1].id, "owner": "worker"},
        )
        assert not is_error, content
    tasks.update("3", status="completed")
    rt.kill("worker")
    assert [(t.id, t.owner, t.status) for t in tasks.list()] == [
        ("1", None, "pending"),
        ("2", None, "pending"),
        ("3", "worker", "completed"),
    ]
    [note] = left_notes(home, "worker")
    assert note["text"] == (
        'worker was terminated. 2 task(s) were unassigned: #1 "Parse", #2 "Lex". Use TaskList '
        "to check availability and TaskUpdate with owner to reassign them to idle teammates."
    )


def approve_shutdown(request: ModelRequest) -> ResponsePlan:
    found = re.search(r'\\?"requestId\\?":\s*\\?"([^"\\]+)', request.last_user_text)
    assert found, request.last_user_text
    return reply(
        text("Stopping."),
        tool_use(
            "SendMessage",
            {"type": "shutdown_response", "request_id": found.group(1), "approve": True},
        ),
    )


async def test_a_graceful_shutdown_tells_the_lead_which_tasks_came_back(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    lead = Script(then="Noted.")
    worker = Script(["Working on it.", approve_shutdown, "Bye."])
    rt, _ = await started(make_runtime, Router(worker=worker, team_lead=lead))
    tasks = home.tasks(TEAM)
    tasks.create("Parse the input")
    tasks.create("Write the output")
    tasks.update("1", owner="worker", status="in_progress")
    tasks.update("2", owner="worker")
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")

    rt.request_shutdown("worker", "time to stop")
    await until(lambda: rt.status_of("worker") == "completed", "the worker gone")
    assert member_of(home, TEAM, "worker") is None
    assert [(t.owner, t.status) for t in tasks.list()] == [(None, "pending"), (None, "pending")]
    [note] = left_notes(home, "worker")
    assert note["from"] == "worker"
    assert note["text"] == (
        'worker has shut down. 2 task(s) were unassigned: #1 "Parse the input", #2 "Write the '
        'output". Use TaskList to check availability and TaskUpdate with owner to reassign them '
        "to idle teammates."
    )
    assert frames_in(home, TEAM, "team-lead", "shutdown_approved")
    # and the lead's model reads it
    await until(
        lambda: any("were unassigned" in r.last_user_text for r in lead.requests), "the lead told"
    )


async def test_a_graceful_shutdown_with_nothing_unfinished_adds_no_message(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    worker = Script(["Nothing to do.", approve_shutdown, "Bye."])
    rt, _ = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")
    rt.request_shutdown("worker")
    await until(lambda: rt.status_of("worker") == "completed", "the worker gone")
    assert left_notes(home, "worker") == []
    assert frames_in(home, TEAM, "team-lead", "shutdown_approved")

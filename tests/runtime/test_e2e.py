"""End to end with the offline model: goal -> team -> tasks with a dependency -> three teammates
(one in plan mode) -> plan approved -> tasks completed in dependency order -> shutdown requests
-> approvals -> TeamDelete, with the files on disk checked at each step as it happens."""

from __future__ import annotations

import asyncio
import io
import json
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.cli.headless import run_team
from app.core import Home
from app.core.events import ChangeEvent, TaskChanged
from app.runtime.events import MessageSent, RuntimeEvent, StatusChanged, TeamLifecycle
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import (
    HANG_GUARD,
    Observer,
    config_of,
    frames_in,
    member_of,
    read_json,
    until,
)


def dirs(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.is_dir())


GOAL = "Describe the python files in this project"
ROLES = {"researcher": "1", "analyst": "2", "writer": "3"}


class FileChecker:
    """Asserts on the files at the moment each key event happens. A failed check is recorded
    (never raised into the runtime, which would turn it into an agent failure)."""

    def __init__(self, home: Home, runtime: TeamRuntime) -> None:
        self.home = home
        self.runtime = runtime
        self.failures: list[str] = []
        self.hit: dict[str, int] = {}
        self.team: str | None = None
        self.completed: list[str] = []
        self.spawned: list[str] = []

    def _check(self, name: str, check: Callable[[], None]) -> None:
        self.hit[name] = self.hit.get(name, 0) + 1
        try:
            check()
        except Exception:
            self.failures.append(f"{name}:\n{traceback.format_exc()}")

    # ------------------------------------------------------------------ runtime events

    def on_event(self, event: RuntimeEvent) -> None:
        if isinstance(event, TeamLifecycle):
            if event.event == "created":
                self.team = event.team
                self._check("team created", lambda: self._team_created(event.team))
            else:
                self._check("team deleted", lambda: self._team_deleted(event.team))
        elif isinstance(event, StatusChanged) and event.agent in ROLES:
            if event.status == "running" and event.agent not in self.spawned:
                self.spawned.append(event.agent)
                self._check("spawned", lambda: self._spawned(event.agent))
        elif isinstance(event, MessageSent):
            kind = event.frame_type
            if kind == "plan_approval_request":
                self._check("plan requested", lambda: self._plan_requested(event))
            elif kind == "plan_approval_response":
                self._check("plan answered", lambda: self._plan_answered(event))
            elif kind == "shutdown_request":
                self._check("shutdown requested", lambda: self._shutdown_requested(event))
            elif kind == "shutdown_approved":
                self._check("shutdown approved", lambda: self._shutdown_approved(event))

    def on_file(self, event: ChangeEvent) -> None:
        if not isinstance(event, TaskChanged) or event.team != self.team:
            return
        path = self.home.layout.task_path(event.team, event.task_id)
        if not path.exists():
            return
        task = read_json(path)
        if task["status"] == "completed" and task["id"] not in self.completed:
            self.completed.append(task["id"])
            self._check("task completed", lambda: self._task_completed(task))

    # ------------------------------------------------------------------ checks

    def _team_created(self, team: str) -> None:
        config = config_of(self.home, team)
        assert config["name"] == team
        assert config["leadAgentId"] == f"team-lead@{team}"
        assert [m["name"] for m in config["members"]] == ["team-lead"]
        assert self.home.layout.task_dir(team).is_dir()
        assert self.home.layout.inboxes_dir(team).is_dir()

    def _spawned(self, name: str) -> None:
        team = self.team
        assert team
        member = member_of(self.home, team, name)
        assert member is not None, f"{name} not in config.json"
        assert member["agentId"] == f"{name}@{team}"
        assert member["backendType"] == "in-process"
        assert member["tmuxPaneId"] == "in-process"
        assert member["planModeRequired"] is (name == "writer")
        assert member["mode"] == ("plan" if name == "writer" else "default")
        assert member["prompt"]
        # tasks and the dependency exist before anyone is spawned
        tasks = {t: self._task(t) for t in ("1", "2", "3")}
        assert tasks["3"]["blockedBy"] == ["1", "2"]
        assert "3" in tasks["1"]["blocks"] and "3" in tasks["2"]["blocks"]

    def _plan_requested(self, event: MessageSent) -> None:
        team = self.team
        assert team and event.sender == "writer" and event.recipient == "team-lead"
        frame = json.loads(event.text)
        frames = frames_in(self.home, team, "team-lead", "plan_approval_request")
        assert [f["requestId"] for f in frames] == [frame["requestId"]]
        assert frames[0]["from"] == "writer"
        assert frames[0]["planContent"].startswith("## Plan for task #3")
        # the writer is still in plan mode, holding its (blocked) task
        assert member_of(self.home, team, "writer")["mode"] == "plan"  # type: ignore[index]
        task = self._task("3")
        assert task["owner"] == "writer"
        assert task["blockedBy"] == ["1", "2"] or task["status"] != "completed"

    def _plan_answered(self, event: MessageSent) -> None:
        team = self.team
        assert team and event.sender == "team-lead" and event.recipient == "writer"
        frames = frames_in(self.home, team, "writer", "plan_approval_response")
        assert len(frames) == 1
        assert frames[0]["approved"] is True
        requests = frames_in(self.home, team, "team-lead", "plan_approval_request")
        assert frames[0]["requestId"] == requests[0]["requestId"]

    def _task_completed(self, task: dict[str, Any]) -> None:
        team = self.team
        assert team
        expected_owner = {v: k for k, v in ROLES.items()}[task["id"]]
        assert task["owner"] == expected_owner
        if task["id"] == "3":
            # dependency order: both blockers were completed before the blocked task
            assert self._task("1")["status"] == "completed"
            assert self._task("2")["status"] == "completed"
            # the writer's plan was approved: it left plan mode
            assert member_of(self.home, team, "writer")["mode"] == "default"  # type: ignore[index]

    def _shutdown_requested(self, event: MessageSent) -> None:
        team = self.team
        assert team and event.sender == "team-lead"
        frames = frames_in(self.home, team, event.recipient, "shutdown_request")
        assert len(frames) == 1 and frames[0]["from"] == "team-lead"
        assert frames[0]["requestId"].startswith("shutdown-")
        assert frames[0]["requestId"].endswith(f"@{event.recipient}")
        # shutdown is only asked for once every task is done
        assert all(self._task(t)["status"] == "completed" for t in ("1", "2", "3"))

    def _shutdown_approved(self, event: MessageSent) -> None:
        team = self.team
        assert team and event.recipient == "team-lead"
        frames = [
            f
            for f in frames_in(self.home, team, "team-lead", "shutdown_approved")
            if f["from"] == event.sender
        ]
        assert len(frames) == 1
        assert frames[0]["backendType"] == "in-process"
        request = frames_in(self.home, team, event.sender, "shutdown_request")[0]
        assert frames[0]["requestId"] == request["requestId"]
        # it has left the team before telling the lead
        assert member_of(self.home, team, event.sender) is None

    def _team_deleted(self, team: str) -> None:
        assert not self.home.layout.team_dir(team).exists()
        assert not self.home.layout.task_dir(team).exists()
        assert not self.runtime.teammates

    def _task(self, task_id: str) -> dict[str, Any]:
        assert self.team
        return read_json(self.home.layout.task_path(self.team, task_id))  # type: ignore[no-any-return]


async def test_goal_to_team_delete_with_files_checked_at_each_step(
    home: Home, make_runtime: Callable[..., TeamRuntime]
) -> None:
    runtime = make_runtime(decider="lead", headless=True)
    checker = FileChecker(home, runtime)
    observer = Observer(runtime)
    runtime.subscribe(checker.on_event)
    unsubscribe = home.subscribe(checker.on_file)
    try:
        await runtime.start()
        runtime.submit(GOAL)
        await until(
            lambda: any("Final report" in o.text for o in observer.outcomes),
            "the lead's final report",
        )
    finally:
        unsubscribe()

    assert not checker.failures, "\n".join(checker.failures)
    assert checker.hit == {
        "team created": 1,
        "spawned": 3,
        "plan requested": 1,
        "plan answered": 1,
        "task completed": 3,
        "shutdown requested": 3,
        "shutdown approved": 3,
        "team deleted": 1,
    }
    # the blocked task completed last
    assert checker.completed[-1] == "3" and sorted(checker.completed) == ["1", "2", "3"]
    team = checker.team
    assert team == "describe-python-files"
    assert runtime.team is None
    assert all(o.status == "end_turn" for o in observer.outcomes)
    report = observer.outcomes[-1].text
    assert "alpha.py" in report and "Alpha: the first module." in report
    assert {n: s.status for n, s in runtime.departed.items()} == {
        "researcher": "completed",
        "analyst": "completed",
        "writer": "completed",
    }
    assert runtime.approvals() == []
    # the writer waited for approval between its plan and its work
    writer = observer.statuses("writer")
    assert "awaiting approval" in writer
    assert writer.index("awaiting approval") < len(writer) - 1
    assert writer[-1] == "completed"
    # the order of the protocol on the wire
    kinds = [m.frame_type for m in observer.messages() if m.frame_type]
    assert kinds.index("plan_approval_request") < kinds.index("plan_approval_response")
    assert max(i for i, k in enumerate(kinds) if k == "plan_approval_response") < min(
        i for i, k in enumerate(kinds) if k == "shutdown_request"
    )
    assert [k for k in kinds if k == "shutdown_approved"] == ["shutdown_approved"] * 3
    assert dirs(home.layout.teams_dir) == dirs(home.layout.tasks_dir) == []


async def test_headless_run_team_completes(home: Home, project: Path) -> None:
    out = io.StringIO()
    code, reason = await asyncio.wait_for(
        run_team(home, GOAL, cwd=project, time_limit=HANG_GUARD, out=out, json_output=True),
        HANG_GUARD + 5,
    )
    assert (code, reason) == (0, "team finished")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    events = [line["event"] for line in lines]
    assert events[:2] == ["start", "status"] and lines[0]["offline"] is True
    assert "team_created" in events and "team_deleted" in events
    assert events[-2:] == ["report", "done"] and lines[-2]["text"]  # the lead's final report
    types = [line["type"] for line in lines if line["event"] == "message"]
    for kind in ("plan_approval_request", "shutdown_request", "shutdown_approved"):
        assert kind in types
    assert types.count("shutdown_approved") == 3
    assert dirs(home.layout.teams_dir) == dirs(home.layout.tasks_dir) == []


async def test_headless_run_reports_a_model_error(home: Home, project: Path) -> None:
    from app.runtime.model.client import make_client
    from app.runtime.offline import error
    from tests.runtime.conftest import Router, Script

    router = Router(team_lead=Script([error(400, "invalid_request_error", "bad request")]))
    code, reason = await asyncio.wait_for(
        run_team(
            home,
            GOAL,
            cwd=project,
            time_limit=HANG_GUARD,
            out=io.StringIO(),
            client=make_client(handler=router, pace=0),
        ),
        HANG_GUARD + 5,
    )
    assert code == 1
    assert reason == "API error 400: bad request"


async def test_headless_run_ends_when_every_teammate_failed(
    home: Home, project: Path, monkeypatch: Any
) -> None:
    """Every teammate crashes: nothing can ever finish the tasks, so the run exits 1 with one
    line instead of waiting forever."""
    from app.runtime.agent.teammate import Teammate

    async def poll(self: Teammate) -> Any:
        raise RuntimeError("poll exploded")

    monkeypatch.setattr(Teammate, "_poll", poll)
    out = io.StringIO()
    code, reason = await asyncio.wait_for(
        run_team(home, GOAL, cwd=project, time_limit=HANG_GUARD, out=out),
        HANG_GUARD + 5,
    )
    assert code == 1
    assert reason.startswith("no teammate is alive and ") and "tasks are pending" in reason
    assert "\n" not in reason
    assert "timed out" not in reason

"""Team hooks through the real runtime (offline model): TaskCreated, TaskCompleted and
TeammateIdle from the project's ``.claude/settings.json``, each ending in exit 0, exit 2 (blocks,
with the hook's stderr as feedback), another exit (a warning) or a timeout; and the same seen in
``teamdeck run --headless --json``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli
from app.core import Home
from app.runtime.events import HookRan, TranscriptEntry
from app.runtime.offline import reply, tool_use
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import (
    Observer,
    Router,
    Script,
    call_tool,
    frames_in,
    result_json,
    spawn,
    start_team,
    until,
)

TEAM = "alpha"


@pytest.fixture(autouse=True)
def _own_user_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user settings come from an empty folder (never the real ``~/.claude``)."""
    user = tmp_path / "user-claude"
    user.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))
    monkeypatch.delenv("TEAMDECK_HOOKS", raising=False)
    return user


def write_hooks(project: Path, **events: str | tuple[str, float]) -> Path:
    """``.claude/settings.json`` with one command hook per event (``(command, timeout)``)."""
    hooks: dict[str, Any] = {}
    for event, spec in events.items():
        command, timeout = spec if isinstance(spec, tuple) else (spec, None)
        entry: dict[str, Any] = {"type": "command", "command": command}
        if timeout is not None:
            entry["timeout"] = timeout
        hooks[event] = [{"matcher": "", "hooks": [entry]}]
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}), "utf-8")
    return path


def once_then_pass(marker: Path, feedback: str) -> str:
    """A hook command that exits 2 with ``feedback`` the first time (of any agent: ``mkdir``
    is atomic) and 0 afterwards."""
    return f'if mkdir {marker} 2>/dev/null; then echo "{feedback}" >&2; exit 2; fi'


async def started(
    make_runtime: Callable[..., TeamRuntime], router: Router
) -> tuple[TeamRuntime, Observer]:
    return await start_team(make_runtime, router, TEAM)


def hooks_ran(observer: Observer, event: str) -> list[HookRan]:
    return [e for e in observer.of(HookRan) if e.hook_event == event]


def notices(rt: TeamRuntime, agent: str) -> list[str]:
    return [
        e.text
        for e in rt.transcript(agent)
        if isinstance(e, TranscriptEntry) and e.kind == "notice"
    ]


def complete(task_id: str) -> Any:
    return reply(tool_use("TaskUpdate", {"taskId": task_id, "status": "completed"}))


# ================================================================================ TaskCompleted


async def test_task_completed_exit_0_sees_the_event_and_lets_it_complete(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    write_hooks(project, TaskCompleted=f"cat > {seen}")
    worker = Script([complete("1"), "Done."])
    rt, observer = await started(make_runtime, Router(worker=worker))
    home.tasks(TEAM).create("Write the parser", "in src/parse.py")
    home.tasks(TEAM).update("1", owner="worker", status="in_progress")
    await spawn(rt, "worker")

    await until(lambda: len(worker.requests) == 2, "the worker's second request")
    [result] = worker.requests[1].tool_results
    assert not result.is_error, result.content
    assert home.tasks(TEAM).require("1").status == "completed"
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "TaskCompleted"
    assert (data["team_name"], data["teammate_name"]) == (TEAM, "worker")
    assert (data["task_id"], data["task_subject"], data["task_description"]) == (
        "1",
        "Write the parser",
        "in src/parse.py",
    )
    assert data["cwd"] == str(project) and data["permission_mode"] == "default"
    assert data["session_id"]
    [ran] = hooks_ran(observer, "TaskCompleted")
    assert (ran.agent, ran.outcome, ran.task_id) == ("worker", "ok", "1")
    # Told with the worker's idle notification, at the end of its turn.
    await until(lambda: frames_in(home, TEAM, "team-lead", "task_completed"), "the lead told")


async def test_task_completed_exit_2_keeps_the_task_open_with_feedback(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path, tmp_path: Path
) -> None:
    write_hooks(project, TaskCompleted=once_then_pass(tmp_path / "n", "tests fail: 2 errors"))
    worker = Script([complete("1"), complete("1"), "Done."])
    rt, observer = await started(make_runtime, Router(worker=worker))
    home.tasks(TEAM).create("Write the parser")
    home.tasks(TEAM).update("1", owner="worker", status="in_progress")
    await spawn(rt, "worker")

    await until(lambda: len(worker.requests) == 2, "the worker's second request")
    [result] = worker.requests[1].tool_results
    assert result.is_error
    assert "kept task #1 open" in result.content and "tests fail: 2 errors" in result.content
    # the worker's next call (the hook passes now) completes it
    await until(lambda: len(worker.requests) == 3, "the worker's third request")
    assert not worker.requests[2].tool_results[0].is_error
    assert home.tasks(TEAM).require("1").status == "completed"
    blocked, passed = hooks_ran(observer, "TaskCompleted")
    assert (blocked.outcome, blocked.message, blocked.task_id) == (
        "blocked",
        "tests fail: 2 errors",
        "1",
    )
    assert passed.outcome == "ok"
    assert notices(rt, "worker") == ["hook blocked: TaskCompleted #1 — tests fail: 2 errors"]
    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")  # the lead told
    assert len(frames_in(home, TEAM, "team-lead", "task_completed")) == 1  # only the real one


async def test_task_completed_blocked_task_stays_in_progress(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    write_hooks(project, TaskCompleted="echo 'not yet' >&2; exit 2")
    worker = Script([complete("1"), "I will fix it."])
    rt, observer = await started(make_runtime, Router(worker=worker))
    home.tasks(TEAM).create("Write the parser")
    home.tasks(TEAM).update("1", owner="worker", status="in_progress")
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")
    task = home.tasks(TEAM).require("1")
    assert (task.status, task.owner) == ("in_progress", "worker")
    assert frames_in(home, TEAM, "team-lead", "task_completed") == []


async def test_task_completed_other_exit_is_a_warning_and_completes(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    write_hooks(project, TaskCompleted="echo 'lint crashed' >&2; exit 3")
    worker = Script([complete("1"), "Done."])
    rt, observer = await started(make_runtime, Router(worker=worker))
    home.tasks(TEAM).create("Write the parser")
    home.tasks(TEAM).update("1", owner="worker", status="in_progress")
    await spawn(rt, "worker")

    await until(lambda: len(worker.requests) == 2, "the worker's second request")
    assert not worker.requests[1].tool_results[0].is_error
    assert home.tasks(TEAM).require("1").status == "completed"
    [ran] = hooks_ran(observer, "TaskCompleted")
    assert ran.outcome == "warning"
    assert "failed (exit 3): lint crashed" in ran.message
    [notice] = notices(rt, "worker")
    assert notice.startswith("hook warning: TaskCompleted #1 — hook ")


# ================================================================================ TaskCreated


async def test_task_created_exit_2_creates_nothing_and_tells_the_creator(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "created.json"
    write_hooks(project, TaskCreated=f"cat > {seen}; echo 'needs a description' >&2; exit 2")
    rt, observer = await started(make_runtime, Router())
    content, is_error = await call_tool(
        rt.lead_session, "TaskCreate", {"subject": "Vague", "description": ""}
    )
    assert is_error
    assert "not created" in content and "needs a description" in content
    data = json.loads(seen.read_text())
    assert (data["hook_event_name"], data["task_subject"], data["team_name"]) == (
        "TaskCreated",
        "Vague",
        TEAM,
    )
    assert "teammate_name" not in data  # the lead made it
    tasks = home.tasks(TEAM)
    assert tasks.list(include_internal=True) == []
    [ran] = hooks_ran(observer, "TaskCreated")
    assert (ran.agent, ran.outcome, ran.task_id) == ("team-lead", "blocked", data["task_id"])
    # ids are not reused
    write_hooks(project)  # (the hooks were read once: this does not change them)
    second = tasks.create("Next")
    assert int(second.id) > int(data["task_id"])


async def test_task_created_exit_0_shows_the_task_as_it_was_asked(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "board.json"
    # while the hook runs, the task is not on the board (nobody can claim it yet)
    write_hooks(project, TaskCreated=f"ls {home.layout.task_dir(TEAM)} > {seen}; exit 0")
    rt, observer = await started(make_runtime, Router())
    content, is_error = await call_tool(
        rt.lead_session,
        "TaskCreate",
        {"subject": "Parse", "description": "the parser", "metadata": {"area": "src"}},
    )
    assert not is_error, content
    task_id = result_json(content)["task"]["id"]
    assert f"{task_id}.json" in seen.read_text()
    task = home.tasks(TEAM).require(task_id)
    assert task.metadata == {"area": "src"} and not task.is_internal
    assert [t.id for t in home.tasks(TEAM).list()] == [task_id]
    assert [r.outcome for r in hooks_ran(observer, "TaskCreated")] == ["ok"]


# ================================================================================ TeammateIdle


async def test_teammate_idle_exit_2_keeps_it_working_with_the_feedback(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "idle.json"
    write_hooks(
        project,
        TeammateIdle=f"cat > {seen}; " + once_then_pass(tmp_path / "n", "run the tests first"),
    )
    worker = Script(["Looked around.", "Ran the tests."])
    rt, observer = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")

    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")
    assert len(worker.requests) == 2
    assert "run the tests first" in worker.requests[1].last_user_text
    # one idle notification: after the second turn, not after the blocked one
    [idle] = frames_in(home, TEAM, "team-lead", "idle_notification")
    assert idle["summary"] == "Ran the tests."
    data = json.loads(seen.read_text())
    assert (data["hook_event_name"], data["teammate_name"], data["team_name"]) == (
        "TeammateIdle",
        "worker",
        TEAM,
    )
    assert "task_id" not in data
    assert [r.outcome for r in hooks_ran(observer, "TeammateIdle")] == ["blocked", "ok"]
    assert notices(rt, "worker") == ["hook blocked: TeammateIdle — run the tests first"]


async def test_a_teammate_idle_hook_that_never_lets_go_is_given_up_on(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    """A TeammateIdle hook that blocks every time: after MAX_IDLE_BLOCKS turns the teammate
    goes idle anyway (one notification) and says why in its transcript; no endless model
    calls."""
    from app.runtime.agent.team_hooks import MAX_IDLE_BLOCKS

    write_hooks(project, TeammateIdle='echo "not yet" >&2; exit 2')
    worker = Script([f"Turn {i}." for i in range(MAX_IDLE_BLOCKS + 3)])
    rt, observer = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")

    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")
    assert len(worker.requests) == MAX_IDLE_BLOCKS
    assert len(frames_in(home, TEAM, "team-lead", "idle_notification")) == 1
    errors = [e.text for e in rt.transcript("worker") if e.kind == "error"]
    assert any(f"blocked {MAX_IDLE_BLOCKS} times in a row" in text for text in errors)


async def test_teammate_idle_timeout_is_a_warning_and_it_goes_idle(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    write_hooks(project, TeammateIdle=("sleep 30", 0.3))
    worker = Script(["Looked around."])
    rt, observer = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")

    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")
    [ran] = hooks_ran(observer, "TeammateIdle")
    assert ran.outcome == "warning" and ran.message.endswith("timed out after 0.3s")
    assert len(frames_in(home, TEAM, "team-lead", "idle_notification")) == 1
    assert len(worker.requests) == 1


async def test_hooks_can_be_switched_off(
    make_runtime: Callable[..., TeamRuntime],
    home: Home,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEAMDECK_HOOKS", "0")
    write_hooks(project, TeammateIdle="exit 2")
    worker = Script(["Looked around."])
    rt, observer = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "the worker idle")
    assert observer.of(HookRan) == []


# ================================================================================ headless


def test_headless_json_shows_hook_events(
    home: Home, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    write_hooks(
        project,
        # in the project: the command's sandbox keeps a hook's writes elsewhere to itself
        TaskCompleted=once_then_pass(project / ".hook-ran", "add a test first"),
        TaskCreated="echo 'lint is broken' >&2; exit 1",
    )
    monkeypatch.chdir(project)
    code = cli.main(
        ["--home", str(home.root), "run", "Describe the python files", "--headless", "--json"]
    )
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    lines = [json.loads(line) for line in out.splitlines()]
    hooks = [line for line in lines if line["event"] == "hook"]
    blocked = [h for h in hooks if h["outcome"] == "blocked"]
    assert len(blocked) == 1
    assert blocked[0]["hook_event_name"] == "TaskCompleted"
    assert blocked[0]["message"] == "add a test first" and blocked[0]["task_id"]
    warnings = [h for h in hooks if h["outcome"] == "warning"]
    assert warnings and all(h["hook_event_name"] == "TaskCreated" for h in warnings)
    assert "failed (exit 1): lint is broken" in warnings[0]["message"]
    assert lines[-1] == {"event": "done", "code": 0, "reason": "team finished"}


def test_headless_plain_shows_blocked_hooks(
    home: Home, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    write_hooks(project, TeammateIdle=once_then_pass(project / ".hook-ran", "check your summary"))
    monkeypatch.chdir(project)
    code = cli.main(["--home", str(home.root), "run", "Describe the python files", "--headless"])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    assert "hook blocked: TeammateIdle — check your summary" in out

"""Teammates in processes of their own (``--teammate-mode process|tmux``): real ``teamdeck
agent`` processes on the offline model, speaking to the lead's runtime through the files only.

A whole team runs to completion in each mode; a teammate process killed mid-task is reaped
(shown failed, its task back on the board, the lead told, the team still finishes); a team left
running by one runtime is adopted by another (``teamdeck attach``): the lead's conversation and
the unanswered plan request come back, and the team finishes. The key reaches a teammate
process only through the handoff.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from app.cli.headless import run_team
from app.core import Home
from app.core.paths import LEAD_NAME
from app.runtime.api import Approval
from app.runtime.events import StatusChanged, TeamLifecycle
from app.runtime.runners.base import TeammateSpec
from app.runtime.runners.external import ExternalRunner
from app.runtime.runners.launch import AgentLaunch
from app.runtime.runners.process_record import pid_exists, read_record
from app.runtime.team.lead_state import LeadAlreadyRunningError, conversation_path
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Observer, until

GOAL = "Describe the python files in this project"
#: Starting a few Python processes on a loaded 2-core machine takes a while.
GUARD = 120.0


def agent_pids(home: Home) -> list[int]:
    """``teamdeck agent`` processes of this home still running."""
    found = subprocess.run(
        ["pgrep", "-f", f"--home {home.root} agent"], capture_output=True, text=True
    )
    return [int(pid) for pid in found.stdout.split()]


def json_lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture
def tmux_socket(monkeypatch: pytest.MonkeyPatch) -> object:
    """A tmux server of the test's own (``TEAMDECK_TMUX_SOCKET``), killed afterwards."""
    name = f"teamdeck-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("TEAMDECK_TMUX_SOCKET", name)
    monkeypatch.delenv("TMUX", raising=False)
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


async def led_until_a_plan(
    home: Home, project: Path, runtimes: list[TeamRuntime], what: str = "a plan request"
) -> tuple[TeamRuntime, Approval]:
    """A person-led runtime with process teammates, started on :data:`GOAL` and run until a
    teammate asks to approve its plan."""
    runtime = TeamRuntime(home, cwd=project, decider="person", teammate_backend="process")
    runtimes.append(runtime)
    await runtime.start()
    runtime.submit(GOAL)
    plan = await until(
        lambda: next((a for a in runtime.approvals() if a.kind == "plan"), None),
        what,
        within=GUARD,
    )
    return runtime, plan


async def test_a_headless_run_with_process_teammates_completes(home: Home, project: Path) -> None:
    out = io.StringIO()
    code, reason = await asyncio.wait_for(
        run_team(
            home, GOAL, cwd=project, out=out, json_output=True, time_limit=GUARD,
            teammate_backend="process",
        ),
        GUARD + 10,
    )  # fmt: skip
    assert (code, reason) == (0, "team finished")
    lines = json_lines(out)
    done = {str(e["agent"]) for e in lines if e.get("status") == "completed"}
    assert {"researcher", "analyst", "writer"} <= done
    # What the teammate processes wrote reached the lead's runtime through their logs.
    senders = {e["from"] for e in lines if e.get("event") == "message"}
    assert {"researcher", "analyst", "writer"} <= senders
    assert any(e.get("type") == "plan_approval_request" for e in lines)
    assert agent_pids(home) == []  # every teammate process has ended


async def test_each_tmux_teammate_runs_in_a_window_of_the_teams_session(
    home: Home, project: Path, tmux_socket: str
) -> None:
    seen: set[str] = set()

    async def watch_windows() -> None:
        while True:
            listing = await asyncio.create_subprocess_exec(
                "tmux", "-L", tmux_socket, "list-windows", "-a", "-F",
                "#{session_name} #{window_name}",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            out, _ = await listing.communicate()
            seen.update(out.decode().splitlines())
            await asyncio.sleep(0.1)

    watcher = asyncio.ensure_future(watch_windows())
    try:
        code, reason = await asyncio.wait_for(
            run_team(
                home, GOAL, cwd=project, out=io.StringIO(), time_limit=GUARD,
                teammate_backend="tmux",
            ),
            GUARD + 10,
        )  # fmt: skip
    finally:
        watcher.cancel()
    assert (code, reason) == (0, "team finished")
    sessions = {line.split()[0] for line in seen}
    assert len(sessions) == 1 and next(iter(sessions)).startswith("teamdeck-")
    assert {line.split()[1] for line in seen} >= {"researcher", "analyst", "writer"}
    assert agent_pids(home) == []


async def test_a_teammate_process_killed_mid_task_is_reaped_and_the_team_finishes(
    home: Home, project: Path, monkeypatch: pytest.MonkeyPatch, runtimes: list[TeamRuntime]
) -> None:
    # Each model call of the teammate processes waits 0.2 s first, so a task stays in progress
    # over several of them (the processes take the setting from their environment): time
    # enough to catch a teammate at work, and no more (every call of the run pays it).
    monkeypatch.setenv("TEAMDECK_OFFLINE_TTFT", "0.2")
    runtime = TeamRuntime(
        home, cwd=project, decider="lead", headless=True, teammate_backend="process"
    )
    runtimes.append(runtime)
    seen = Observer(runtime)
    await runtime.start()
    runtime.submit(GOAL)

    def working() -> tuple[str, str, int] | None:
        """A teammate frozen while it owns an in-progress task: (name, task id, pid)."""
        team = runtime.team
        if not team:
            return None
        for task in home.tasks(team).list():
            runner = runtime.runners.get(task.owner or "")
            if task.status != "in_progress" or not isinstance(runner, ExternalRunner):
                continue
            pid = runner.pid
            if pid is None:
                continue
            os.kill(pid, signal.SIGSTOP)
            again = home.tasks(team).get(task.id)
            if again.status == "in_progress" and again.owner == task.owner:
                return task.owner or "", task.id, pid
            os.kill(pid, signal.SIGCONT)  # it finished meanwhile: look again
        return None

    name, task_id, pid = await until(working, "a teammate at work", within=GUARD)
    team = runtime.team
    assert team is not None
    os.kill(pid, signal.SIGKILL)
    # The lead reads the setting per call: the rest of its run need not wait.
    monkeypatch.setenv("TEAMDECK_OFFLINE_TTFT", "0")

    await until(lambda: "failed" in seen.statuses(name), f"{name} shown failed", within=GUARD)
    assert name not in [m.name for m in home.teams.require(team).members]
    assert home.tasks(team).get(task_id).owner != name  # back on the board
    told = [m.text for m in home.mailbox(team).read(LEAD_NAME) if m.sender == name]
    assert any(f'Teammate "{name}" failed' in text for text in told)
    assert f"Task #{task_id}" in told[-1] or task_id in told[-1]

    deleted = [e for e in seen.events if isinstance(e, TeamLifecycle) and e.event == "deleted"]
    await until(
        lambda: deleted or [e for e in seen.of(TeamLifecycle) if e.event == "deleted"],
        "the team to finish",
        within=GUARD,
    )
    assert not pid_exists(pid)


async def test_a_team_left_running_is_adopted_by_the_next_runtime(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    first, plan = await led_until_a_plan(home, project, runtimes, "the writer's plan request")
    team = first.team
    assert team is not None
    await until(
        lambda: all(r.snapshot().status != "running" for r in first.runners.values()),
        "the teammates to wait",
        within=GUARD,
    )
    pids = {name: runner.pid for name, runner in first.runners.items()}
    await first.stop()  # quit, leaving the team running

    assert read_record(home.layout.agent_record_path(team, LEAD_NAME)) is None
    assert all(pid is not None and pid_exists(pid) for pid in pids.values())
    assert conversation_path(home, team).is_file()

    second = TeamRuntime(
        home, cwd=project, decider="person", teammate_backend="process", attach=team
    )
    runtimes.append(second)
    seen = Observer(second)
    await second.start()
    assert second.team == team
    assert set(second.runners) == set(pids)
    assert second.lead_session.messages  # the lead's conversation came back
    assert [a.request_id for a in second.approvals()] == [plan.request_id]

    third = TeamRuntime(home, cwd=project, teammate_backend="process", attach=team)
    with pytest.raises(LeadAlreadyRunningError):
        await third.start()

    second.approve_plan(plan.request_id)
    await until(
        lambda: [e for e in seen.of(TeamLifecycle) if e.event == "deleted"],
        "the adopted team to finish",
        within=GUARD,
    )
    completed = {e.agent for e in seen.of(StatusChanged) if e.status == "completed"}
    assert completed == set(pids)
    await until(lambda: not agent_pids(home), "every teammate process to end", within=GUARD)


async def test_a_member_no_process_runs_is_reaped_when_the_team_is_adopted(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    """An in-process teammate of a dashboard that ended: on attach it leaves the team and its
    task goes back to the board (no zombie member, no orphaned task)."""
    from app.core import TeamMember

    home.teams.create("crew", lead_session_id="s")
    home.teams.add_member(
        "crew", TeamMember(agent_id="ghost@crew", name="ghost", backend_type="in-process")
    )
    task = home.tasks("crew").create("Left behind")
    home.tasks("crew").update(task.id, owner="ghost", status="in_progress")

    runtime = TeamRuntime(home, cwd=project, teammate_backend="process", attach="crew")
    runtimes.append(runtime)
    seen = Observer(runtime)
    await runtime.start()
    await until(lambda: "failed" in seen.statuses("ghost"), "the ghost reaped")
    assert [m.name for m in home.teams.require("crew").members] == [LEAD_NAME] or all(
        m.name != "ghost" for m in home.teams.require("crew").members
    )
    back = home.tasks("crew").get(task.id)
    assert (back.status, back.owner) == ("pending", None)


async def test_a_spent_budget_holds_teammate_processes_until_it_is_raised(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    from app.core import InboxMessage
    from app.runtime.model.budget import Budget
    from app.runtime.runners.hold import hold_path

    runtime = TeamRuntime(home, cwd=project, decider="lead", teammate_backend="process")
    runtimes.append(runtime)
    seen = Observer(runtime)
    await runtime.start()
    home.teams.create("crew", lead_session_id="s")
    runtime.team_created("crew")
    budget = Budget(1.0, model="claude-sonnet-5-5")
    budget.install(runtime)
    await runtime.spawn_teammate("helper", "Look around.")
    await until(lambda: "idle" in seen.statuses("helper"), "the helper's first turn", within=GUARD)

    budget.add(2.0)  # spent: the helper's next model call must wait
    assert hold_path(home, "crew").is_file() and budget.stopped
    home.mailbox("crew").append("helper", InboxMessage(sender=LEAD_NAME, text="One more thing."))
    await until(
        lambda: any(
            e.agent == "helper" and e.detail == "paused: budget" for e in seen.of(StatusChanged)
        ),
        "the helper held",
        within=GUARD,
    )
    held_at = runtime.runners["helper"].snapshot().model_calls

    budget.raise_to(10.0)
    assert not hold_path(home, "crew").exists()
    await until(
        lambda: runtime.runners["helper"].snapshot().model_calls > held_at,
        "the helper's call after the raise",
        within=GUARD,
    )


async def test_process_teammates_work_in_their_worktrees_and_run_their_hooks(
    home: Home, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hooks run inside each teammate process, in its own worktree; what they report reaches
    the lead's runtime through the teammate's log; clean worktrees go when the team is done."""
    from tests.runtime.test_team_worktrees import git

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    user = tmp_path / "user-claude"
    user.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))
    seen_by_hooks = tmp_path / "hook-runs.txt"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    hook = {"type": "command", "command": f'echo "$PWD" >> {seen_by_hooks}'}
    settings.write_text(json.dumps({"hooks": {"TeammateIdle": [{"hooks": [hook]}]}}))
    git(project, "init", "-q", "-b", "main")
    git(project, "-c", "user.email=t@example.com", "-c", "user.name=T", "add", ".")
    git(project, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-qm", "i")

    out = io.StringIO()
    code, reason = await asyncio.wait_for(
        run_team(
            home, GOAL, cwd=project, out=out, json_output=True, time_limit=GUARD,
            teammate_backend="process", worktrees=True,
        ),
        GUARD + 10,
    )  # fmt: skip
    assert (code, reason) == (0, "team finished")
    ran_in = set(seen_by_hooks.read_text().split())
    worktrees = project / ".claude" / "worktrees"
    assert {Path(p).parent for p in ran_in} == {worktrees}  # each in its own worktree
    assert len(ran_in) == 3
    hooks = [e for e in json_lines(out) if e.get("event") == "hook"]
    assert {e["agent"] for e in hooks} == {"researcher", "analyst", "writer"}
    released = [e for e in json_lines(out) if e.get("event") == "worktree"]
    assert len(released) == 3 and all(e["removed"] for e in released)
    assert not list(worktrees.iterdir())


def test_a_teammate_process_gets_the_key_only_through_the_handoff(
    home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither its command line nor its environment carries the key (it goes over a socket,
    see tests/security/test_key_handoff.py); an offline runtime hands over none."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-only-by-handoff")
    spec = TeammateSpec("crew", "ann", "", "sonnet", "default", "blue", project)
    keyed = AgentLaunch(home=home.root, offline=False)
    assert keyed.credentials() == {"ANTHROPIC_API_KEY": "sk-ant-only-by-handoff"}
    for backend in ("process", "tmux"):
        command = " ".join(keyed.command(spec, backend))
        assert "sk-ant-" not in command and "--credentials" not in command
    assert "sk-ant-" not in json.dumps(keyed.environment(spec))
    assert "sk-ant-" not in json.dumps(keyed.passed_environment(spec))
    assert AgentLaunch(home=home.root, offline=True).credentials() == {}

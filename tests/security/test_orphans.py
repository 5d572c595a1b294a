"""Teammate processes nobody leads any more, and requests nobody can answer.

- A team left running whose teammate died meanwhile: ``attach`` does not queue that
  teammate's plan request again as if it could still be answered.
- A lead killed (SIGKILL) in the middle of a run: its teammate processes (``process`` and
  ``tmux`` modes) shut down once ``$TEAMDECK_ORPHAN_TIMEOUT`` has passed, their tasks back on
  the board, the files intact.
- A team whose lead runs, or that was left running on purpose and then attached, is not shut
  down.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.api import AnswerStatus
from app.runtime.events import StatusChanged, TeamLifecycle, TranscriptEntry
from app.runtime.runners.orphan import LeadWatch
from app.runtime.runners.process_record import (
    AgentRecord,
    pid_exists,
    proc_start,
    read_record,
    same_process,
    write_record,
)
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Observer, until
from tests.runtime.test_teammate_modes import GOAL, GUARD, led_until_a_plan, tmux_socket  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


async def test_attach_does_not_raise_a_dead_teammates_plan_request_again(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    first, plan = await led_until_a_plan(home, project, runtimes)
    team = first.team
    assert team is not None
    pid = first.runners[plan.agent].pid
    assert pid is not None
    await first.stop()  # quit, leaving the team running
    os.kill(pid, signal.SIGKILL)  # the teammate dies while no dashboard is open
    await until(lambda: not pid_exists(pid), "the teammate's process to end", within=GUARD)

    second = TeamRuntime(
        home, cwd=project, decider="person", teammate_backend="process", attach=team
    )
    runtimes.append(second)
    seen = Observer(second)
    await second.start()
    await until(lambda: plan.agent in second.departed, "the dead teammate reaped", within=GUARD)
    scan = second.lead_inbox._scan  # the lead's inbox as attach read it
    await until(lambda: scan is None or scan.done(), "the lead's inbox read", within=GUARD)
    assert plan.request_id not in [a.request_id for a in second.approvals()]
    # Never shown as pending, not even for a moment, and not answerable as if it were live.
    assert [e for e in seen.approvals(resolved=False) if e.request_id == plan.request_id] == []
    answer = second.approve_plan(plan.request_id)
    assert answer.status != AnswerStatus.DONE
    # The person is told why it went: the teammate's failure names the dropped request.
    await until(lambda: "failed" in seen.statuses(plan.agent), "the reaping shown", within=GUARD)
    why = [e.detail for e in seen.of(StatusChanged) if e.agent == plan.agent][-1]
    assert "plan request" in why and "dropped" in why


def _teamdeck_run(home: Home, project: Path, mode: str, **env: str) -> subprocess.Popen[bytes]:
    """A headless ``teamdeck run`` with teammates in processes of their own (a real lead
    process, to be killed)."""
    argv = [sys.executable, "-P", "-m", "app.cli.main", "--home", str(home.root), "run", GOAL]
    argv += ["--headless", "--no-sandbox", "--teammate-mode", mode]
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.Popen(
        argv, cwd=project, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _working(home: Home) -> tuple[str, list[int]] | None:
    """The team once a teammate works on a task: (team, the teammates' pids)."""
    for team in home.teams.names():
        tasks = home.tasks(team).list()
        if not any(t.status == "in_progress" and t.owner for t in tasks):
            continue
        found = [read_record(home.layout.agent_record_path(team, m.name))
                 for m in home.teams.require(team).teammates]  # fmt: skip
        return team, [f[0].pid for f in found if f is not None]
    return None


@pytest.mark.parametrize("mode", ["process", "tmux"])
async def test_teammates_whose_lead_was_killed_shut_down_and_return_their_tasks(
    home: Home, project: Path, mode: str, request: pytest.FixtureRequest
) -> None:
    if mode == "tmux":
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed")
        request.getfixturevalue("tmux_socket")
    lead = _teamdeck_run(
        home, project, mode, TEAMDECK_OFFLINE_TTFT="0.2", TEAMDECK_ORPHAN_TIMEOUT="1"
    )
    try:
        team, pids = await until(lambda: _working(home), "a teammate at work", within=GUARD)
        lead.kill()  # SIGKILL: the lead leaves its record behind, naming a dead process
        lead.wait()
    finally:
        if lead.poll() is None:
            lead.kill()
    assert pids

    await until(lambda: not any(map(pid_exists, pids)), "the teammates to end", within=GUARD)
    # They left the team the way a shutdown does: no member, no task still theirs.
    config = home.teams.require(team)
    assert config.teammates == []
    for task in home.tasks(team).list():
        assert task.status in ("pending", "completed"), task
        assert task.status == "completed" or task.owner is None, task
    # Each says why in its log, and the files are intact.
    logs = [p.read_text() for p in home.layout.agents_dir(team).glob("*.jsonl")]
    assert any("is gone and no dashboard attached" in text for text in logs)


async def test_a_led_or_attached_team_is_not_shut_down(
    home: Home, project: Path, runtimes: list[TeamRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short grace period (its teammates look every 0.2 s): a wrong shutdown would come within
    # a second of each quiet period's start.
    monkeypatch.setenv("TEAMDECK_ORPHAN_TIMEOUT", "0.5")
    first, plan = await led_until_a_plan(home, project, runtimes)
    team = first.team
    assert team is not None
    pids = {name: runner.pid for name, runner in first.runners.items()}
    await asyncio.sleep(1.5)  # a quiet period: several looks at a live lead
    assert all(pid is not None and pid_exists(pid) for pid in pids.values())

    await first.stop()  # quit, leaving the team running on purpose
    await asyncio.sleep(1.5)  # longer than the grace period: nobody is orphaned by a choice
    assert all(pid is not None and pid_exists(pid) for pid in pids.values())

    second = TeamRuntime(
        home, cwd=project, decider="person", teammate_backend="process", attach=team
    )
    runtimes.append(second)
    seen = Observer(second)
    await second.start()
    assert [a.request_id for a in second.approvals()] == [plan.request_id]
    second.approve_plan(plan.request_id)
    await until(
        lambda: [e for e in seen.of(TeamLifecycle) if e.event == "deleted"],
        "the attached team to finish",
        within=GUARD,
    )
    completed = {e.agent for e in seen.of(StatusChanged) if e.status == "completed"}
    assert completed == set(pids)
    said = [e.text for e in seen.of(TranscriptEntry)]
    assert not [text for text in said if "no dashboard attached" in text]


def test_an_ended_teammate_left_a_zombie_no_longer_runs() -> None:
    """A ``process`` teammate exec'd by its lead (the fork server could not take it) is the
    lead's child: the lead killed, init adopts it, and an init that does not reap (a
    container's pid 1) keeps it a zombie once it has ended -- which ``kill(pid, 0)`` still
    finds. The test above then waited its whole guard for teammates that had long ended."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    running = subprocess.Popen(["sleep", "60"])
    try:
        os.waitid(os.P_PID, ended.pid, os.WEXITED | os.WNOWAIT)  # ended, left unreaped
        assert not pid_exists(ended.pid)
        record = AgentRecord("worker", "t", ended.pid, "process", proc_start=proc_start(ended.pid))
        assert not same_process(record)
        assert pid_exists(running.pid)
    finally:
        running.kill()
        running.wait()
        ended.wait()


def test_a_dashboard_attaching_to_a_team_whose_lead_died_becomes_its_lead(tmp_path: Path) -> None:
    """What each teammate process looks at: a record naming a dead process starts the grace
    period; a live lead's (an ``attach``) ends it; the clock starts again if that one dies."""
    now = [0.0]
    record = tmp_path / "team-lead.json"
    watch = LeadWatch(record, 10.0, clock=lambda: now[0])
    assert watch.check() is None  # no record: no lead was lost (left running on purpose)

    gone = AgentRecord("team-lead", "t", 2**22 + 7, "lead", proc_start=1)
    write_record(record, gone)
    assert watch.check() is None
    now[0] = 9.0
    assert watch.check() is None
    me = AgentRecord("team-lead", "t", os.getpid(), "lead", proc_start=proc_start(os.getpid()))
    write_record(record, me)  # a dashboard attached
    now[0] = 30.0
    assert watch.check() is None
    # The same pid with another start time is another process: the lead is gone.
    write_record(record, AgentRecord("team-lead", "t", os.getpid(), "lead", proc_start=1))
    assert watch.check() is None
    now[0] = 39.0
    assert watch.check() is None
    now[0] = 40.0
    assert "is gone and no dashboard attached within 10s" in (watch.check() or "")

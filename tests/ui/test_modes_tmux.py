"""Teammates in processes of their own, in a real terminal (tmux).

``teamdeck demo --teammate-mode process|tmux`` runs to completion with keys, as the in-process
demo does; and a ``process`` teammate killed with SIGKILL mid-task is shown failed in its panel,
its task goes back on the board, and the team still finishes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from pathlib import Path

import pytest

from app.core import Home
from tests.timing import scaled
from tests.ui.test_demo_tmux import HANG_GUARD, Tmux, _teamdeck, digits

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ROOT = Path(__file__).resolve().parents[2]


def terminal_env(tmp_path: Path, pace: str, **extra: str) -> dict[str, str]:
    return {
        **extra,
        "TEAMDECK_OFFLINE_PACE": pace,
        "TERM": "xterm-256color",
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
    }


def approve_plan(tmux: Tmux) -> None:
    screen = tmux.wait_for(lambda s: "awaiting appr" in s, "the writer's plan")
    tmux.keys("Escape")  # out of the lead's input: keys act
    time.sleep(0.5)  # an escape right before a key would read as alt+key
    tmux.keys(*digits(screen, "awaiting"), "a")


def answer_the_demos_requests(tmux: Tmux) -> None:
    """The demo asks twice, in either order or at once: the researcher's ``wc -l`` (a allows
    it once) and the writer's plan (a approves it)."""
    tmux.wait_for(lambda s: bool(digits(s, "awaiting")), "a request")
    tmux.keys("Escape")  # out of the lead's input: keys act
    time.sleep(0.5)  # an escape right before a key would read as alt+key
    answered: set[str] = set()
    while answered != {"1", "3"}:
        screen = tmux.wait_for(
            lambda s: bool(set(digits(s, "awaiting")) - answered), "the next request"
        )
        key = min(set(digits(screen, "awaiting")) - answered)
        tmux.keys(key, "a")
        answered.add(key)


@pytest.mark.parametrize("mode", ["process", "tmux"])
def test_the_demo_runs_to_completion_in_each_mode(tmp_path: Path, mode: str) -> None:
    tmux = Tmux(tmp_path, 120, 40)
    tmux.start(f"{_teamdeck()} demo --teammate-mode {mode}", terminal_env(tmp_path, "0.002"))
    try:
        if mode == "tmux":  # each teammate in a window of the team's own session
            deadline = time.monotonic() + scaled(HANG_GUARD)
            while "writer" not in tmux.run("list-windows", "-a", "-F", "#{window_name}"):
                assert time.monotonic() < deadline, tmux.screen()
                time.sleep(0.2)
            sessions = tmux.run("list-sessions", "-F", "#{session_name}").split()
            assert any(name.startswith("teamdeck-") for name in sessions), sessions
        answer_the_demos_requests(tmux)
        screen = tmux.wait_for(lambda s: "(deleted)" in s, "the team to be deleted")
        assert "completed" in screen
    finally:
        tmux.kill()


def test_a_process_teammate_killed_mid_task_is_shown_failed_and_the_team_finishes(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path / "home")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("alpha", "beta", "gamma"):
        (project / f"{name}.py").write_text(f'"""{name}."""\n\ndef {name}():\n    pass\n')
    tmux = Tmux(tmp_path, 120, 40)
    goal = "'\\''Describe the python files in this project'\\''"
    run = f"{_teamdeck()} --home {home.root} run {goal} --teammate-mode process"
    command = f"sh -c 'cd {project} && exec {run}'"
    # Each model call waits 0.2 s first, so a task stays in progress over several of them: time
    # enough to catch a teammate at work, and no more (every call of the run pays it).
    tmux.start(command, terminal_env(tmp_path, "0", TEAMDECK_OFFLINE_TTFT="0.2"))
    try:
        name, task_id, pid = _freeze_a_working_teammate(home)
        os.kill(pid, signal.SIGKILL)
        screen = tmux.wait_for(
            lambda s: re.search(rf"{name} +failed", s) is not None, f"{name} shown failed"
        )
        team = home.teams.names()[0]
        assert home.tasks(team).get(task_id).owner != name  # back on the board
        assert name not in [m.name for m in home.teams.require(team).members]
        if name != "writer":  # the writer killed before its plan: no plan to approve
            approve_plan(tmux)
        screen = tmux.wait_for(lambda s: "(deleted)" in s, "the team to finish")
        assert re.search(rf"{name} +failed", screen)
    finally:
        tmux.kill()


def _freeze_a_working_teammate(home: Home) -> tuple[str, str, int]:
    """SIGSTOP a teammate process while it owns an in-progress task: (name, task id, pid)."""
    deadline = time.monotonic() + scaled(HANG_GUARD)
    while time.monotonic() < deadline:
        for team in home.teams.names():
            for task in home.tasks(team).list():
                if task.status != "in_progress" or not task.owner:
                    continue
                record = home.layout.agent_record_path(team, task.owner)
                try:
                    pid = int(json.loads(record.read_text())["pid"])
                except (OSError, ValueError, KeyError):
                    continue
                os.kill(pid, signal.SIGSTOP)
                again = home.tasks(team).get(task.id)
                if again.status == "in_progress" and again.owner == task.owner:
                    return task.owner, task.id, pid
                os.kill(pid, signal.SIGCONT)
        time.sleep(0.02)
    raise AssertionError("no teammate process was seen at work")

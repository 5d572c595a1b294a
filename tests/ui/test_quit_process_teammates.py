"""Quitting with "Shut down" while process teammates wait for answers (issue 19, item 7): the
dashboard asks them, they leave, and none outlives it -- every teammate has stopped when the
dashboard has quit, and its process is gone."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.dashboard.screens.quit import QuitScreen, ShuttingDownScreen
from app.runtime.events import TERMINAL_STATUSES
from app.runtime.runners.external import ExternalRunner
from app.runtime.runners.process_record import pid_exists
from tests.timing import scaled
from tests.ui.helpers import wait_for

GOAL = "Summarize what the Python files in this folder do and count their lines"
GUARD = 120.0  # starting teammate processes on a loaded machine (a hang guard only)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "alpha.py").write_text('"""Alpha: the first module."""\n\n\ndef a():\n    pass\n')
    (root / "pkg" / "gamma.py").write_text("# gamma helpers\ndef c():\n    pass\n")
    return root


async def test_shut_down_stops_every_process_teammate_before_quitting(
    tmp_path: Path, project: Path
) -> None:
    home = Home(tmp_path / "home")
    app = build_dashboard(home, goal=GOAL, cwd=project, teammate_backend="process", history=False)
    app.SHUTDOWN_WAIT = scaled(60)  # a loaded machine: teammates answer late, not never
    runners: list[ExternalRunner] = []
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app, TeamDeckApp)
        await wait_for(pilot, lambda: bool(app.approvals), within=GUARD)  # someone waits
        runtime = app.runtime
        assert runtime is not None
        runners = [r for r in runtime.crew.runners.values() if isinstance(r, ExternalRunner)]
        assert runners
        team = runtime.team
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ShuttingDownScreen), within=30)
        await wait_for(pilot, lambda: not app.is_running, within=GUARD)
    left = {r.spec.name: r.snapshot().status for r in runners}
    assert all(status in TERMINAL_STATUSES for status in left.values()), left
    deadline = time.monotonic() + scaled(10)  # a hang guard: an exiting process's last steps
    while any(r.pid is not None and pid_exists(r.pid) for r in runners):
        assert time.monotonic() < deadline, [(r.spec.name, r.pid) for r in runners]
        await asyncio.sleep(0.1)
    assert team and not home.layout.config_path(team).exists()  # the team was deleted

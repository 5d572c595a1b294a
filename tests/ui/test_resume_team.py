"""A team left on disk is resumed (issue 19, item 12): ``teamdeck --team NAME`` has the
dashboard's lead lead that team again -- its tasks as they were, its teammates that no longer
run gone from it (their tasks back on the board) -- and the lead carries on with its open work
in that team instead of starting a new one. Driven through the CLI's ``main``, the dashboard run
headless under an auto-pilot."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.cli.main import main
from app.core import Home
from app.core.errors import TeamdeckError
from app.core.paths import LEAD_NAME
from app.dashboard.app import TeamDeckApp
from tests.timing import scaled
from tests.ui.data import TEAM, build_home
from tests.ui.helpers import wait_for
from tests.ui.test_demo_home import run_headless

GUARD = 60.0


@pytest.fixture
def left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """Team alpha, left on disk by an earlier run: nothing runs its teammates any more."""
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return build_home(tmp_path / "home")


def test_team_name_resumes_a_team_left_on_disk_and_carries_on_with_its_work(
    left: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resumed lead (offline model) is told what it leads again and carries on: a teammate
    for each open task nobody works on (the blocked ones once unblocked), every task completed,
    then the usual shutdown and clean-up -- all in the team resumed, none new."""
    seen: dict[str, Any] = {"teams": set(), "members": set()}

    async def carry_on(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TeamDeckApp) and app.runtime is not None
        runtime = app.runtime
        await wait_for(pilot, lambda: app.loaded and runtime.team is not None, within=GUARD)
        seen["led"] = runtime.team
        team_dir = left.root / "teams" / TEAM
        deadline = time.monotonic() + scaled(GUARD)
        while team_dir.exists():  # until the lead, done, deletes the team
            assert time.monotonic() < deadline, seen
            seen["teams"].update(p.name for p in (left.root / "teams").iterdir() if p.is_dir())
            with contextlib.suppress(TeamdeckError, OSError):
                seen["tasks"] = {t.id: (t.status, t.owner) for t in left.tasks(TEAM).list()}
                seen["members"].update(m.name for m in left.teams.require(TEAM).members)
            await pilot.pause(0.1)
        seen["lead"] = [str(e.text) for e in runtime.transcript(LEAD_NAME)]
        app.exit()

    run_headless(monkeypatch, carry_on)
    assert main(["--home", str(left.root), "tui", "--team", TEAM]) == 0
    assert seen["led"] == TEAM
    assert seen["lead"][0].startswith("[resumed team alpha:"), seen["lead"][:2]
    # every task done; the one completed before keeps its owner
    assert {status for status, _ in seen["tasks"].values()} == {"completed"}, seen["tasks"]
    assert seen["tasks"]["1"] == ("completed", "researcher")
    # Named in the order they were spawned (issue 30: worker-1, worker-3 after task ids).
    workers = sorted(m for m in seen["members"] if m.startswith("worker-"))
    assert workers == [f"worker-{n}" for n in range(1, len(workers) + 1)], workers
    assert len(workers) >= 3, workers
    assert seen["teams"] == {TEAM}  # no new team
    assert "Everyone has shut down; cleaning up." in seen["lead"]


def test_a_team_led_by_another_dashboard_is_refused_in_one_line(
    left: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.runtime.runners.process_record import AgentRecord, write_record

    write_record(
        left.layout.agent_record_path(TEAM, LEAD_NAME),
        AgentRecord(LEAD_NAME, TEAM, __import__("os").getpid(), "lead"),
    )
    assert main(["--home", str(left.root), "tui", "--team", TEAM]) == 1
    err = capsys.readouterr().err
    assert err.startswith("teamdeck: error: ") and err.count("\n") == 1, err
    assert "already led" in err

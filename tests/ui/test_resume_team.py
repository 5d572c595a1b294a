"""A team left on disk is resumed (issue 19, item 12): ``teamdeck --team NAME`` has the
dashboard's lead lead that team again -- its tasks as they were, its teammates that no longer
run gone from it (their tasks back on the board) -- and a message to the lead carries on with
it instead of starting a new team. Driven through the CLI's ``main``, the dashboard run
headless under an auto-pilot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.cli.main import main
from app.core import Home
from app.core.paths import LEAD_NAME
from app.dashboard.app import TeamDeckApp
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


def test_team_name_resumes_a_team_left_on_disk(left: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    async def carry_on(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, TeamDeckApp) and app.runtime is not None
        runtime = app.runtime
        await wait_for(pilot, lambda: app.loaded and runtime.team is not None, within=GUARD)
        seen["led"] = runtime.team
        # the teammates no process runs leave it; their unfinished tasks go back to the board
        await wait_for(
            pilot,
            lambda: [m.name for m in left.teams.require(TEAM).members] == [LEAD_NAME],
            within=GUARD,
        )
        seen["owners"] = {t.id: t.owner for t in left.tasks(TEAM).list()}
        assert app.steering.send(LEAD_NAME, "Carry_on").ok  # what the lead's input sends

        def answered() -> bool:  # the lead's turn on the message has ended
            entries = runtime.transcript(LEAD_NAME)
            asked = [i for i, e in enumerate(entries) if "Carry_on" in str(e.text)]
            return bool(asked) and any(e.kind == "assistant" for e in entries[asked[-1] :])

        await wait_for(pilot, answered, within=GUARD)
        await wait_for(pilot, lambda: runtime.snapshot()[0].status == "idle", within=GUARD)
        seen["teams"] = sorted(p.name for p in (left.root / "teams").iterdir() if p.is_dir())
        seen["still"] = runtime.team
        app.exit()

    run_headless(monkeypatch, carry_on)
    assert main(["--home", str(left.root), "tui", "--team", TEAM]) == 0
    assert seen["led"] == TEAM
    assert seen["owners"]["1"] == "researcher"  # a completed task keeps its owner
    assert seen["owners"]["2"] is None and seen["owners"]["3"] is None  # back on the board
    assert seen["teams"] == [TEAM] and seen["still"] == TEAM  # no new team


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

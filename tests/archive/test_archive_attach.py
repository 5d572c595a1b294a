"""``teamdeck --claude`` records what it watches: a run with source "attach" in teamdeck's own
home's history.db, from the viewer's watcher; nothing is written into the Claude Code home."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from textual.pilot import Pilot

from app.core import Home, InboxMessage
from app.core.paths import default_home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.dashboard.recording import finish_dashboard_recording
from tests import claude_home as ch
from tests.timing import scaled

GUARD = 30.0


def _rows(sql: str, *params: object) -> list[tuple[object, ...]]:
    from app.archive import connect

    conn = connect(default_home() / "history.db")
    try:
        return list(conn.execute(sql, params))
    finally:
        conn.close()


async def _until(pilot: Pilot[None], app: TeamDeckApp, check: object, what: str) -> None:
    deadline = time.monotonic() + scaled(GUARD)
    while True:
        app.recorder.flush()
        if check():  # type: ignore[operator]
            return
        assert time.monotonic() < deadline, what
        await pilot.pause(0.1)


async def test_the_viewer_records_an_attach_run_in_its_own_home(tmp_path: Path) -> None:
    root = ch.build(tmp_path / "claude")
    claude = Home(root, lock_style="mkdir")
    app = build_dashboard(claude, viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(
            pilot,
            app,
            lambda: _rows("SELECT 1 FROM events WHERE kind = 'task'"),
            "the tasks already there were never recorded",
        )
        # Claude Code (another process) goes on: a message and a task change.
        other = Home(root, lock_style="mkdir")
        other.mailbox(ch.TEAM).append(
            "team-lead", InboxMessage(sender="researcher", text="notes are written", summary="done")
        )
        other.tasks(ch.TEAM).update("1", status="completed")

        def recorded() -> bool:
            texts = {t for (t,) in _rows("SELECT text FROM events WHERE kind = 'message'")}
            done = _rows("SELECT 1 FROM events WHERE kind = 'task' AND frame = 'completed'")
            return "notes are written" in texts and bool(done)

        await _until(pilot, app, recorded, "the Claude Code team's new writes were not recorded")
        before_exit = ch.snapshot(root)
    finish_dashboard_recording(app)

    [(run_id, source, team, outcome, reason, home, ended)] = _rows(
        "SELECT id, source, team, outcome, reason, home, ended_at FROM runs"
    )
    assert (source, team, outcome) == ("attach", ch.TEAM, "stopped")
    assert reason == "the viewer was closed" and ended is not None and home == str(root)
    # What was there at attach: the members (with their types), the inbox's requests.
    agents = dict(_rows("SELECT name, agent_type FROM agents WHERE run_id = ?", run_id))
    assert agents["team-lead"] == "team-lead" and "researcher" in agents
    frames = [f for (f,) in _rows("SELECT frame FROM events WHERE kind = 'message'")]
    assert "plan_approval_request" in frames and "permission_request" in frames
    [(kind, asked)] = _rows("SELECT kind, asked_at FROM approvals WHERE request_id = ?", ch.PLAN_ID)
    assert kind == "plan" and asked is not None
    statuses = [f for (f,) in _rows("SELECT frame FROM events WHERE kind = 'task'")]
    assert statuses[-1] == "completed"

    # Nothing written into the Claude Code home, not even at exit.
    assert ch.snapshot(root) == before_exit
    assert not [p for p in root.rglob("*") if "history" in p.name]
    assert (default_home() / "history.db").exists()


async def test_no_history_leaves_no_archive(tmp_path: Path) -> None:
    root = ch.build(tmp_path / "claude")
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True, history=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.3)
    finish_dashboard_recording(app)
    assert not (default_home() / "history.db").exists()
    assert not [p for p in root.rglob("*") if "history" in p.name]


async def test_switching_team_ends_one_attach_run_and_starts_the_next(tmp_path: Path) -> None:
    root = ch.build(tmp_path / "claude")
    other = Home(root, lock_style="mkdir")
    other.teams.create("second", description="")
    app = build_dashboard(other, viewer=True, team=ch.TEAM)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, app, lambda: app.recorder.team == ch.TEAM, "never attached")
        app.feeder.switch_team("second")
        await _until(pilot, app, lambda: app.recorder.team == "second", "never switched")
    finish_dashboard_recording(app)
    runs = _rows("SELECT team, outcome, reason FROM runs ORDER BY id")
    assert runs == [
        (ch.TEAM, "stopped", "the viewer switched to team second"),
        ("second", "stopped", "the viewer was closed"),
    ]
    assert json.loads((root / "teams" / "second" / "config.json").read_text())["name"] == "second"
    assert os.environ["TEAMDECK_HOME"] not in str(root)

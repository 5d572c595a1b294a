"""The dashboard records its run, and shows the budget's warnings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.archive import connect
from app.cli.main import main
from app.core import Home
from app.dashboard.launch import build_dashboard
from app.dashboard.recording import finish_dashboard_recording
from app.runtime.model.budget import Budget
from tests.timing import scaled

GUARD = 60.0


async def test_a_dashboard_run_is_recorded(home: Home, project: Path) -> None:
    app = build_dashboard(home, goal="Summarize the files", lead_approves=True, cwd=project)
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + scaled(GUARD)
        while not app.recorder.team_deleted:
            assert time.monotonic() < deadline, "the team never finished"
            await pilot.pause(0.1)
    finish_dashboard_recording(app)
    conn = connect(home.root / "history.db")
    source, outcome, agents, done = conn.execute(
        "SELECT source, outcome, agents, tasks_done FROM runs"
    ).fetchone()
    kinds = {k for (k,) in conn.execute("SELECT DISTINCT kind FROM events")}
    conn.close()
    assert (source, outcome, agents, done) == ("dashboard", "finished", 4, 3)
    assert {"status", "message", "task", "approval", "transcript", "usage"} <= kinds


async def test_quitting_mid_run_is_recorded_as_stopped(home: Home, project: Path) -> None:
    app = build_dashboard(home, goal="Summarize the files", lead_approves=True, cwd=project)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
    finish_dashboard_recording(app)
    recorder = app.recorder
    assert recorder.available is False and recorder.closed, (recorder, recorder.writer.failed)
    conn = connect(home.root / "history.db")
    rows = conn.execute("SELECT outcome, reason, ended_at FROM runs").fetchall()
    conn.close()
    assert len(rows) == 1, rows
    outcome, reason, ended = rows[0]
    assert outcome in ("stopped", "finished") and reason and ended, (rows, recorder.writer.failed)


async def test_no_history_in_the_dashboard(home: Home, project: Path) -> None:
    app = build_dashboard(home, goal="Summarize the files", history=False, cwd=project)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
    finish_dashboard_recording(app)
    assert not (home.root / "history.db").exists()


async def test_budget_warning_and_stop_are_notified(home: Home, project: Path) -> None:
    budget = Budget(0.01, model="claude-sonnet-5-5")  # offline tokens priced as Sonnet's
    app = build_dashboard(
        home, goal="Summarize the files", lead_approves=True, cwd=project, budget=budget
    )
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + scaled(GUARD)
        while not budget.stopped:
            assert time.monotonic() < deadline, "the budget never stopped the run"
            await pilot.pause(0.1)
        await pilot.pause(0.1)
        titles = [n.title for n in app._notifications]
        messages = " ".join(n.message for n in app._notifications)
        assert titles.count("Budget") >= 2
        assert "80% of the budget" in messages and "Budget reached" in messages
        bar = app.screen.query_one("StatusBar")
        assert bar.styles.background != type(bar)().styles.background
        paused = [a for a in app.runtime.snapshot() if a.last_activity == "paused: budget"]
        assert paused
        assert app.has_class("-budget-stopped")
        # The person raises the budget from the palette.
        await pilot.press("ctrl+p")
        await pilot.pause()
        for key in "Raise budget":
            await pilot.press(key if key != " " else "space")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.2)
        for key in "100":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert budget.limit == 100.0
        assert not app.has_class("-budget-stopped")
        deadline = time.monotonic() + scaled(GUARD)
        while not app.recorder.team_deleted:
            assert time.monotonic() < deadline, "the team never finished after the raise"
            await pilot.pause(0.1)
    finish_dashboard_recording(app)


async def test_recorded_runs_replay_from_the_dashboards_palette(home: Home) -> None:
    from app.archive import start_run
    from app.dashboard.screens.leader import LeaderScreen
    from app.dashboard.screens.replay import ReplayScreen
    from app.runtime.events import MessageSent, StatusChanged

    earlier = start_run(home, None, source="headless", goal="an earlier run")
    earlier.set_team("old-team")
    earlier.on_event(StatusChanged("worker", "running"))
    done = MessageSent("old-team", "worker", "team-lead", "all done here", None, None, "1")
    earlier.on_event(done)
    earlier.close("finished", "team finished")

    app = build_dashboard(home)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        for key in "Replay run 1":
            await pilot.press("space" if key == " " else key)
        await pilot.pause(0.5)
        await pilot.press("enter")
        deadline = time.monotonic() + scaled(10)
        while not isinstance(app.screen, ReplayScreen):
            assert time.monotonic() < deadline, "the run was not opened"
            await pilot.pause(0.1)
        replay = app.screen.replay
        assert replay.run.goal == "an earlier run" and replay.run.team == "old-team"
        assert any(e.text == "all done here" for e in replay.events)
        await pilot.press("q")  # closes the replay, not the dashboard
        await pilot.pause(0.1)
        assert isinstance(app.screen, LeaderScreen) and app.is_running
        # The run being recorded now is listed too, and plays as far as it went.
        await pilot.press("escape", "ctrl+p")
        await pilot.pause(0.2)
        for key in f"Replay run {app.recorder.run_id}":
            await pilot.press("space" if key == " " else key)
        await pilot.pause(0.5)
        await pilot.press("enter")
        deadline = time.monotonic() + scaled(10)
        while not isinstance(app.screen, ReplayScreen):
            assert time.monotonic() < deadline, "the live run was not opened"
            await pilot.pause(0.1)
        assert app.screen.replay.run.id == app.recorder.run_id
        await pilot.press("escape")  # esc closes it too
        await pilot.pause(0.1)
        assert isinstance(app.screen, LeaderScreen)
    finish_dashboard_recording(app)


async def test_the_persons_answers_are_credited_to_the_person(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The answer frames come from team-lead (the protocol's sender), but a plan or a
    permission the person answered is theirs in the record and in ``teamdeck history show``."""
    goal = "Summarize what the Python files in this folder do and count their lines"
    app = build_dashboard(home, goal=goal, cwd=project)
    answered: set[str] = set()
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + scaled(GUARD)
        while not app.recorder.team_deleted:
            assert time.monotonic() < deadline, "the team never finished"
            mine = [a for a in app.approvals if a.kind != "shutdown"]
            if mine and mine[0].request_id not in answered:
                answered.add(mine[0].request_id)
                await pilot.press("a")  # the person approves / allows once
            await pilot.pause(0.1)
    finish_dashboard_recording(app)
    conn = connect(home.root / "history.db")
    decided = conn.execute("SELECT kind, agent, decided_by FROM approvals").fetchall()
    conn.close()
    kinds = {kind for kind, _, _ in decided}
    assert {"plan", "permission"} <= kinds, decided
    for kind, agent, by in decided:
        assert by == ("user" if kind in ("plan", "permission") else agent), decided
    assert main(["--home", str(home.root), "history", "show", "last"]) == 0
    shown = capsys.readouterr().out
    lines = [line.split() for line in shown.split("approvals:")[1].splitlines() if line.strip()]
    by_column = lines[0].index("BY")
    for row in lines[1:]:
        if row[0] in ("plan", "permission"):
            assert row[by_column] == "user", shown


async def test_a_goal_typed_into_the_dashboard_is_the_runs_goal(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``teamdeck`` with no goal, then a goal typed into the compose box: the run in
    ``teamdeck history`` carries that goal (it showed "-", issue 30 M7)."""
    typed = "Summarize the files"
    app = build_dashboard(home, lead_approves=True, cwd=project)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.3)
        await pilot.press(*("space" if c == " " else c for c in typed), "enter")
        deadline = time.monotonic() + scaled(GUARD)
        while not app.recorder.team_deleted:
            assert time.monotonic() < deadline, "the team never finished"
            await pilot.pause(0.1)
    finish_dashboard_recording(app)
    capsys.readouterr()
    assert main(["--home", str(home.root), "history"]) == 0
    listed = capsys.readouterr().out
    assert typed in listed and "summarize-files" in listed, listed

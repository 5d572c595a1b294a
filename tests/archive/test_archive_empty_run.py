"""A dashboard opened and closed with nothing done (no goal, no team, no event: the first
thing a newcomer does after ``make run``) leaves no run behind: ``teamdeck history`` listed it
as a run with goal "-", no agent and nothing done (issue 30, newcomer pass). A run with a
goal, or with anything recorded, is kept."""

from __future__ import annotations

from pathlib import Path

from app.archive import connect, start_run
from app.core import Home


def _runs(home: Home) -> list[tuple[str | None, str]]:
    conn = connect(home.root / "history.db")
    try:
        return [(t, str(g)) for t, g in conn.execute("SELECT team, goal FROM runs ORDER BY id")]
    finally:
        conn.close()


def test_a_dashboard_closed_with_nothing_done_leaves_no_run(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    start_run(home, None, source="dashboard").close("stopped", "the dashboard was closed")
    assert _runs(home) == []


def test_a_run_with_a_goal_or_a_team_is_kept(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    start_run(home, None, source="dashboard", goal="Summarize the files").close("stopped")
    recorder = start_run(home, None, source="dashboard")
    recorder.set_team("alpha")
    recorder.close("stopped")
    assert _runs(home) == [(None, "Summarize the files"), ("alpha", "")]

"""Two goals in one dashboard are two runs in the history: each with its team, its goal and
only its own events (issue 19, item 5)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.core import Home
from app.dashboard.launch import build_dashboard
from app.dashboard.recording import finish_dashboard_recording
from app.runtime.events import TeamLifecycle
from tests.archive.conftest import rows
from tests.timing import scaled

GUARD = 90.0
FIRST = "Describe the python files in this project"
SECOND = "Describe the markdown docs in this project"


def history(home: Home, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """``teamdeck history [args] --json``, read back."""
    capsys.readouterr()
    assert main(["--home", str(home.root), "history", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


async def test_two_goals_in_one_dashboard_are_two_runs(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "guide.md").write_text("# Guide\n\nHow to use it.\n")
    app = build_dashboard(home, goal=FIRST, lead_approves=True, cwd=project)
    deleted: list[str] = []  # the teams the runtime deleted, in order

    def on_event(event: object) -> None:
        if isinstance(event, TeamLifecycle) and event.event == "deleted":
            deleted.append(event.team)

    assert app.runtime is not None
    app.runtime.subscribe(on_event)
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + scaled(GUARD)
        while not deleted:
            assert time.monotonic() < deadline, "the first team never finished"
            await pilot.pause(0.1)
        await pilot.pause(0.3)
        await pilot.press("n")  # the person types the next goal into the same dashboard
        await pilot.pause(0.1)
        for key in SECOND:
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        deadline = time.monotonic() + scaled(GUARD)
        while len(deleted) < 2:
            assert time.monotonic() < deadline, "the second team never finished"
            await pilot.pause(0.1)
    finish_dashboard_recording(app)

    runs = history(home, capsys)
    by_team = {r["team"]: r for r in runs}
    assert len(runs) == 2, runs
    assert set(by_team) == {"describe-python-files", "describe-markdown-docs"}, runs
    first, second = by_team["describe-python-files"], by_team["describe-markdown-docs"]
    assert (first["goal"], second["goal"]) == (FIRST, SECOND)
    assert (first["outcome"], second["outcome"]) == ("finished", "finished")
    assert first["source"] == second["source"] == "dashboard"
    assert first["id"] < second["id"]

    for run, own, other in ((first, FIRST, SECOND), (second, SECOND, FIRST)):
        run_id = run["id"]
        # Each approval once, in its own run only.
        approvals = rows(home, "SELECT request_id FROM approvals WHERE run_id = ?", run_id)
        ids = [r for (r,) in approvals]
        assert ids and len(ids) == len(set(ids)), (run_id, ids)
        asked = rows(
            home,
            "SELECT target, COUNT(*) FROM events WHERE run_id = ? AND kind = 'approval'"
            " AND json_extract(data, '$.resolved') = 0 GROUP BY target",
            run_id,
        )
        assert asked and all(n == 1 for _, n in asked), (run_id, asked)
        # Each message once.
        dup = rows(
            home,
            "SELECT agent, target, text, COUNT(*) FROM events WHERE run_id = ?"
            " AND kind = 'message' GROUP BY agent, target, frame, text HAVING COUNT(*) > 1",
            run_id,
        )
        assert dup == [], (run_id, dup)
        # Its own team's lifecycle and its own goal only.
        teams = rows(
            home,
            "SELECT target, frame FROM events WHERE run_id = ? AND kind = 'team'",
            run_id,
        )
        assert teams == [(run["team"], "created"), (run["team"], "deleted")], (run_id, teams)
        shown = history(home, capsys, "show", str(run_id))
        text = json.dumps(shown)
        assert other not in text, run_id
        assert own in text, run_id


class _Runtime:
    """What the recorder asks of a runtime: its events and its agents (the lead only)."""

    team = None
    model = "claude-test"

    def subscribe(self, listener: Any) -> Any:
        return lambda: None

    def snapshot(self) -> list[Any]:
        from app.runtime.api import AgentSnapshot

        return [AgentSnapshot("team-lead", None, "idle", is_lead=True)]


def test_a_team_created_after_a_deletion_starts_the_next_run(home: Home) -> None:
    """The same team name twice (the same goal typed again) is still two runs; the person's
    message that set the second goal, and what follows it, are the second run's."""
    from app.archive import start_run
    from app.runtime.events import StatusChanged, TranscriptEntry

    recorder = start_run(home, _Runtime(), source="dashboard", goal="count the files")
    for event in (
        TeamLifecycle("count-files", "created"),
        StatusChanged("team-lead", "running"),
        TeamLifecycle("count-files", "deleted"),
        TranscriptEntry("team-lead", "user", "count the files"),
        StatusChanged("team-lead", "running"),
        TeamLifecycle("count-files", "created"),
        TeamLifecycle("count-files", "deleted"),
    ):
        recorder.on_event(event)
    recorder.close("finished", "team finished")
    runs = rows(home, "SELECT id, team, goal, outcome, source, model FROM runs ORDER BY id")
    assert [r[1:] for r in runs] == [
        ("count-files", "count the files", "finished", "dashboard", "claude-test"),
        ("count-files", "count the files", "finished", "dashboard", "claude-test"),
    ]
    first, second = (r[0] for r in runs)
    kinds = "SELECT kind, frame FROM events WHERE run_id = ? ORDER BY id"
    assert rows(home, kinds, first) == [
        ("team", "created"),
        ("status", "running"),
        ("team", "deleted"),
    ]
    assert rows(home, kinds, second) == [
        ("transcript", "user"),
        ("status", "running"),
        ("team", "created"),
        ("team", "deleted"),
    ]
    counts = "SELECT events FROM runs ORDER BY id"
    assert [n for (n,) in rows(home, counts)] == [3, 4]

"""Leave running -> ``teamdeck attach`` -> finished is one run in one archive (issue 30, M7):
the run that left the team goes on in the attaching dashboard -- same row, goal kept, the
events before the attach kept, the attach an event -- so ``teamdeck history`` lists it once
and ``history show`` / the replay hold the task completed before the attach."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from app.archive import connect
from app.cli import main as cli
from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.dashboard.recording import finish_dashboard_recording
from app.dashboard.screens.quit import QuitScreen
from tests.timing import scaled

GOAL = "Describe the python files in this project"
GUARD = 120.0  # a few Python processes on a loaded 2-core machine


def _agent_pids(home: Home) -> list[int]:
    found = subprocess.run(
        ["pgrep", "-f", f"--home {home.root} agent"], capture_output=True, text=True
    )
    return [int(pid) for pid in found.stdout.split()]


@pytest.fixture
def teammates_ended(home: Home) -> object:
    yield
    for pid in _agent_pids(home):  # only this test's home's teammate processes
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def _until(pilot: Pilot[None], check: object, what: str) -> None:
    deadline = time.monotonic() + scaled(GUARD)
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        await pilot.pause(0.1)


def _completed(home: Home, team: str | None) -> list[str]:
    if not team or home.teams.get(team) is None:
        return []
    return [t.subject for t in home.tasks(team).list() if t.status == "completed"]


@pytest.mark.usefixtures("teammates_ended")
async def test_leave_attach_finish_is_one_run_with_its_goal_and_earlier_tasks(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = build_dashboard(home, goal=GOAL, cwd=project, teammate_backend="process")
    async with first.run_test(size=(120, 40)) as pilot:
        runtime = first.runtime
        assert runtime is not None
        await _until(
            pilot,
            lambda: (
                _completed(home, runtime.team)
                and any(a.kind == "plan" for a in runtime.approvals())
            ),
            "no task completed with the writer's plan waiting",
        )
        team = runtime.team
        assert team is not None
        done_before = _completed(home, team)
        first.recorder.flush()
        await pilot.press("ctrl+q")
        await _until(pilot, lambda: isinstance(first.screen, QuitScreen), "no quit dialog")
        await pilot.press("l")  # leave it running
        await _until(pilot, lambda: not first.is_running, "the dashboard did not quit")
    finish_dashboard_recording(first)
    assert home.teams.get(team) is not None

    second = build_dashboard(home, team=team, attach=team, teammate_backend="process", cwd=project)
    assert isinstance(second, TeamDeckApp)
    async with second.run_test(size=(120, 40)) as pilot:
        adopted = second.runtime
        assert adopted is not None
        await _until(
            pilot,
            lambda: any(a.kind == "plan" for a in adopted.approvals()),
            "the plan request did not come back",
        )
        plan = next(a for a in adopted.approvals() if a.kind == "plan")
        adopted.approve_plan(plan.request_id)
        await _until(pilot, lambda: second.recorder.team_deleted, "the team never finished")
    finish_dashboard_recording(second)
    totals = {  # (after the lead's final report)
        a.name: (a.input_tokens, a.output_tokens, a.cache_read_tokens, a.cache_write_tokens)
        for a in adopted.snapshot()
    }

    conn = connect(home.root / "history.db")
    runs = conn.execute("SELECT id, goal, outcome FROM runs").fetchall()
    attached, created = conn.execute(
        "SELECT count(*) FILTER (WHERE frame = 'attached'), count(*) FILTER (WHERE frame ="
        " 'created') FROM events WHERE kind = 'team'"
    ).fetchone()
    conn.close()
    assert len(runs) == 1 and runs[0][1:] == (GOAL, "finished"), runs
    assert attached == 1 and created == 1, (attached, created)  # the attach: not a creation
    # What each agent did before the attach is in the run once: its spawn prompt once, and
    # its tokens as its running totals say (the attach re-recorded every teammate's log and
    # the lead's totals as one more model call: the work before it counted twice).
    conn = connect(home.root / "history.db")
    prompts = conn.execute(
        "SELECT agent, count(*) FROM events WHERE kind = 'transcript' AND frame = 'user'"
        " AND text LIKE '%You are the %' GROUP BY agent"
    ).fetchall()
    recorded = {
        agent: (i, o, r, w)
        for agent, i, o, r, w in conn.execute(
            "SELECT agent, sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),"
            " sum(cache_write_tokens) FROM model_calls GROUP BY agent"
        )
    }
    conn.close()
    assert prompts and all(n == 1 for _, n in prompts), prompts
    assert recorded == {name: t for name, t in totals.items() if any(t)}, (recorded, totals)

    monkeypatch.setenv("TEAMDECK_HOME", str(home.root))
    assert cli.main(["history", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["goal"] == GOAL and listed["outcome"] == "finished"
    assert cli.main(["history", "show", str(runs[0][0])]) == 0
    shown = capsys.readouterr().out
    assert "attached" in shown
    for subject in done_before:
        assert subject[:30] in shown, (subject, shown)
    assert shown.count("-> completed") >= len(done_before) + 1  # and the ones after

    # The replay: at the attach, the tasks completed before it are on its board already.
    from app.archive.replay import Replay

    conn = connect(home.root / "history.db")
    replay = Replay.load(conn, str(runs[0][0]))
    at = next(i for i, e in enumerate(replay.events) if e.kind == "team" and e.frame == "attached")
    board = replay.state_at(at).tasks.values()
    conn.close()
    assert {t.subject for t in board if t.status == "completed"} >= set(done_before)


def test_an_attach_goes_on_with_a_demos_run_in_the_home_it_was_started_from(
    tmp_path: Path,
) -> None:
    """A demo's team lives in a temporary home but its run is in teamdeck's own archive: an
    attach on the demo's home goes on with that run there (it opened a second run in the
    demo's home); a task recorded before is not recorded again, one completed since is."""
    from app.archive import start_run
    from app.core.paths import default_home

    own = default_home() / "history.db"
    demo = Home(tmp_path / "demo-home")
    demo.teams.create("crew", lead_session_id="s")
    tasks = demo.tasks("crew")
    first_task = tasks.create("Read the files").id
    second_task = tasks.create("Write the report").id
    left = start_run(demo, None, source="demo", goal="Study the app", path=own)
    left.set_team("crew")
    tasks.update(first_task, status="completed")
    left.close("stopped", "the dashboard was closed")
    # Meanwhile, a teammate process (another writer) completes the second task.
    Home(demo.root).tasks("crew").update(second_task, status="completed")

    attached = start_run(demo, None, source="attach", continue_team="crew")
    assert attached.run_id == left.run_id
    attached.close("finished", "team finished")

    assert not (demo.root / "history.db").exists()
    conn = connect(own)
    runs = conn.execute("SELECT goal, outcome, tasks_done FROM runs").fetchall()
    done = conn.execute(
        "SELECT target FROM events WHERE kind = 'task' AND frame = 'completed' ORDER BY id"
    ).fetchall()
    conn.close()
    assert runs == [("Study the app", "finished", 2)]
    assert done == [(first_task,), (second_task,)]

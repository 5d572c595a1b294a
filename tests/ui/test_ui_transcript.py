"""Transcripts, toasts and the end of a run as the person reads them (issue 10: items 4, 10,
11, 13, the empty first screen, the finished run, tab, and a second goal's team)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_subtests import SubTests
from textual.pilot import Pilot
from textual.widgets._toast import Toast

from app.core import Home
from app.core.protocol import shutdown_approved, wrap_teammate_message
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import runtime_factory
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.confirm import ConfirmScreen
from app.dashboard.team_source import RuntimeSource
from app.runtime.api import AgentSnapshot
from app.runtime.events import TeamLifecycle, TranscriptEntry
from tests.ui.data import TEAM, fixed_clock
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import Steps, ready, screen_text, wait_for
from widgets.message_feed import MessageFeed
from widgets.roster import Roster
from widgets.task_board import TaskBoard
from widgets.transcript import Transcript
from widgets.transcript_tail import TranscriptTail

PLAN_ID = "plan_approval-1767225630000@engineer"


def notes(app: TeamDeckApp) -> list[tuple[str, str]]:
    return [(n.title, str(n.message)) for n in [*app._notifications, *app.waiting_toasts]]


def lead(name: str = "team-lead") -> AgentSnapshot:
    return AgentSnapshot(name=name, color="blue", status="idle", is_lead=True, started_at=T0)


# ------------------------------------------------- items 4, 5, 10, 13 and tab: one app, named steps


async def test_the_leads_pane_views_and_toasts(
    deck: TeamDeckApp, runtime: FakeRuntime, subtests: SubTests
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        # Each step starts with no toast: one left by a step before could expire during
        # the next and shift the toasts it counts.
        step = Steps(pilot, subtests, lambda: (runtime.calls.clear(), deck.clear_notifications()))
        pane = deck.screen.query_one("#lead", TranscriptTail)

        def pane_rows() -> list[str]:
            rows = screen_text(deck).splitlines()
            box = pane.content_region
            return [row[box.x : box.right].rstrip() for row in rows[box.y : box.bottom]]

        # Item 10: frames in words.
        async with step("the lead's transcript shows delivered frames in words"):
            frame = shutdown_approved("shutdown-1795370285536@researcher", "researcher").to_text()
            prompt = "\n\n".join(
                [
                    wrap_teammate_message("researcher", frame, "cyan"),
                    wrap_teammate_message("engineer", "Refresh is in.", "green", "refresh done"),
                ]
            )
            runtime.emit(TranscriptEntry("team-lead", "user", prompt))
            await wait_for(pilot, lambda: "researcher approved shutdown" in screen_text(deck))
            text = screen_text(deck)
            assert "✉ engineer: refresh done — Refresh is in." in text
            assert '"type"' not in text and "teammate_message" not in text
            assert "shutdown-1795370285536" not in text

        # Item 13: the bottom panel.
        async with step("the bottom transcript is labelled as the lead's"):
            await pilot.press("1")
            await pilot.pause()
            text = screen_text(deck)
            assert "team-lead · lead's transcript" in text
            assert "researcher's transcript: enter on its panel" in text

        # More entries than the pane has rows: the newest fill it, the last at the bottom; a
        # line wider than the pane ends in an ellipsis; a failed call is marked; nothing is
        # mounted.
        async with step("the lead's pane draws its newest lines at the bottom, cut to its width"):
            for i in range(15):
                runtime.emit(TranscriptEntry("team-lead", "notice", f"step {i}"))
            call = {"tool": "Bash", "tool_use_id": "b1", "input": {"command": "make test"}}
            runtime.emit(TranscriptEntry("team-lead", "tool_call", "Bash", call))
            failed = {"tool_use_id": "b1", "is_error": True}
            runtime.emit(TranscriptEntry("team-lead", "tool_result", "exit 2", failed))
            runtime.emit(TranscriptEntry("team-lead", "assistant", "word " * 60))
            await wait_for(pilot, lambda: "⚙ Bash  make test  ✗" in screen_text(deck))
            drawn = pane_rows()
            assert drawn[-1].startswith("word word") and drawn[-1].endswith("…")
            assert drawn[-2].startswith("⚙ Bash  make test  ✗")
            assert "step 14" in drawn[-3] and not any("step 0" in row for row in drawn)
            assert not pane.children

        # Issue 30 (low): the lead's pane showed a double ellipsis where its cut fell just
        # after an ellipsis the agent's text already had ("[idle teammates: writer (I cannot
        # c…)…"). Each case is the pane's newest line: its bottom row.
        for before in range(-3, 4):
            async with step(f"a line cut after an agent's own ellipsis ends in one [{before}]"):
                width = pane.content_region.width
                said = "x" * (width - 2 + before) + "… (more)" + " tail" * 20
                runtime.emit(TranscriptEntry("team-lead", "assistant", said))
                await wait_for(pilot, lambda s=said: pane.lines[-1:] == [s])  # type: ignore[misc]
                line = pane_rows()[-1]
                assert "x" * 20 in line, line
                assert "……" not in line and "… …" not in line and line.endswith("…"), line

        # The pane beside the board and the feed keeps the newest entries, a line each (it is
        # redrawn, never reflowed, while the team works); the lead's own view has them all.
        async with step("the lead's pane keeps its newest entries and its view keeps them all"):
            from app.dashboard.screens.leader import LEAD_PANE_ENTRIES

            steps = LEAD_PANE_ENTRIES + 15
            for i in range(steps):
                runtime.emit(TranscriptEntry("team-lead", "notice", f"step {i}"))
            await wait_for(pilot, lambda: f"step {steps - 1}" in screen_text(deck))
            assert pane.lines == [f"step {i}" for i in range(steps - LEAD_PANE_ENTRIES, steps)]
            assert not pane.children  # lines, not widgets
            assert len(deck.transcript("team-lead")) > steps  # the runtime keeps them all
            await pilot.press("0", "enter")  # the lead's own view
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            view = deck.screen.query_one("#transcript", Transcript)
            every = [f"step {i}" for i in range(steps)]
            await wait_for(
                pilot, lambda: [str(c.render()) for c in view.children][-steps:] == every
            )

        async with step("tab moves past the transcript"):
            pane.focus()
            await pilot.press("tab")  # the compose box is closed: no text field takes the focus
            assert deck.focused is deck.screen.query_one("#roster")

        # Item 4: once.
        async with step("a message typed in a teammate's view appears once"):
            await pilot.press("2", "enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            # What the runtime records: the person's message, then the turn that delivers it.
            person = {"source": "person"}
            runtime.emit(TranscriptEntry("engineer", "user", "use the new API", person))
            runtime.emit(TranscriptEntry("engineer", "user", "use the new API"))
            runtime.emit(TranscriptEntry("engineer", "assistant", "Switching to the new API."))
            await wait_for(pilot, lambda: "Switching to the new API." in screen_text(deck))
            assert screen_text(deck).count("use the new API") == 1
            assert "› you: use the new API" in screen_text(deck)

        # The runtime answers a shutdown request with its request id (as ``TeamRuntime``
        # does); the person reads one toast in words, with no id in it.
        async with step("the shutdown toast names no request id"):
            await pilot.press("1", "s")
            await wait_for(pilot, lambda: isinstance(deck.screen, ConfirmScreen))  # asks first
            before = len(notes(deck))
            await pilot.press("y")
            await wait_for(pilot, lambda: len(notes(deck)) > before)
            await pilot.pause(0.2)
            assert runtime.calls[-1][:2] == ("request_shutdown", "researcher")
            assert notes(deck)[before:] == [("", "shutdown requested from researcher")]

        # Item 5: rejecting a plan shows one toast about the rejection: no second toast about
        # the request it answered, no title from the request ("plan approval requested") over
        # a body about the answer.
        async with step("the reject toast's title and body tell one event"):
            await pilot.press("2", "r")
            await pilot.pause(0.2)
            before = len(notes(deck))
            await pilot.press(*"too big", "enter")
            await wait_for(pilot, lambda: len(notes(deck)) > before)
            await pilot.pause(0.3)  # anything the answer's events would add arrives by now
            assert runtime.calls[-1] == ("reject_plan", PLAN_ID, "too big")
            assert notes(deck)[before:] == [("", "engineer's plan rejected")]


# ---------------------------------------------------------------------- item 11: toasts


async def test_a_burst_of_completed_tasks_is_one_toast_off_the_board(
    deck: TeamDeckApp,
) -> None:
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        await ready(pilot)
        tasks = deck.home.tasks(TEAM)
        for task_id in ("2", "3", "4"):
            tasks.update(task_id, status="completed")
        await wait_for(pilot, lambda: any("tasks completed" in t for t, _ in notes(deck)))
        await pilot.pause(0.5)
        completed = [n for n in notes(deck) if "ompleted" in n[0]]
        assert len(completed) == 1 and completed[0][0] == "3 tasks completed"
        await wait_for(pilot, lambda: bool(deck.screen.query(Toast)))
        toast = deck.screen.query(Toast).last()
        # Bottom right, over the lead's pane (issue 19: never over the task board).
        board = deck.screen.query_one("#board")
        assert not toast.region.overlaps(board.region)
        assert deck.screen.query_one("#lead", TranscriptTail).region.contains_region(toast.region)


# ---------------------------------------------------------------------- first screen, end


async def test_the_empty_first_screen_says_what_to_do(tmp_path: Path) -> None:
    runtime = FakeRuntime(team=None, agents=[lead()])
    app = TeamDeckApp(
        Home(tmp_path), RuntimeSource(lambda w, s: runtime), clock=fixed_clock, watch=False
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.loaded)
        text = screen_text(app)
        assert "Type a goal for the lead in the box below" in text and "teamdeck demo" in text
        assert ".venv/bin/teamdeck demo" in text  # after make run, teamdeck is not on PATH


async def test_a_finished_run_says_so_and_what_next(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        runtime.stream("team-lead", "All three files are summarized: see the report above.")
        runtime.emit(TeamLifecycle(TEAM, "deleted"))
        runtime.set_status("team-lead", "idle")
        await wait_for(pilot, lambda: "run finished" in screen_text(deck))
        text = screen_text(deck)
        assert "n new goal · ctrl+q quit" in text
        assert "All three files are summarized" in text
        await pilot.press("n")
        assert deck.focused is deck.screen.query_one("#prompt")


async def test_after_the_run_the_footer_offers_no_steering_keys(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """Issue 30 (low): after the run the footer still offered a/r/v/s/K, with nothing left
    to answer or stop."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        bottom = lambda: screen_text(deck).splitlines()[-1]  # noqa: E731
        await wait_for(pilot, lambda: "s Shutdown" in bottom())
        for approval in runtime.approvals():
            runtime.answer_permission(approval.request_id, False)
        deck.home.teams.delete(TEAM, force=True)
        runtime.emit(TeamLifecycle(TEAM, "deleted"))
        runtime.set_status("team-lead", "idle")
        await wait_for(pilot, lambda: "run finished" in screen_text(deck))
        await wait_for(pilot, lambda: "Shutdown" not in bottom(), 3.0)
        for word in ("Approve", "Reject", "Review", "Shutdown", "Kill"):
            assert word not in bottom(), bottom()
        assert "Help" in bottom()


async def test_the_runs_end_and_an_error_are_shown_whole_in_a_narrow_pane(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """The pane cuts lines at its width, but not what the person must read: an error, and the
    run's end with what to do next (they take the rows they need)."""
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        problem = "the API refused the request: " + "a long explanation " * 4 + "(the end)"
        runtime.emit(TranscriptEntry("team-lead", "error", problem))
        runtime.emit(TeamLifecycle(TEAM, "deleted"))
        runtime.set_status("team-lead", "idle")
        await wait_for(pilot, lambda: "run finished" in screen_text(deck))
        text = lead_pane_text(deck)
        assert "(the end)" in text
        assert "n new goal · ctrl+q quit" in text


async def test_the_final_report_wraps_in_a_narrow_pane(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """The lead's last words before the run's end (its final report) are shown whole at 80x24
    (issue 30, M5: cut to one line, "Final report: - analyst: 151 definitions in 48 fi…")."""
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        report = "Final report: - analyst: 151 definitions in 48 files - " + "more " * 12 + "END"
        runtime.stream("team-lead", report)
        runtime.emit(TeamLifecycle(TEAM, "deleted"))
        runtime.set_status("team-lead", "idle")
        await wait_for(pilot, lambda: "run finished" in screen_text(deck))
        text = lead_pane_text(deck)
        assert "Final report" in text and "END" in text


# ---------------------------------------------------------------------- item 1: second goal


FIRST_GOAL = "Describe the python files in this project"
SECOND_GOAL = "Describe the markdown docs in this project"


async def test_a_second_goals_team_replaces_the_first_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real runtime on the offline model: a first goal's team works, finishes and is
    deleted; the person types a second goal in the same dashboard. While the second team waits
    for the person (the writer's plan), every panel, the board, the feed and the header are the
    second team's, each teammate listed once, and nothing of the first team is left."""
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "alpha.py").write_text('"""Alpha: the first module."""\n')
    (project / "beta.py").write_text('"""Beta: the second module."""\n')
    (project / "guide.md").write_text("# Guide\n\nHow to use it.\n")
    home = Home(tmp_path / "home")
    factory = runtime_factory(home, cwd=project, decider="person")
    app = TeamDeckApp(home, RuntimeSource(factory, goal=FIRST_GOAL), watch=False)

    async def approve_the_writers_plan(pilot: Pilot[None]) -> None:
        await wait_for(pilot, lambda: [a.kind for a in app.approvals] == ["plan"], within=60)
        if app.focused is app.screen.query_one("#prompt"):
            await pilot.press("escape")
        await pilot.press("3", "a")  # the writer is teammate 3
        await wait_for(pilot, lambda: not app.approvals)

    async with app.run_test(size=(120, 40)) as pilot:
        await approve_the_writers_plan(pilot)
        await wait_for(pilot, lambda: "run finished" in screen_text(app), within=60)
        # The header reads the files: it says "deleted" once their removal is read too.
        await wait_for(
            pilot, lambda: "describe-python-files (deleted)" in screen_text(app).splitlines()[0]
        )
        first = screen_text(app)
        assert "alpha.py" in first.split("Messages")[1]  # the first team's reports

        await pilot.press("n", *SECOND_GOAL, "enter")  # a new goal, typed
        await wait_for(pilot, lambda: [a.kind for a in app.approvals] == ["plan"], within=60)
        roster = app.screen.query_one(Roster)
        assert list(roster._panels) == ["team-lead", "researcher", "analyst", "writer"]
        statuses = {a.name: a.status for a in app.agents}
        assert statuses["writer"] == "awaiting approval"
        assert "completed" not in statuses.values()  # nobody of the finished team
        board = app.screen.query_one(TaskBoard)
        await wait_for(pilot, lambda: board.task_ids == ["1", "2", "3"])
        assert board.cells("3")[2] != "completed"  # the second team's #3 is still to do
        feed = app.screen.query_one(MessageFeed)
        lines = feed.lines()
        assert any("guide.md" in line for line in lines)
        assert not any(".py" in line for line in lines), lines  # the first team's are gone
        assert "shutdown" not in " ".join(lines)  # the first team ended with shutdowns
        header = screen_text(app).splitlines()[0]
        assert "describe-markdown-docs" in header and "3 teammates" in header
        assert "describe-python-files" not in header and "(deleted)" not in header

        await approve_the_writers_plan(pilot)
        await wait_for(  # the second team's whole run, then its removal read from the files
            pilot, lambda: "describe-markdown-docs (deleted)" in screen_text(app), within=60
        )


async def test_with_no_team_yet_the_footer_offers_no_steering_keys(tmp_path: Path) -> None:
    """The first screen once the box is left (and ``--claude`` before Claude Code made a
    team): nothing to answer, shut down or kill, so a/r/v/s/K are not offered."""
    runtime = FakeRuntime(team=None, agents=[lead()])
    app = TeamDeckApp(
        Home(tmp_path), RuntimeSource(lambda w, s: runtime), clock=fixed_clock, watch=False
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.loaded)
        await pilot.press("escape")  # out of the compose box: the keys' footer
        bottom = lambda: screen_text(app).splitlines()[-1]  # noqa: E731
        await wait_for(pilot, lambda: "Help" in bottom() and "esc" not in bottom())
        for word in ("Approve", "Reject", "Review", "Shutdown", "Kill"):
            assert word not in bottom(), bottom()
        assert "i Type" in bottom(), bottom()


def lead_pane_text(deck: TeamDeckApp) -> str:
    """What the lead's pane shows, its rows joined by spaces (a wrapped line reads whole)."""
    box = deck.screen.query_one("#lead", TranscriptTail).content_region
    rows = screen_text(deck).splitlines()[box.y : box.bottom]
    return " ".join(row[box.x : box.right].strip() for row in rows)

"""The dashboard as a person meets it, second pass: plans shown as written, the time in a
status, keys on a teammate that has finished, tool results in words (issue 10)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.core import Home, InboxMessage
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.confirm import ConfirmScreen
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.runtime.api import AgentSnapshot, Approval
from app.runtime.events import StatusChanged, TranscriptEntry
from tests.ui.data import fixed_clock
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.compose_box import ComposeBox
from widgets.teammate_panel import TeammatePanel
from widgets.transcript import Transcript
from widgets.transcript_tail import TranscriptTail


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in [*app._notifications, *app.waiting_toasts]]


def lead() -> AgentSnapshot:
    return AgentSnapshot("team-lead", "blue", "idle", is_lead=True, started_at=T0)


def panel(app: TeamDeckApp, name: str) -> str:
    found = [p for p in app.screen.query(TeammatePanel) if p.agent.name == name]
    assert found, f"no panel for {name}"
    return str(found[0].render())


# ---------------------------------------------------------------------- plans as written

LITERAL_PLAN = """## Plan

1. Read `setup.cfg` and __init__.py, then app/__main__.py
2. Keep **the public API** as it is

4. Address the feedback: also cover _private_helper and __init__.py
"""


async def test_plan_review_shows_file_names_and_feedback_as_written(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    runtime.add_approval(
        Approval(
            "plan-7@tester",
            "plan",
            "tester",
            "tester: plan approval",
            body=LITERAL_PLAN,
            created_at=T0 + 1,
        )  # fmt: skip
    )
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("3", "v")  # tester (jump 3), review its request
        await wait_for(pilot, lambda: isinstance(deck.screen, PlanReviewScreen))
        text = screen_text(deck)
        assert "Read setup.cfg and __init__.py, then app/__main__.py" in text
        assert "also cover _private_helper and __init__.py" in text
        assert "init.py" not in text.replace("__init__.py", "")
        # The rest is still Markdown: the heading and the bold lose their marks.
        assert "## Plan" not in text and "**" not in text
        assert "Keep the public API as it is" in text


async def test_model_text_keeps_underscored_names(deck: TeamDeckApp, runtime: FakeRuntime) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        runtime.emit(
            TranscriptEntry("team-lead", "assistant", "Edited __init__.py and **kept** main.")
        )
        await wait_for(pilot, lambda: "Edited __init__.py" in screen_text(deck))
        assert "kept main" in screen_text(deck)


# ---------------------------------------------------------------------- time in a status


async def test_the_timer_counts_the_time_in_the_current_status(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    # The clock reads T0 + 125. The researcher started at T0 and has been idle since T0 + 100;
    # the tester started at T0 and ended (completed) at T0 + 60.
    runtime.agents = [
        replace(a, status_since=T0 + 100) if a.name == "researcher" else a for a in runtime.agents
    ]
    runtime.agents = [
        replace(a, status="completed", ended_at=T0 + 60) if a.name == "tester" else a
        for a in runtime.agents
    ]
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        runtime.emit(StatusChanged("researcher", "idle"))
        await wait_for(pilot, lambda: "idle 0:25" in panel(deck, "researcher"))
        assert "2:05" not in panel(deck, "researcher")  # not the time since it started
        assert "running 2:05" in panel(deck, "team-lead")  # running since T0
        assert "completed 1:00" in panel(deck, "tester")  # a finished one: how long it ran


async def test_a_status_change_restarts_the_timer(deck: TeamDeckApp, runtime: FakeRuntime) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert "idle 2:05" in panel(deck, "researcher")
        runtime.agents = [
            replace(a, status="running", status_since=T0 + 120) if a.name == "researcher" else a
            for a in runtime.agents
        ]
        runtime.emit(StatusChanged("researcher", "running"))
        await wait_for(pilot, lambda: "running 0:05" in panel(deck, "researcher"))


# ---------------------------------------------------------------------- keys on a finished teammate


async def test_kill_on_a_finished_teammate_says_so_without_asking(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        runtime.set_status("tester", "completed")
        await wait_for(pilot, lambda: "completed" in panel(deck, "tester"))
        await pilot.press("3", "K")
        await wait_for(pilot, lambda: "tester has already completed." in notes(deck))
        await pilot.pause(0.1)
        assert not isinstance(deck.screen, ConfirmScreen)
        assert not [c for c in runtime.calls if c[0] == "kill"]


async def test_a_finished_teammates_view_does_not_invite_a_message(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """The teammate shuts down while the person types: the input says so but keeps its focus
    and text (issue 19: the letters still to come stay text); enter sends nothing and says
    why. Opened again, the view starts on the transcript (nothing to type to)."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("1", "enter")  # the researcher's view: it is idle, it reads mail
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        inject = deck.screen.query_one("#inject", ComposeBox)
        await pilot.press("enter")  # the compose box
        assert inject.has_focus and not inject.disabled
        await pilot.press("h", "i")
        runtime.set_status("researcher", "completed")  # it shut down while the person typed
        await wait_for(pilot, lambda: "has completed" in inject.placeholder)
        assert inject.placeholder.startswith("researcher has completed: it reads no more messages")
        assert inject.has_focus and inject.value == "hi"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert not [c for c in runtime.calls if c[0] == "inject_message"]
        assert "message not sent: researcher has finished" in notes(deck)
        assert inject.value == "hi"
        await pilot.press("escape", "escape")  # out of the input, back to the leader view
        await wait_for(pilot, lambda: not isinstance(deck.screen, AgentScreen))
        await pilot.press("1", "enter")  # opened again: the keys have the focus
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        inject = deck.screen.query_one("#inject", ComposeBox)
        assert not inject.has_focus


# ---------------------------------------------------------------------- the first screen


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
async def test_the_first_screen_starts_with_what_to_type_at_80_columns(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """What to type, then the demo's command, whole in the pane's four rows (it was the
    text's last sentence, cut off at 80x24 and 100x30)."""
    runtime = FakeRuntime(team=None, agents=[lead()])
    app = TeamDeckApp(Home(tmp_path / "home"), runtime.source(), clock=fixed_clock, watch=False)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.loaded)
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "Type a goal for the lead in the box below" in text
        assert "ctrl+q, then" in text and ".venv/bin/teamdeck demo" in text, text


# ---------------------------------------------------------------------- tool results in words


async def test_the_leads_team_delete_reads_in_words(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    result = {
        "success": True,
        "message": 'Cleaned up directories and worktrees for team "alpha"',
        "team_name": "alpha",
    }
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        call = {"tool": "TeamDelete", "tool_use_id": "td1", "input": {}}
        runtime.emit(TranscriptEntry("team-lead", "tool_call", "TeamDelete", call))
        runtime.emit(
            TranscriptEntry("team-lead", "tool_result", json.dumps(result), {"tool_use_id": "td1"})
        )
        expected = 'Cleaned up directories and worktrees for team "alpha"'
        await wait_for(pilot, lambda: expected in screen_text(deck))
        lead = screen_text(deck).split("⚙ TeamDelete")[1]
        assert '"success"' not in lead and "{" not in lead
        pane = deck.screen.query_one("#lead", TranscriptTail)
        assert pane.lines[-1] == f"⚙ TeamDelete  ✓  {expected}"


# ---------------------------------------------------------------------- one watcher worker


async def test_the_app_follows_the_files_with_one_worker(deck: TeamDeckApp) -> None:
    """Each change of the team's files used to start one more "watcher" worker (dozens in a
    run), each reading every change again."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        box = deck.home.mailbox("alpha")
        for n in range(4):
            box.append(
                "tester", InboxMessage(sender="team-lead", text=f"note {n}", summary=f"n{n}")
            )
            await wait_for(pilot, lambda n=n: f"n{n}" in screen_text(deck))  # type: ignore[misc]
        deck.home.tasks("alpha").create("One more task")
        await wait_for(pilot, lambda: "One more task" in screen_text(deck))
        watchers = [w for w in deck.workers if w.name == "watcher"]
        assert len(watchers) == 1, [w.name for w in deck.workers]


# ---------------------------------------------------------------------- a permission in words


async def test_a_shell_permission_shows_the_command_line(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    runtime.add_approval(
        Approval(
            "perm-8@tester", "permission", "tester", "tester: Bash",
            body='{\n  "command": "wc -l app.py",\n  "description": "Count lines"\n}',
            tool_name="Bash", tool_input={"command": "wc -l app.py", "description": "Count lines"},
            suggestion="Bash(wc:*)", created_at=T0 + 1,
        )
    )  # fmt: skip
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("3", "v")
        await wait_for(pilot, lambda: isinstance(deck.screen, PermissionScreen))
        text = screen_text(deck)
        dialog = text.split("wants to use")[1].split("Always allow adds")[0]
        assert "$ wc -l app.py" in dialog and "description: Count lines" in dialog
        assert '"command"' not in dialog and "{" not in dialog
        await pilot.press("n")  # asks why first; enter alone: no reason
        await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: ("answer_permission", "perm-8@tester", False, False) in runtime.calls
        )


# ---------------------------------------------------------------------- enter opens the selection


async def test_enter_opens_the_selected_teammate_from_the_transcript(deck: TeamDeckApp) -> None:
    """After a dialog, focus is often back on the lead's transcript: enter there opens the
    selected teammate's view too, as the border says ("enter on its panel")."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("1")
        deck.screen.query_one("#lead", TranscriptTail).focus()
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        assert deck.screen.agent == "researcher"


# ---------------------------------------------------------------------- quitting while agents work


def test_an_entry_for_a_transcript_not_attached_is_dropped() -> None:
    """Quitting while agents work: their last events can reach a view whose transcript is no
    longer attached to the app. That raised MountError (a traceback, exit status 1)."""
    transcript = Transcript(id="lead")
    call = {"tool": "TaskList", "tool_use_id": "late", "input": {}}
    transcript.add_entry(TranscriptEntry("team-lead", "tool_call", "TaskList", call))
    transcript.add_entry(TranscriptEntry("team-lead", "notice", "late"))
    transcript.add_text("late text")
    assert not transcript.children

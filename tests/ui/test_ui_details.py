"""Stale details (issue 19, item 18): a DM the panel shows is dropped once answered; the board
names the current task, never a completed one; a visible focus after tab; ctrl+c says how to
quit; the lead's counts start again with each goal."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.pilot import Pilot

from app.core import InboxChanged, InboxMessage, TaskChanged
from app.dashboard.app import TeamDeckApp
from app.dashboard.event_burst import digest
from app.dashboard.store import Store
from app.runtime.api import AgentSnapshot
from app.runtime.events import RunFinished, StatusChanged, TeamLifecycle, UsageChanged
from tests.ui.data import TEAM, build_home, ts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import wait_for
from tests.ui.test_ui_toasts import FakeClock
from widgets.task_board import TaskBoard


async def loaded(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    return app


def test_a_dm_about_a_finished_task_leaves_the_panel(tmp_path: Path) -> None:
    """The lead's panel showed "✉ engineer: Task #3 unblocked" long after #3 was done."""
    home = build_home(tmp_path)
    store = Store(home)
    store.load()
    note = InboxMessage(
        sender="team-lead", text="go ahead", summary="Task #3 unblocked", timestamp=ts(95)
    )
    home.mailbox(TEAM).append("engineer", note)
    delta = store.apply([InboxChanged(TEAM, "engineer")])
    assert delta is not None and delta.last_dm["team-lead"] == "✉ engineer: Task #3 unblocked"
    home.tasks(TEAM).update("3", status="completed")
    delta = store.apply([TaskChanged(TEAM, "3")])
    assert delta is not None and "team-lead" not in delta.last_dm  # superseded
    assert delta.last_dm["researcher"] == "✉ engineer: entry points found"  # not about a task


async def test_the_board_names_the_current_task_not_a_completed_one(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        board = deck.screen.query_one(TaskBoard)
        await wait_for(pilot, lambda: not board.filling)
        await pilot.pause()
        assert board.border_subtitle == "#2 Design token refresh"  # #1 is completed
        tasks = deck.home.tasks(TEAM)
        for task_id in ("2", "3", "4", "5", "7"):
            tasks.update(task_id, status="completed")
        await wait_for(pilot, lambda: not board.border_subtitle)  # all done: nothing named


async def test_tab_shows_where_the_focus_is(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        for _ in range(4):
            await pilot.press("tab")
            focused = deck.screen.focused
            assert focused is not None
            panel = focused if focused.id in ("approvals", "board", "feed", "lead") else None
            panel = panel or next((a for a in focused.ancestors_with_self if a.id), focused)
            if panel.id in ("roster", "approvals", "board", "feed", "lead"):
                assert panel.styles.border_top[0] == "heavy", panel.id
            elif panel.id == "prompt":
                assert panel.styles.background != deck.screen.query_one("#feed").styles.background


async def test_ctrl_c_says_how_to_quit(deck: TeamDeckApp) -> None:
    FakeClock(deck)  # the first answer stays: the second waits (counted), not replaces it
    async with deck.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        for where in ("keys", "typing"):
            if where == "typing":
                await pilot.press("i", "h", "i")
            before = len(deck._notifications) + len(deck.waiting_toasts)
            await pilot.press("ctrl+c")
            await pilot.pause()
            told = [str(n.message) for n in [*deck._notifications, *deck.waiting_toasts]]
            assert len(told) == before + 1 and "ctrl+q to quit" in told[-1], where
            assert deck.is_running


def test_a_run_end_marks_where_the_next_goal_counts_from() -> None:
    news = digest([RunFinished(True, "all tasks completed")])
    assert news.run_ended
    assert not digest([TeamLifecycle("t", "created")]).run_ended


async def test_the_leads_counts_start_again_with_a_new_goal(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)

        def lead() -> AgentSnapshot:
            return next(a for a in deck.agents if a.is_lead)

        def spend(tokens: int, tools: int, cost: float) -> None:
            runtime.agents = [
                replace(a, input_tokens=tokens, tool_calls=tools, cost_usd=cost, model_calls=tools)
                if a.is_lead
                else a
                for a in runtime.agents
            ]
            runtime.emit(UsageChanged(lead().name, tokens, 0, 0, 0, 0, tools))

        spend(5000, 7, 0.5)
        await wait_for(pilot, lambda: lead().input_tokens == 5000)
        runtime.emit(RunFinished(True, "all tasks completed"))
        await pilot.pause(0.2)
        assert lead().input_tokens == 5000  # the finished goal's counts stay until the next
        runtime.emit(TeamLifecycle(TEAM, "created"))  # the next goal's team
        spend(5300, 9, 0.6)
        await wait_for(pilot, lambda: lead().input_tokens == 300)
        assert lead().tool_calls == 2 and abs((lead().cost_usd or 0) - 0.1) < 1e-9


async def test_the_leads_counts_start_again_when_its_team_was_deleted(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """What the runtime sends as a goal ends: the team deleted, then the lead idle (it sends
    no RunFinished), its lead's snapshot counting in place. The second goal's lead counted on
    from the first (seen driving two goals at 120x40: 779 tokens and 21 tools at the first
    goal's end, 1.3k and 35 in the second), then, kept by reference, showed 0 throughout."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)

        def lead() -> AgentSnapshot:
            return next(a for a in deck.agents if a.is_lead)

        def spend(tokens: int, tools: int) -> None:
            live = next(a for a in runtime.agents if a.is_lead)  # counts in place, as the
            live.input_tokens, live.tool_calls = tokens, tools  # runtime's session does
            runtime.emit(UsageChanged(lead().name, tokens, 0, 0, 0, 0, tools))

        spend(5000, 7)
        await wait_for(pilot, lambda: lead().input_tokens == 5000)
        runtime.emit(TeamLifecycle(TEAM, "deleted"))
        runtime.emit(StatusChanged(lead().name, "idle"))
        await pilot.pause(0.2)
        assert lead().input_tokens == 5000  # the finished goal's counts stay until the next
        runtime.emit(TeamLifecycle(TEAM, "created"))  # the next goal's team
        spend(5300, 9)
        await wait_for(pilot, lambda: lead().input_tokens == 300)
        assert lead().tool_calls == 2


def test_system_notes_are_not_a_teammates_words() -> None:
    from widgets.system_notes import split_notes

    prompt = (
        '<teammate_message teammate_id="analyst">Task #2 done</teammate_message>\n\n'
        "[idle teammates: writer (blocked)]\n\n[notes: researcher completed task #1]"
    )
    said, notes = split_notes(prompt)
    assert "Task #2 done" in said and "[" not in said.replace("<", "")[:1]
    assert notes == ["[idle teammates: writer (blocked)]", "[notes: researcher completed task #1]"]
    assert split_notes("plain [not a note] text") == ("plain [not a note] text", [])


async def test_the_leads_pane_draws_system_notes_apart() -> None:
    from textual.app import App, ComposeResult

    from app.runtime.events import TranscriptEntry
    from widgets.transcript_tail import TranscriptTail

    class Pane(App[None]):
        def compose(self) -> ComposeResult:
            yield TranscriptTail(id="lead")

    app = Pane()
    async with app.run_test(size=(100, 10)):
        tail = app.query_one(TranscriptTail)
        text = '<teammate_message teammate_id="analyst">Task #2 done</teammate_message>'
        tail.show("team-lead", [TranscriptEntry("team-lead", "user", f"{text}\n\n[notes: x]", {})])
        assert tail.lines == ["› ✉ analyst: Task #2 done", "[notes: x]"]
        assert [line.kind for line in tail._lines] == ["user", "notice"]

"""A busy team redraws only what changed (issue 21): selecting a teammate rebuilds the footer
only when what ``a`` answers changed, and a new message in the feed moves nothing on screen
(no layout of the whole screen) while the feed still shows it and follows the newest line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.widget import Widget

from app.core import InboxMessage
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.leader import LeaderScreen
from app.dashboard.store_delta import StoreDelta
from app.runtime.api import Approval
from tests.ui.data import TEAM, agents, make_app, transcripts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.message_feed import MessageFeed
from widgets.roster import Roster
from widgets.task_board import TaskBoard
from widgets.teammate_panel import TeammatePanel
from widgets.transcript_tail import TranscriptTail


def footer_rebuilds(screen: LeaderScreen) -> list[int]:
    """Counts the screen's footer rebuilds (each ``refresh_bindings`` rebuilds it)."""
    count = [0]
    original = screen.refresh_bindings

    def counting() -> None:
        count[0] += 1
        original()

    screen.refresh_bindings = counting  # type: ignore[method-assign]
    return count


async def test_selecting_teammates_without_requests_leaves_the_footer_alone(
    tmp_path: Path,
) -> None:
    runtime = FakeRuntime(TEAM, agents(), [], transcripts())
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, LeaderScreen)
        rebuilds = footer_rebuilds(screen)
        selected = []
        for _ in range(3):
            await pilot.press("shift+down")
            await pilot.pause()
            selected.append(app.selected)
        assert len(set(selected)) == 3  # the selection moved ...
        assert rebuilds[0] == 0  # ... and the footer had nothing new to say
        runtime.add_approval(
            Approval("perm-9@researcher", "permission", "researcher", "researcher: Bash",
                     tool_name="Bash", tool_input={"command": "ls -la"})
        )  # fmt: skip
        await wait_for(pilot, lambda: "▶ researcher: Bash(ls -la) waiting" in screen_text(app))
        assert rebuilds[0] == 0  # the needs-you line names it: the footer stays as it was


async def test_the_needs_line_names_each_selected_teammates_request(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("2")  # engineer: a plan
        await wait_for(pilot, lambda: "▶ engineer's plan waiting" in screen_text(deck))
        await pilot.press("1")  # researcher: a permission
        await wait_for(pilot, lambda: "▶ researcher: Bash(git" in screen_text(deck))
        await pilot.press("2")
        await wait_for(pilot, lambda: "▶ engineer's plan waiting" in screen_text(deck))


async def test_new_messages_join_the_feed_without_a_layout(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        feed = deck.screen.query_one(MessageFeed)
        layouts: list[str] = []
        original = Widget.refresh

        def refresh(widget: Widget, *regions: Any, **flags: Any) -> Widget:
            if flags.get("layout"):
                layouts.append(type(widget).__name__)
            return original(widget, *regions, **flags)

        feed.refresh = refresh.__get__(feed)  # type: ignore[method-assign]
        box = deck.home.mailbox(TEAM)
        before = feed.item_count
        for i in range(30):
            box.append("engineer", InboxMessage(sender="researcher", text=f"line {i}"))
        await wait_for(pilot, lambda: feed.item_count == before + 30)
        await pilot.pause(0.1)
        assert layouts == []
        assert feed.virtual_size.height == feed.item_count
        assert feed.vertical_scrollbar.window_virtual_size == feed.item_count
        assert feed.max_scroll_y > 0 and feed.is_vertical_scroll_end  # follows the newest
        assert "line 29" in screen_text(deck)


async def test_the_selected_panel_is_scrolled_into_view(tmp_path: Path) -> None:
    team = agents()
    extra = [replace(team[1], name=f"extra-{i}") for i in range(1, 6)]
    deck = make_app(tmp_path, FakeRuntime(TEAM, team + extra, [], transcripts()))
    async with deck.run_test(size=(120, 32)) as pilot:
        await ready(pilot)
        roster = deck.screen.query_one(Roster)
        assert roster.max_scroll_y > 0  # the panels do not all fit
        for _ in range(len(roster.children)):
            await pilot.press("shift+down")
            await pilot.pause()
            panel = next(p for p in roster.query(TeammatePanel) if p.selected)
            assert panel.agent.name == deck.selected
            assert roster.content_region.contains_region(panel.region), deck.selected
        await pilot.press("shift+down")  # back to the lead, at the top
        await pilot.pause()
        assert roster.scroll_offset.y == 0


async def test_a_beat_due_after_the_app_closed_draws_nothing(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
    # A file change kept for a beat whose timer fires after the app closed: the views are gone.
    # (Whether the store's beat is due at once depends on the tokens the last beats spent, which
    # a loaded machine changes; the timer's own call is made here.)
    deck.beat.store(StoreDelta(team=TEAM, open_tasks=1))
    deck.beat.beat()
    assert deck.beat.kept == 0


def lines_drawn(widget: Any) -> list[int]:
    """The lines ``widget`` draws from now on (``render_line`` calls), in order."""
    drawn: list[int] = []
    original = widget.render_line

    def render_line(y: int) -> Any:
        drawn.append(y)
        return original(y)

    widget.render_line = render_line
    return drawn


async def test_a_panel_repaints_only_the_lines_that_changed(deck: TeamDeckApp) -> None:
    """A working teammate's counters move at most beats: its other lines are not drawn again,
    and what is drawn reads as before (the whole panel, on screen)."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        panel = next(p for p in deck.screen.query(TeammatePanel) if p.agent.name == "researcher")
        drawn = lines_drawn(panel)
        more = replace(panel.agent, input_tokens=98_000)
        panel.set_agent(more, panel.key, None)
        await pilot.pause()
        assert drawn == [3]  # the counters' line
        assert "100.3k tok" in screen_text(deck)
        assert "✉ engineer: entry poin" in screen_text(deck)  # (cut at the roster's width)
        drawn.clear()
        panel.set_agent(more, panel.key, None)  # the same: nothing to draw
        await pilot.pause()
        assert drawn == []


async def test_a_panel_with_no_width_draws_a_blank_line(deck: TeamDeckApp) -> None:
    """A layout can leave a panel no columns for a frame (a narrowing roster): Textual then
    draws a line as no strips, and the panel's line drawing raised IndexError (seen in
    bench/live.py's key press run)."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        panel = next(p for p in deck.screen.query(TeammatePanel) if p.agent.name == "researcher")
        panel.styles.width = 0
        await pilot.pause()
        assert panel.size.width == 0
        assert panel.render_line(0).cell_length == 0
        panel.styles.width = "1fr"
        await pilot.pause()
        assert "researcher" in panel.render_line(0).text


async def test_selecting_a_teammate_repaints_the_leads_pane_border_only(
    deck: TeamDeckApp,
) -> None:
    """The lead's pane names the selected teammate in its border: a selection repaints that
    row, not the pane's lines."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        pane = deck.screen.query_one("#lead", TranscriptTail)
        drawn = lines_drawn(pane)
        for name, key in (("researcher", "1"), ("engineer", "2")):
            await pilot.press(key)
            await pilot.pause()
            assert f"{name}'s transcript: enter on its panel" in screen_text(deck)
        assert drawn == []


async def test_a_changed_task_is_redrawn_and_the_rows_around_it_are_kept(
    deck: TeamDeckApp,
) -> None:
    """The board draws a changed row anew without counting the whole table as changed: what
    it shows is each task as it is now, changed or not."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        board = deck.screen.query_one(TaskBoard)
        await pilot.pause()
        before = screen_text(deck)
        tasks = deck.home.tasks(TEAM)
        for status in ("in_progress", "completed", "pending"):
            tasks.update("5", status=status, owner="tester")
            await wait_for(pilot, lambda s=status: board.cells("5")[2] == s)
            await pilot.pause()
            rows = {line.split("│")[1].split()[0]: line for line in _board_lines(deck)}
            assert status in rows["5"] and "tester" in rows["5"]
            for other in ("1", "2", "3", "4"):  # as they were
                assert rows[other] in before


def _board_lines(app: TeamDeckApp) -> list[str]:
    """The board's rows on screen (each starts with its task id)."""
    region = app.screen.query_one(TaskBoard).region
    lines = screen_text(app).splitlines()[region.y : region.bottom]
    return [
        line for line in lines if line.count("│") >= 2 and line.split("│")[1].strip()[:1].isdigit()
    ]

"""The live views repaint only the rows that changed (``row_paint.RowCompositor``): what reaches
the terminal is what Textual's own partial update would write, and a widget no changed row
touches is not rendered at all."""

from __future__ import annotations

import gc
import random
from dataclasses import replace
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.segment import ControlType, Segment
from rich.style import Style
from textual._compositor import Compositor, CompositorUpdate
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from app.core import InboxMessage
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.row_paint import RowCompositor, _fill
from tests.ui.data import TEAM
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, wait_for
from widgets.message_feed import MessageFeed
from widgets.task_board import TaskBoard
from widgets.teammate_panel import TeammatePanel
from widgets.usage_trend import UsageTrend

Cell = tuple[str, Style | None]


class Terminal:
    """A terminal's cells, written by Textual's updates as a terminal would be."""

    def __init__(self, width: int, height: int) -> None:
        self.cells: list[list[Cell]] = [[(" ", None)] * width for _ in range(height)]

    def write(self, update: CompositorUpdate, console: Console) -> None:
        x = y = 0
        for segment in update.__rich_console__(console, console.options):
            if segment.control:
                for code, *args in segment.control:
                    if code == ControlType.CURSOR_MOVE_TO:
                        x, y = args
                continue
            if segment.text == "\n":
                continue
            for char in segment.text:
                if 0 <= y < len(self.cells) and 0 <= x < len(self.cells[y]):
                    self.cells[y][x] = (char, segment.style)
                x += cell_len(char)


def full(app: TeamDeckApp) -> Terminal:
    """The screen as a full repaint draws it."""
    width, height = app.size
    terminal = Terminal(width, height)
    terminal.write(app.screen._compositor.render_full_update(), app.console)
    return terminal


async def test_a_working_team_painted_by_rows_reads_as_a_full_repaint(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """Every update the live view draws while the team works (panels, feed, the lead's
    pane, the selection moving) goes to one terminal; it ends as a full repaint draws it."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        compositor = deck.screen._compositor
        assert isinstance(compositor, RowCompositor)
        terminal = full(deck)
        partial = [0]
        render_update = compositor.render_update

        def drawn(*args: Any, **kwargs: Any) -> Any:
            update = render_update(*args, **kwargs)
            if update is not None:
                partial[0] += type(update).__name__ == "ChopsUpdate"
                terminal.write(update, deck.console)
            return update

        compositor.render_update = drawn  # type: ignore[method-assign]
        box = deck.home.mailbox(TEAM)
        for step in range(12):
            runtime.agents = [
                replace(a, input_tokens=a.input_tokens + 1000 * step) for a in runtime.agents
            ]
            runtime.set_status("researcher", "running" if step % 2 else "idle")
            runtime.stream("team-lead", f"step {step} of the plan. ")
            box.append("engineer", InboxMessage(sender="researcher", text=f"note {step}"))
            await pilot.press("shift+down")
            await pilot.pause(0.05)
        await wait_for(pilot, lambda: deck.beat.kept == 0)
        await pilot.pause(0.2)
        assert partial[0] > 10  # the rows were painted by parts ...
        assert terminal.cells == full(deck).cells  # ... into what a full repaint draws


async def test_any_changed_regions_paint_what_textual_paints(deck: TeamDeckApp) -> None:
    """For random sets of changed regions (lines, whole widgets, rectangles anywhere), the
    row compositor writes the same cells as Textual's partial update."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        compositor = deck.screen._compositor
        width, height = deck.size
        widgets = [region for region, _ in compositor.visible_widgets.values()]
        rng = random.Random(7)

        def some_region() -> Region:
            pick = rng.random()
            if pick < 0.3:
                return rng.choice(widgets)
            region = rng.choice(widgets)
            if pick < 0.7:  # a line of a widget
                return Region(region.x, region.y + rng.randrange(max(1, region.height)),
                              region.width, 1)  # fmt: skip
            x, y = rng.randrange(width), rng.randrange(height)
            return Region(x, y, rng.randint(1, width - x), rng.randint(1, height - y))

        for _ in range(60):
            regions = {some_region() for _ in range(rng.randint(1, 6))}
            ours, textual = full(deck), full(deck)
            compositor._dirty_regions = set(regions)
            mine = compositor.render_partial_update()
            compositor._dirty_regions = set(regions)
            theirs = Compositor.render_partial_update(compositor)
            assert mine is not None and theirs is not None
            ours.write(mine, deck.console)
            textual.write(theirs, deck.console)
            assert ours.cells == textual.cells, regions


async def test_changes_at_two_corners_render_only_the_widgets_there(deck: TeamDeckApp) -> None:
    """A panel's line at the top left and the feed's newest line at the right: the board and
    the trend between them are not rendered (Textual's box around both rendered them)."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = deck.screen
        rendered: list[str] = []
        original = Widget.render_lines

        def render_lines(widget: Widget, crop: Region) -> Any:
            rendered.append(type(widget).__name__)
            return original(widget, crop)

        panel = screen.query(TeammatePanel).first()
        feed = screen.query_one(MessageFeed)
        screen._compositor._dirty_regions.clear()
        Widget.render_lines = render_lines  # type: ignore[method-assign]
        try:
            panel.refresh(Region(0, 3, panel.size.width, 1))
            feed.refresh(Region(0, feed.size.height - 1, feed.size.width, 1))
            await pilot.pause()
        finally:
            Widget.render_lines = original  # type: ignore[method-assign]
        assert "TeammatePanel" in rendered and "MessageFeed" in rendered
        assert not {TaskBoard.__name__, UsageTrend.__name__} & set(rendered), rendered


async def test_a_container_behind_its_children_is_not_rendered(deck: TeamDeckApp) -> None:
    """A panel's line: the panel is rendered, and no container behind it on that row (the
    roster, the view's columns), whose strip its children would have covered whole; a row
    where a container shows (between the panels) still renders it."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = deck.screen
        rendered: list[Widget] = []
        original = Widget.render_lines

        def render_lines(widget: Widget, crop: Region) -> Any:
            rendered.append(widget)
            return original(widget, crop)

        panel = screen.query(TeammatePanel).first()
        screen._compositor._dirty_regions.clear()
        Widget.render_lines = render_lines  # type: ignore[method-assign]
        try:
            panel.refresh(Region(0, 1, panel.size.width, 1))
            await pilot.pause()
        finally:
            Widget.render_lines = original  # type: ignore[method-assign]
        assert rendered == [panel], rendered


def test_a_strip_painted_whole_is_left_no_reference_cycle() -> None:
    """A widget's row that is one piece whole goes to the screen as it is: dividing it would
    cache ``[strip]`` in the strip, a cycle only a full collection frees, and the collector's
    survivors are frozen (``gc_pauses``): each frame's strips were garbage kept for minutes,
    ~3 MB of a 100-teammate run (issue 33). Two pieces are still divided."""
    whole = Strip([Segment("0123456789")], 10)
    chops: list[dict[int, Strip | None]] = [{0: None}, {0: None, 4: None}]
    cuts = [[0, 10], [0, 4, 10]]
    split = Strip([Segment("abcdefghij")], 10)
    _fill(chops, cuts, 0, 10, 0, [whole, split], lambda y: True)
    assert chops[0][0] is whole
    assert [chops[1][0].text, chops[1][4].text] == ["abcd", "efghij"]  # type: ignore[union-attr]
    gc.collect()
    gc.disable()
    try:
        del whole, chops
        assert gc.collect() == 0  # freed as its references went: nothing left for the collector
    finally:
        gc.enable()

"""The leader view's layout at 60 to 120 columns (issue 30, M6): the roster takes what its
rows need and the board and the feed the rest; at 100x30 the 40-column roster cut task
subjects at 17 characters and owners at 9; at 60x20 the board was cut at "Ow"; a narrower
roster must not cut a panel's badges (its status, its mode). Below 120 columns with 28 rows
or more the roster is a strip above the board (``-strip``); at 80x24 it stays a column."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.dashboard.app import TeamDeckApp
from tests.ui.data import TEAM, agents, make_app, transcripts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.roster import Roster
from widgets.task_board import TaskBoard
from widgets.teammate_panel import TeammatePanel

SIZES = [(60, 20), (80, 24), (100, 30), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_roster_leaves_the_width_to_the_board_and_keeps_its_badges(
    deck: TeamDeckApp, size: tuple[int, int]
) -> None:
    async with deck.run_test(size=size) as pilot:
        await ready(pilot)
        await pilot.pause(0.2)
        screen = deck.screen
        roster = screen.query_one(Roster)
        board = screen.query_one(TaskBoard)
        strip = size == (100, 30)
        assert screen.has_class("-strip") is strip
        if strip:  # above the board, which gets the whole width
            assert roster.region.bottom <= board.region.y, (roster.region, board.region)
            assert board.outer_size.width == size[0], board.outer_size
        else:
            assert roster.outer_size.width <= 31, roster.outer_size  # about 28 columns of rows
        header = [str(c.label) for c in board.columns.values()]
        assert "Owner" in header  # never cut at "Ow"
        total = sum(c.get_render_width(board) for c in board.columns.values())
        assert total <= board.size.width  # no column cut off at the board's right edge
        rows = screen_text(deck).splitlines()
        box = roster.content_region
        panel_rows = [row[box.x : box.right] for row in rows[box.y : box.bottom]]
        text = "\n".join(panel_rows)
        # The statuses whole (the engineer's in its short form where the width asks for it).
        for status in ("idle", "stopping"):
            assert status in text, text
        assert re.search(r"awaiting( approval)?($|[ \n])", text), text
        if strip:  # two panels a row, each with its whole status
            assert "awaiting approval" in text and not text.splitlines()[2].strip(), text
        assert "awaitin…" not in text and "stoppi…" not in text and "pla…" not in text, text
        if size[0] >= 100:
            owners = [board.get_cell_at((row, 3)).plain for row in range(board.row_count)]
            assert "researcher" in owners  # not "research…"
            subjects = [board.get_cell_at((row, 1)).plain for row in range(board.row_count)]
            assert max(len(s) for s in subjects) > 17, subjects


async def test_a_trend_line_cuts_a_long_name_with_an_ellipsis(deck: TeamDeckApp) -> None:
    """At 80x24 the trend's label is 9 cells: "researcher" read "researche", a word cut with
    nothing to say so."""
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("escape", "1")
        await pilot.pause(0.3)
        text = screen_text(deck)
        assert "research… " in text and "researche " not in text, text


async def test_the_strip_keeps_the_selected_panel_in_view_and_redraws_what_it_shows(
    tmp_path: Path,
) -> None:
    """In the strip (two panels a row, six rows high) a team of twenty scrolls: the panel
    selected last is in view, and a tick redraws the panels in view, not the others (the
    column's arithmetic, one panel a row, took the strip's rows for twice as many)."""
    lead, mate, *_ = agents()
    mates = [replace(mate, name=f"worker-{k}") for k in range(1, 21)]
    app = make_app(tmp_path, FakeRuntime(TEAM, [lead, *mates], [], transcripts()))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        roster = app.leader.query_one(Roster)
        assert roster.columns == 2
        name = app.agents[-1].name
        await pilot.press("shift+up")  # wraps to the last teammate
        await wait_for(pilot, lambda: roster.selected == name)
        await pilot.pause(0.2)
        last = next(p for p in roster.query(TeammatePanel) if p.agent.name == name)
        assert roster.region.contains_region(last.region), (roster.region, last.region)
        drawn: list[str] = []
        real = TeammatePanel.redraw

        def counting(self: TeammatePanel) -> None:
            drawn.append(self.agent.name)
            real(self)

        TeammatePanel.redraw = counting  # type: ignore[method-assign]
        try:
            roster.tick()
        finally:
            TeammatePanel.redraw = real  # type: ignore[method-assign]
        assert name in drawn and "worker-1" not in drawn, drawn
        assert len(drawn) <= 2 * roster.scrollable_content_region.height, drawn

"""The leader view's layout at 60 to 120 columns (issue 30, M6): the roster takes what its
rows need and the board and the feed the rest; at 100x30 the 40-column roster cut task
subjects at 17 characters and owners at 9; at 60x20 the board was cut at "Ow"; a narrower
roster must not cut a panel's badges (its status, its mode). Below 120 columns with 28 rows
or more the roster is a strip above the board (``-strip``); at 80x24 it stays a column."""

from __future__ import annotations

import re

import pytest

from app.dashboard.app import TeamDeckApp
from tests.ui.helpers import ready, screen_text
from widgets.roster import Roster
from widgets.task_board import TaskBoard

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

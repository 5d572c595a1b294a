"""``enter`` on a task (issue 30, M2): its detail says what it still waits for. The pass at
100x30 found "waits for #1, #2" on the writer's task with #2 completed (the board's Blocked
column said "#1"): the detail now names the open blockers and the finished ones as done."""

from __future__ import annotations

from pathlib import Path

from app.core import Home
from app.dashboard.screens.leader import LeaderScreen
from app.dashboard.screens.task_detail import TaskScreen
from tests.ui.data import TEAM, build_home, make_app, make_runtime
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.task_board import TaskBoard


async def test_the_task_detail_names_the_blockers_still_open_and_the_done_ones(
    tmp_path: Path,
) -> None:
    home: Home = build_home(tmp_path)
    home.tasks(TEAM).add_dependency("1", "4")  # #4 waits for #3 (open) and #1 (completed)
    deck = make_app(tmp_path, make_runtime())
    async with deck.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        board = deck.screen.query_one(TaskBoard)
        await wait_for(pilot, lambda: "4" in board.task_ids)
        assert board.cells("4")[4] == "#3"  # the board's column: the open one
        board.focus()
        board.move_cursor(row=board.get_row_index("4"))
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, TaskScreen))
        text = screen_text(deck)
        assert "waits for  #3 (#1 done)" in text, text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))

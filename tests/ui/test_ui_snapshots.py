"""Snapshots of every view and dialog at 120x40 and 80x24 (the leader view at 100x30 too: the
roster as a strip), with fixed data and clock.

Regenerate after an intended change with ``pytest tests/ui --snapshot-update`` and look at
the report before committing the new SVGs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.help import HelpScreen
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from tests.ui.data import make_app, make_runtime
from tests.ui.helpers import steady, wait_for
from widgets.approvals import ApprovalsQueue

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])


def deck(tmp_path: Path) -> TeamDeckApp:
    return make_app(tmp_path, make_runtime())


async def settle(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    for widget in app.screen.query(Input):
        widget.cursor_blink = False  # a blinking cursor would make the pictures flaky
    await steady(pilot)


async def open_queue_item(pilot: Pilot[Any], index: int, screen: type) -> None:
    await settle(pilot)
    queue = pilot.app.screen.query_one(ApprovalsQueue)
    queue.focus()
    queue.highlighted = index
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, screen))
    await steady(pilot)


@pytest.mark.parametrize(
    "size", [(120, 40), (100, 30), (80, 24)], ids=["120x40", "100x30", "80x24"]
)
def test_leader_view(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(deck(tmp_path), terminal_size=size, run_before=settle)


@SIZES
def test_agent_view(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("escape", "1", "enter")  # out of the lead's input, then keys
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AgentScreen))
        await settle(pilot)

    assert snap_compare(deck(tmp_path), terminal_size=size, run_before=run_before)


@SIZES
def test_plan_modal(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await open_queue_item(pilot, 0, PlanReviewScreen)

    assert snap_compare(deck(tmp_path), terminal_size=size, run_before=run_before)


@SIZES
def test_permission_modal(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await open_queue_item(pilot, 1, PermissionScreen)

    assert snap_compare(deck(tmp_path), terminal_size=size, run_before=run_before)


@SIZES
def test_help(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("escape", "question_mark")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        await steady(pilot)

    assert snap_compare(deck(tmp_path), terminal_size=size, run_before=run_before)

"""The trend's lines follow the selection: at 80x24 (a short view) only the selected agent's
line shows, at 120x40 every agent's. A line not the selected agent's keeps its class without
being restyled where the class hides nothing (a key press's cost, bench/live.py): these tests
hold that the class still hides the right lines once the view is short, and after resizes."""

from __future__ import annotations

from pathlib import Path

from app.dashboard.app import TeamDeckApp
from tests.ui.data import make_app, make_runtime
from tests.ui.helpers import ready, wait_for
from widgets.usage_trend import TrendRow, UsageTrend


def shown(app: TeamDeckApp) -> list[str]:
    trend = app.leader.query_one(UsageTrend)
    return [row.agent for row in trend.query(TrendRow) if row.display]


async def test_in_a_short_view_only_the_selected_agents_line_shows(tmp_path: Path) -> None:
    app = make_app(tmp_path, make_runtime())
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("1")
        await wait_for(pilot, lambda: shown(app) == ["researcher"])
        await pilot.press("2")
        selected = app.selected
        assert selected is not None and selected != "researcher"
        await wait_for(pilot, lambda: shown(app) == [selected])


async def test_the_lines_follow_a_selection_made_in_a_tall_view_when_it_gets_short(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path, make_runtime())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("1")
        await pilot.press("2")  # moved in a tall view: every line shows
        await wait_for(pilot, lambda: len(shown(app)) == 4)
        selected = app.selected
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: shown(app) == [selected])
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: len(shown(app)) == 4)

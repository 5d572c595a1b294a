"""A key press's own frame stays small while the team works: moving the selection through the
roster scrolls it a page at a time, not on every press past the view's edge (a scroll
arranges the visible screen again and repaints the whole roster). The team's frames keep to a
time budget: each beat reports the CPU its changes took to reach the screen
(``ViewBeat.spent``; the pacing itself is tested in test_view_beat.py)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from app.dashboard.app import TeamDeckApp
from tests.ui.data import TEAM, agents, make_app, transcripts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.roster import Roster
from widgets.teammate_panel import TeammatePanel


async def test_the_roster_scrolls_a_page_at_a_time(tmp_path: Path) -> None:
    team = agents()
    extra = [replace(team[1], name=f"extra-{i}") for i in range(1, 10)]
    deck = make_app(tmp_path, FakeRuntime(TEAM, team + extra, [], transcripts()))
    async with deck.run_test(size=(120, 32)) as pilot:
        await ready(pilot)
        roster = deck.screen.query_one(Roster)
        panels = len(roster.children)
        per_page = roster.scrollable_content_region.height // 4  # a panel is 4 rows
        assert 1 < per_page < panels  # the panels do not all fit
        for key in ("shift+down", "shift+up"):
            offsets = [roster.scroll_offset.y]
            for _ in range(panels):
                await pilot.press(key)
                await pilot.pause()
                panel = next(p for p in roster.query(TeammatePanel) if p.selected)
                assert panel.agent.name == deck.selected
                assert roster.content_region.contains_region(panel.region), deck.selected
                offsets.append(roster.scroll_offset.y)
            scrolls = sum(a != b for a, b in zip(offsets, offsets[1:], strict=False))
            # each page once, and the wrap back to where it started
            assert scrolls <= math.ceil(panels / per_page) + 1, (key, offsets)


async def test_a_beat_reports_how_long_its_changes_took_to_reach_the_screen(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause(0.3)
        spent: list[float] = []
        deck.beat.spent = spent.append  # type: ignore[method-assign]
        runtime.stream("team-lead", "a line for the lead's pane")
        await wait_for(pilot, lambda: spent)
        assert len(spent) == 1 and spent[0] > 0
        assert "a line for the lead's pane" in screen_text(deck)

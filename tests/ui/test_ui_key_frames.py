"""A key press's own frame stays small while the team works: moving the selection through the
roster scrolls it a page at a time, not on every press past the view's edge (a scroll
arranges the visible screen again and repaints the whole roster). The team's frames keep to a
time budget: each beat reports the CPU its changes took to reach the screen
(``ViewBeat.spent``; the pacing itself is tested in test_view_beat.py)."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.dashboard.app import TeamDeckApp
from app.dashboard.loop_turns import INTERVAL
from tests.ui.data import TEAM, agents, make_app, transcripts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.roster import Roster
from widgets.teammate_panel import TeammatePanel
from widgets.usage_trend import TrendRow, UsageTrend


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


async def test_a_total_that_changes_length_lays_nothing_out(tmp_path: Path) -> None:
    """The trend's totals are one right-aligned column with room for any token count: a total
    growing from 0 to 2.5M tokens, and the key presses that redraw the trend, lay nothing out
    (each length change laid the screen out twice, on the key's frame); a longer cost widens
    the column once."""
    runtime = FakeRuntime(TEAM, agents(), [], transcripts())
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause(0.2)
        screen = deck.screen
        layouts: list[bool] = []
        original = screen._refresh_layout

        def counted(*args: Any, **kwargs: Any) -> None:
            layouts.append(True)
            original(*args, **kwargs)

        screen._refresh_layout = counted  # type: ignore[method-assign]
        tester = runtime.agents[3]
        for tokens in (9, 95, 950):  # "0 $0" -> "950 $0"
            tester.input_tokens = tokens
            deck.pull_agents()
            await pilot.press("shift+down")
            await pilot.pause()
        await wait_for(pilot, lambda: "950 $0" in screen_text(deck))
        assert layouts == []
        trend = screen.query_one(UsageTrend)
        assert trend._total_width == len("999.9k $0")
        tester.input_tokens = 2_500_000  # "2.5M $0": no longer, still nothing to lay out
        deck.pull_agents()
        await pilot.press("shift+down")
        await wait_for(pilot, lambda: "2.5M $0" in screen_text(deck))
        assert layouts == []
        tester.cost_usd = 1.5  # "$1.50" is a longer cost: the column widens, once
        deck.pull_agents()
        await pilot.press("shift+down")
        await wait_for(pilot, lambda: "2.5M $1.50" in screen_text(deck))
        await pilot.pause(0.1)
        assert trend._total_width == len("999.9k $1.50") and 1 <= len(layouts) <= 2


async def test_a_selection_move_draws_the_trend_totals_as_they_were(tmp_path: Path) -> None:
    """A key press that moves the selection redraws the trend's selection, not every line's
    newer total: those come with the next tick (they made most key frames repaint eight totals
    while a team worked)."""
    runtime = FakeRuntime(TEAM, agents(), [], transcripts())
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        leader = deck.leader
        tick = leader.tick
        leader.tick = lambda: None  # type: ignore[method-assign]  # the app's ticks wait
        trend = leader.query_one(UsageTrend)
        row = next(r for r in trend.query(TrendRow) if r.agent == "researcher")
        assert row._shown_total == "14.3k $0"
        runtime.agents[1].input_tokens += 100_000
        deck.pull_agents()
        before = deck.selected
        await pilot.press("shift+down")
        await pilot.pause()
        assert deck.selected != before
        assert "114.3k tok" in screen_text(deck)  # the roster has it ...
        assert row._shown_total == "14.3k $0"  # ... the trend, at its tick
        assert [r.has_class("-other") for r in trend.query(TrendRow)] == [
            r.agent != deck.selected for r in trend.query(TrendRow)
        ]
        tick()
        assert row._shown_total == "114.3k $0"


async def test_the_team_threads_yield_the_interpreter_sooner_while_the_dashboard_runs(
    deck: TeamDeckApp,
) -> None:
    """The loop gets the GIL back from a computing thread within ``INTERVAL``, not CPython's
    5 ms, while the dashboard runs; then the process's own interval is back."""
    before = sys.getswitchinterval()
    assert before > INTERVAL
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert sys.getswitchinterval() == INTERVAL
    assert sys.getswitchinterval() == before


async def test_a_key_press_holds_the_teams_threads_until_its_frame(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The team's threads wait from the key to its frame (``input_first``), never longer."""
    from app.runtime.scheduling import input_first

    said: list[str] = []
    waits, served = input_first.person_waits, input_first.person_served

    def person_waits(seconds: float) -> None:
        said.append("waits")
        waits(seconds)

    def person_served() -> None:
        said.append("served")
        served()

    monkeypatch.setattr(input_first, "person_waits", person_waits)
    monkeypatch.setattr(input_first, "person_served", person_served)
    deck = make_app(tmp_path, FakeRuntime(TEAM, agents(), [], transcripts()))
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        said.clear()
        for _ in range(3):
            await pilot.press("shift+down")
            await pilot.pause()
            assert input_first.remaining() == 0  # served once its frame was drawn
        assert said == ["waits", "served"] * 3

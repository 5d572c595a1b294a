"""A hundred teammates: the roster keeps the strips of the panels in view and a page either
side of it, not the team's (issue 33: ~40 KB a panel, the dashboard's memory growing with the
team). Counted, never timed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.ui.data import TEAM, agents, make_app, transcripts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready
from widgets.roster import Roster
from widgets.teammate_panel import TeammatePanel

SIZE = 60


def _team() -> FakeRuntime:
    lead, mate, *_ = agents()
    mates = [replace(mate, name=f"worker-{k}") for k in range(1, SIZE + 1)]
    return FakeRuntime(TEAM, [lead, *mates], [], transcripts())


def _lines(panel: TeammatePanel) -> list[str]:
    return [panel.render_line(y).text for y in range(panel.size.height)]


async def test_panels_far_from_the_view_let_go_of_their_strips(tmp_path: Path) -> None:
    app = make_app(tmp_path, _team())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        roster = app.leader.query_one(Roster)
        panels = list(roster.query(TeammatePanel))
        first = panels[1]
        before = _lines(first)
        # the selection goes through the whole team: every panel is drawn in view once
        for _ in range(SIZE):
            await pilot.press("shift+down")
            await pilot.pause()
        app.leader.tick()
        await pilot.pause()
        holding = [p for p in panels if p._strips]
        assert 0 < len(holding) < SIZE // 3  # not every panel drawn once
        assert not first._strips
        assert set(holding) <= roster._in_view(margin=roster._view_height)  # a page around
        # scrolled back, a panel that let go of its strips draws the same lines
        roster.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert _lines(first) == before


async def test_a_page_scroll_back_reuses_the_strips_of_the_page_it_left(tmp_path: Path) -> None:
    app = make_app(tmp_path, _team())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        roster = app.leader.query_one(Roster)
        top_page = roster._in_view()
        roster.scroll_to(y=roster._view_height, animate=False, immediate=True)
        await pilot.pause()
        app.leader.tick()  # the first page is one page away: out of view, kept
        await pilot.pause()
        kept = {p for p in top_page if p not in roster._in_view()}
        assert kept and all(p._strips for p in kept)
        roster.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert all(p._strips for p in kept)

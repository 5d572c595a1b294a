"""A team of fifty: the dashboard's once-a-second tick costs what changed and what is in view,
not the team's size (issue 33). Counted, never timed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from app.display.format import format_count
from app.display.trends import UsageHistory
from app.runtime.api import AgentSnapshot
from tests.ui.data import TEAM, agents, make_app, transcripts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, wait_for
from widgets.roster import Roster
from widgets.teammate_panel import TeammatePanel
from widgets.usage_trend import MAX_LINES, TrendRow, UsageTrend

SIZE = 50


def _team() -> FakeRuntime:
    lead, mate, *_ = agents()
    mates = [replace(mate, name=f"worker-{k}") for k in range(1, SIZE + 1)]
    return FakeRuntime(TEAM, [lead, *mates], [], transcripts())


async def test_a_tick_with_fifty_teammates_redraws_what_is_in_view(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path, _team())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        trend = app.leader.query_one(UsageTrend)
        app.leader.tick()
        # the first agents' lines and the selected one's: not fifty, which left the roster
        # two rows of the screen
        await wait_for(pilot, lambda: len(trend.query(TrendRow)) == MAX_LINES)
        roster = app.leader.query_one(Roster)
        panels = list(roster.query(TeammatePanel))
        assert len(panels) == len(app.agents)
        app.leader.tick()  # the rows' first drawing since the team's tokens were sampled
        await pilot.pause()

        updates: list[Static] = []
        built: list[TeammatePanel] = []
        real_update, real_lines = Static.update, TeammatePanel._lines

        def counting_update(self: Static, *args: object, **kwargs: object) -> None:
            if isinstance(self.parent, TrendRow):
                updates.append(self)
            real_update(self, *args, **kwargs)  # type: ignore[arg-type]

        def counting_lines(self: TeammatePanel) -> object:
            built.append(self)
            return real_lines(self)

        Static.update = counting_update  # type: ignore[method-assign]
        TeammatePanel._lines = counting_lines  # type: ignore[method-assign,assignment]
        try:
            app.leader.tick()
            await pilot.pause()
        finally:
            Static.update = real_update  # type: ignore[method-assign]
            TeammatePanel._lines = real_lines  # type: ignore[method-assign]
        assert updates == []  # nothing changed: no row rewritten (each would lay out the screen)
        in_view = {p for p in panels if p.region.overlaps(roster.region)}
        assert in_view and len(in_view) < SIZE // 2
        assert set(built) <= in_view  # only panels in view build their lines now
        # one out of view is drawn afresh once it comes into view
        last = panels[-1]
        assert last not in in_view
        roster.scroll_to_widget(last, animate=False, immediate=True)
        await pilot.pause()
        await wait_for(
            pilot, lambda: last.region.overlaps(roster.region) and last._drawn is not None
        )


async def test_moving_the_selection_through_fifty_teammates_lays_nothing_out(
    tmp_path: Path,
) -> None:
    """A key press that selects the next agent repaints what changed: it mounts no trend row
    (the selected agent's row takes the one that left), asks for no layout of the screen
    (each arranged all fifty panels again), and makes the trends of the lines shown only."""
    app = make_app(tmp_path, _team())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        app.leader.tick()
        trend = app.leader.query_one(UsageTrend)
        await wait_for(pilot, lambda: len(trend.query(TrendRow)) == MAX_LINES)
        await pilot.press("shift+down", "shift+down")  # the selection's first drawing
        await pilot.pause()

        layouts: list[str] = []
        rows: list[TrendRow] = []
        made: list[int] = []
        real_refresh, real_row = Widget.refresh, TrendRow.__init__
        real_trends = UsageHistory.trends

        def counting_refresh(self: Widget, *regions: Region, **kwargs: bool) -> Widget:
            if kwargs.get("layout"):
                layouts.append(type(self).__name__)
            return real_refresh(self, *regions, **kwargs)

        def counting_row(self: TrendRow, name: str) -> None:
            rows.append(self)
            real_row(self, name)

        def counting_trends(self: UsageHistory, agents: Sequence[AgentSnapshot]) -> object:
            made.append(len(agents))
            return real_trends(self, agents)

        Widget.refresh = counting_refresh  # type: ignore[method-assign]
        TrendRow.__init__ = counting_row  # type: ignore[method-assign]
        UsageHistory.trends = counting_trends  # type: ignore[method-assign,assignment]
        try:
            for _ in range(MAX_LINES + 3):  # past the first lines: the last row changes agent
                await pilot.press("shift+down")
                await pilot.pause()
            app.leader.tick()
            await pilot.pause()
        finally:
            Widget.refresh = real_refresh  # type: ignore[method-assign]
            TrendRow.__init__ = real_row  # type: ignore[method-assign]
            UsageHistory.trends = real_trends  # type: ignore[method-assign]
        assert app.selected == f"worker-{MAX_LINES + 5}"
        assert rows == []
        assert layouts == []
        assert made and max(made) <= MAX_LINES
        shown = [row.agent for row in trend.query(TrendRow)]
        assert len(shown) == MAX_LINES and app.selected in shown


async def test_fifty_teammates_changing_at_once_build_the_lines_in_view_only(
    tmp_path: Path,
) -> None:
    """Every agent's counters moved (a beat of a busy team): the panels in view make their
    lines again, the others when they come into view, reading as the agent reads then."""
    runtime = _team()
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        roster = app.leader.query_one(Roster)
        panels = list(roster.query(TeammatePanel))
        built: list[TeammatePanel] = []
        real_lines = TeammatePanel._lines

        def counting_lines(self: TeammatePanel) -> object:
            built.append(self)
            return real_lines(self)

        runtime.agents = [replace(a, input_tokens=77_000) for a in runtime.agents]
        TeammatePanel._lines = counting_lines  # type: ignore[method-assign,assignment]
        try:
            app.pull_agents()
            await pilot.pause()
        finally:
            TeammatePanel._lines = real_lines  # type: ignore[method-assign]
        in_view = {p for p in panels if p.region.overlaps(roster.region)}
        assert built and set(built) <= in_view and len(in_view) < SIZE // 2
        last = [p for p in panels if p.agent.name.startswith("worker-")][-1]
        assert last not in in_view and last.agent.input_tokens == 77_000
        roster.scroll_to_widget(last, animate=False, immediate=True)
        await wait_for(
            pilot, lambda: last.region.overlaps(roster.region) and last._drawn is not None
        )
        assert last._drawn is not None
        assert [line.plain for line in last._drawn[1]] == [line.plain for line in last._lines()]
        assert format_count(77_000 + last.agent.output_tokens) in last._drawn[1][-1].plain

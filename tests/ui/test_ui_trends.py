"""Look rather than read: the leader view and the replay draw each agent's tokens over time as a
sparkline and the task board's progress as a bar, legible at 80x24 (the selected agent's line
there) and at 120x40 (every agent's)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import ProgressBar, Sparkline, Static

from app.dashboard.screens.replay import ReplayApp
from app.display.trends import UsageHistory
from tests.ui.data import agents, make_app, make_runtime
from tests.ui.helpers import ready, screen_text, wait_for
from tests.ui.test_ui_replay import synthetic_replay
from widgets.usage_trend import TrendRow, UsageTrend


def test_history_turns_totals_into_what_each_second_added() -> None:
    history = UsageHistory(samples=3)
    team = agents()
    for added in (0, 500, 0, 2000):
        team[1].input_tokens += added
        history.sample(team)
    researcher = history.trends(team)[1]
    assert researcher.name == "researcher" and researcher.tokens == (500, 0, 2000)
    assert researcher.total_tokens == 12000 + 2300 + 2500


async def test_the_leader_view_shows_tokens_over_time_and_progress(tmp_path: Path) -> None:
    for size, lines in (((80, 24), 1), ((120, 40), 4)):
        runtime = make_runtime()
        root = tmp_path / str(size[0])
        root.mkdir()
        app = make_app(root, runtime)
        async with app.run_test(size=size) as pilot:
            await ready(pilot)
            await pilot.press("1")  # researcher: its line shows at 80x24
            for burst in (0, 4000, 9000):
                runtime.agents[1].input_tokens += burst
                app.pull_agents()
                app.leader.tick()
                await pilot.pause(0.05)
            trend = app.leader.query_one(UsageTrend)
            await wait_for(pilot, lambda t=trend: len(t.query(TrendRow)) == 4)
            shown = [r for r in trend.query(TrendRow) if r.display]
            assert len(shown) == lines and "researcher" in {r.agent for r in shown}
            row = next(r for r in shown if r.agent == "researcher")
            # the app's own one-second ticks sample too: they added nothing
            assert [n for n in row.query_one(Sparkline).data if n] == [4000, 9000]
            text = screen_text(app)
            assert "Tasks 1/6" in text and "17%" in text
            assert "researcher" in text and "27.3k" in text
            bar = trend.query_one(ProgressBar)
            assert (bar.progress, bar.total) == (1, 6)


async def test_the_replay_shows_them_at_its_position() -> None:
    app = ReplayApp(synthetic_replay(40))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "Tasks 40/40" in screen_text(app)
        await pilot.press("home")
        await pilot.pause()
        assert "Tasks 0/0" in screen_text(app)
        for _ in range(60):
            await pilot.press("right")
        await pilot.pause()
        text = screen_text(app)
        assert "Tasks 12/12" in text
        worker = next(r for r in app.screen.query(TrendRow) if r.agent == "worker-1")
        # rounds 3, 6 and 9 were worker-1's (1,100 tokens each); round 12's call is next
        assert sum(worker.query_one(Sparkline).data) == 3 * 1100


def test_a_tick_before_the_trend_has_its_parts_draws_nothing_and_does_not_crash() -> None:
    """The dashboard's one-second tick can reach the trend between its mount and its
    children's (seen under load: the whole dashboard ended with ``NoMatches``); the next tick
    draws it."""
    history = UsageHistory()
    history.sample(agents())
    trend = UsageTrend()  # not composed: no label, no bar yet
    trend.show(history.trends(agents()), "researcher", history.progress())
    assert not list(trend.children)


async def test_each_agents_line_is_labelled_in_its_colour(tmp_path: Path) -> None:
    """The label's style is a Rich one: as a style string on a Text it was parsed by Textual,
    which knows no Rich colour names ("dark_cyan"), and the label was drawn without colour."""
    app = make_app(tmp_path, make_runtime())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        app.leader.tick()
        trend = app.leader.query_one(UsageTrend)
        await wait_for(pilot, lambda: len(trend.query(TrendRow)) == 4)
        await pilot.pause()
        for row in trend.query(TrendRow):
            label = row.query_one(".trend-label", Static)
            named = [s for s in label.render_line(0) if s.text.strip()]
            assert named and "".join(s.text for s in named).strip() == row.agent
            assert all(s.style and s.style.color and s.style.bold for s in named), named

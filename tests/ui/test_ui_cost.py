"""Cost in US dollars on the live dashboard: per agent on its panel, the run's total in the
header (within 80 columns), priced per model call with cache reads and writes apart."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.agent import AgentScreen
from app.display.format import agent_cost
from app.display.values import run_cost
from app.runtime.agent.session import AgentSession
from app.runtime.events import UsageChanged
from app.runtime.model.pricing import call_cost
from app.runtime.tools.base import AgentIdentity
from tests.ui.data import make_app
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for
from widgets.status_bar import StatusBar
from widgets.teammate_panel import TeammatePanel

ONLINE = "Claude · claude-sonnet-5-5"


def _usage(inp: int, out: int, read: int, write: int) -> SimpleNamespace:
    return SimpleNamespace(
        input_tokens=inp,
        output_tokens=out,
        cache_read_input_tokens=read,
        cache_creation_input_tokens=write,
    )


def test_a_session_prices_each_model_call(tmp_path: Path) -> None:
    identity = AgentIdentity("researcher", "alpha", agent_type="Explore")
    seen: list[object] = []
    session = AgentSession(
        identity,
        home=Home(tmp_path),
        client=None,  # type: ignore[arg-type]
        model="claude-sonnet-5-5",
        system_prompt="",
        tools=[],
        emit=seen.append,
    )
    session.add_usage(_usage(1000, 200, 0, 5000))
    session.add_usage(_usage(100, 50, 5000, 0))
    first = call_cost("claude-sonnet-5-5", 1000, 200, 0, 5000)
    second = call_cost("claude-sonnet-5-5", 100, 50, 5000, 0)
    assert first is not None and second is not None
    snap = session.snapshot
    assert snap.cost_usd == pytest.approx(first + second)
    assert (snap.cache_read_tokens, snap.cache_write_tokens) == (5000, 5000)
    assert snap.agent_type == "Explore"
    # A model with no known price: the cost is unknown from then on ("$?"), never made up.
    session.model = "mystery-model"
    session.add_usage(_usage(1, 1, 0, 0))
    assert snap.cost_usd == pytest.approx(first + second) and snap.unpriced_calls == 1
    assert agent_cost(snap) == "$?" and run_cost([snap]) == "$?"
    assert isinstance(seen[-1], UsageChanged)


def _priced(runtime: FakeRuntime) -> None:
    costs = {"team-lead": 0.0125, "researcher": 0.5, "engineer": 1.25, "tester": 0.0}
    runtime.agents = [replace(a, cost_usd=costs[a.name]) for a in runtime.agents]
    runtime.model_description = ONLINE


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_panels_and_header_show_dollars(
    tmp_path: Path, runtime: FakeRuntime, size: tuple[int, int]
) -> None:
    _priced(runtime)
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: deck.loaded)
        bar = deck.screen.query_one(StatusBar)
        line = bar.line.plain
        assert line.endswith("$1.76"), line  # 0.0125 + 0.5 + 1.25
        assert len(line) <= size[0] - 2  # the header's padding
        panels = {p.agent.name: p.render().plain for p in deck.screen.query(TeammatePanel)}
        if size[0] >= 100:
            assert "$0.0125" in panels["team-lead"] and "$1.25" in panels["engineer"]
        else:  # one row per agent: the cost whole where it fits, never cut
            assert panels["tester"].endswith("stopping $0")
            assert all("$" not in text for name, text in panels.items() if name != "tester")
        assert "$1.76" in screen_text(deck)
        # An agent's own view shows its cost too.
        await pilot.press("escape", "2", "enter")  # out of the lead's input first
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        assert "$1.25 · 3 tools" in screen_text(deck)


async def test_the_header_follows_the_spending(tmp_path: Path, runtime: FakeRuntime) -> None:
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: deck.loaded)
        assert deck.screen.query_one(StatusBar).line.plain.endswith("offline · $0")
        _priced(runtime)
        deck.model_description = ONLINE
        runtime.emit(UsageChanged("engineer", 1, 1, 0, 0, 0, 1))
        await wait_for(pilot, lambda: deck.screen.query_one(StatusBar).line.plain.endswith("$1.76"))
        assert "claude-sonnet-5-5 · $1.76" in deck.screen.query_one(StatusBar).line.plain


async def test_the_budget_is_shown_beside_the_cost(tmp_path: Path, runtime: FakeRuntime) -> None:
    _priced(runtime)
    deck: TeamDeckApp = make_app(tmp_path, runtime)
    deck.budget = SimpleNamespace(limit=5.0)  # type: ignore[attr-defined]
    async with deck.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: deck.loaded)
        line = deck.screen.query_one(StatusBar).line.plain
        assert line.endswith("$1.76 of $5.00") and len(line) <= 78, line


async def test_a_viewer_shows_no_cost(tmp_path: Path) -> None:
    deck = make_app(tmp_path, None)
    async with deck.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: deck.loaded)
        assert "$" not in deck.screen.query_one(StatusBar).line.plain


async def test_another_programs_agents_show_no_cost(tmp_path: Path) -> None:
    """A viewer's agents (a Claude Code team's) are not counted here: no "$0" pretending."""
    deck = make_app(tmp_path, None)
    async with deck.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: deck.loaded and deck.agents)
        panels = [p.render().plain for p in deck.screen.query(TeammatePanel)]
        assert panels and not [text for text in panels if "$" in text]


def test_a_teammate_process_reports_its_cost_through_its_log() -> None:
    """A process-mode teammate prices its own calls; the lead's side reads the cost from the
    usage line of its log, with the agent's type from its spec."""
    from app.runtime.api import AgentSnapshot
    from app.runtime.runners.event_log import LoggedAgent, event_line

    line = event_line(UsageChanged("writer", 1000, 200, 5000, 300, 4, 2, 0.0123, 0))
    assert line is not None
    agent = LoggedAgent(AgentSnapshot("writer", "green", "running", agent_type="Explore"))
    [event] = agent.apply(line)
    assert isinstance(event, UsageChanged) and event.cost_usd == pytest.approx(0.0123)
    assert agent_cost(agent.snapshot) == "$0.0123"
    assert (agent.snapshot.cache_read_tokens, agent.snapshot.cache_write_tokens) == (5000, 300)
    unknown = event_line(UsageChanged("writer", 1000, 200, 0, 0, 4, 3, 0.0123, 1))
    assert unknown is not None
    agent.apply(unknown)
    assert agent_cost(agent.snapshot) == "$?"
    old = {k: v for k, v in line.items() if k not in ("costUsd", "unpricedCalls")}
    fresh = LoggedAgent(AgentSnapshot("writer", "green", "running"))
    fresh.apply(old)  # an older teammate's log: no cost in it, none made up
    assert fresh.snapshot.cost_usd is None and agent_cost(fresh.snapshot) is None

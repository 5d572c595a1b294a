"""Cost and budgets: the price table, the budget gate, a headless run stopped by its budget."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest

from app.archive import connect
from app.cli.headless import run_team
from app.core import Home
from app.runtime.events import UsageChanged
from app.runtime.model.budget import PAUSED, Budget
from app.runtime.model.client import make_client
from app.runtime.model.pricing import call_cost, cost_label, format_usd, price_for
from app.runtime.offline.policies import OfflineModel

GUARD = 60.0


def test_prices_per_family_with_cache_priced_on_its_own() -> None:
    assert call_cost("claude-sonnet-5-5", 1_000_000, 0) == pytest.approx(2.0)
    assert call_cost("claude-sonnet-5-5", 0, 1_000_000) == pytest.approx(10.0)
    assert call_cost("claude-sonnet-5-5", 0, 0, 1_000_000, 0) == pytest.approx(0.10)
    assert call_cost("claude-sonnet-5-5", 0, 0, 0, 1_000_000) == pytest.approx(2.50)
    assert call_cost("claude-opus-5-5-20260922", 1_000_000, 1_000_000) == pytest.approx(24.0)
    assert price_for("claude-opus-5") != price_for("claude-opus-5-5")
    assert price_for("opus") == price_for("claude-opus-5-5")
    # Haiku 5.5 bills a long prompt at 5x, output included.
    short = call_cost("claude-haiku-5-5", 50_000, 1000)
    long = call_cost("claude-haiku-5-5", 150_000, 1000)
    assert short == pytest.approx((50_000 * 0.10 + 1000 * 0.50) / 1e6)
    assert long == pytest.approx(5 * (150_000 * 0.10 + 1000 * 0.50) / 1e6)
    assert call_cost("some-other-model", 10, 10) is None
    assert call_cost("claude-sonnet-5-5", 10**6, 10**6, offline=True) == 0
    assert cost_label(12.5, offline=True) == "offline · $0"
    assert (format_usd(0.01234), format_usd(12.3), format_usd(None)) == ("$0.0123", "$12.30", "$?")


class FakeSession:
    def __init__(self) -> None:
        self.status = "running"
        self.details: list[str] = []
        self.activity = ""
        self.interrupt_event = asyncio.Event()

    def set_status(self, status: str, detail: str = "") -> None:
        self.details.append(detail)

    def set_activity(self, text: str) -> None:
        self.activity = text


async def test_budget_warns_at_80_percent_and_holds_calls_until_raised() -> None:
    budget = Budget(1.0, model="claude-sonnet-5-5")
    told: list[str] = []
    budget.listeners.append(lambda _, what: told.append(what))
    budget.observe(UsageChanged("lead", 300_000, 0, 0, 0, 0, 1))  # $0.60
    assert (told, budget.state) == ([], "ok")
    budget.observe(UsageChanged("lead", 400_000, 10_000, 0, 0, 0, 2))  # +$0.30
    assert told == ["warning"] and budget.state == "warning"
    assert await budget.wait_for_room(FakeSession())
    budget.observe(UsageChanged("lead", 400_000, 30_000, 0, 0, 0, 3))  # +$0.20 -> $1.00
    assert budget.state == "stopped"

    session = FakeSession()
    held = asyncio.ensure_future(budget.wait_for_room(session))
    await asyncio.sleep(0.01)
    assert not held.done() and session.activity == PAUSED and PAUSED in session.details
    assert told == ["warning", "stopped"]
    budget.raise_to(2.0)
    assert await asyncio.wait_for(held, 5) is True
    assert told == ["warning", "stopped", "resumed"] and session.activity == ""


async def test_an_interrupt_releases_a_held_agent() -> None:
    budget = Budget(0.01, model="claude-sonnet-5-5")
    budget.add(0.02)
    session = FakeSession()
    held = asyncio.ensure_future(budget.wait_for_room(session))
    await asyncio.sleep(0.01)
    session.interrupt_event.set()
    assert await asyncio.wait_for(held, 5) is False


class CountingModel:
    """The offline policies, counting the model calls that start."""

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.calls = 0

    async def respond(self, request: Any) -> Any:
        self.calls += 1
        return await self.inner.respond(request)


async def test_headless_run_stops_at_its_budget(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = CountingModel()
    # Offline tokens priced as if they were Claude Sonnet's, so the small run costs something.
    budget = Budget(0.01, model="claude-sonnet-5-5")
    calls_at_stop: list[int] = []
    budget.listeners.append(
        lambda _, what: calls_at_stop.append(model.calls) if what == "stopped" else None
    )
    code, reason = await asyncio.wait_for(
        run_team(
            home,
            "Summarize the files",
            cwd=project,
            out=io.StringIO(),
            time_limit=GUARD,
            budget=budget,
            client=make_client(handler=model, pace=0),
        ),
        GUARD + 5,
    )
    assert code == 1
    assert reason.startswith("budget of $0.0100 reached ($0.0")
    assert "no new model call was started" in reason
    assert calls_at_stop and model.calls == calls_at_stop[0]  # nothing started afterwards
    assert budget.spent >= budget.limit
    assert "budget: " in capsys.readouterr().err  # the 80% warning
    conn = connect(home.root / "history.db")
    outcome, why, limit = conn.execute("SELECT outcome, reason, budget_usd FROM runs").fetchone()
    conn.close()
    assert (outcome, why, limit) == ("budget", reason, 0.01)


async def test_a_budget_stop_shuts_the_team_down_cleanly(home: Home, project: Path) -> None:
    """As after SIGINT: teammates asked to shut down, those that cannot answer (no model call
    may start) killed, their tasks back to pending; the team's files kept; one line says so."""
    budget = Budget(0.02, model="claude-sonnet-5-5")  # spent while the teammates work
    code, reason = await asyncio.wait_for(
        run_team(
            home,
            "Summarize the files",
            cwd=project,
            out=io.StringIO(),
            time_limit=GUARD,
            budget=budget,
            shutdown_grace=0.5,
            client=make_client(handler=OfflineModel(), pace=0),
        ),
        GUARD + 5,
    )
    assert code == 1 and "\n" not in reason
    [team] = home.teams.names()
    assert reason.startswith("budget of $0.0200 reached") and "killed" in reason
    assert f"team {team} kept with" in reason and f"teamdeck team delete {team}" in reason
    tasks = home.tasks(team).list()
    assert tasks and all(t.status in ("pending", "completed") for t in tasks), tasks
    assert not [t for t in tasks if t.status == "pending" and t.owner], tasks
    pending = sum(t.status == "pending" for t in tasks)
    assert f"with {pending} pending task{'' if pending == 1 else 's'} (" in reason
    config = home.teams.require(team)
    teammates = [m.name for m in config.members if m.name != "team-lead"]
    asked = {
        m.text
        for name in teammates
        for m in home.mailbox(team).read(name)
        if '"shutdown_request"' in m.text
    }
    assert not teammates or asked  # anyone still listed was asked to stop


def test_the_headless_command_exits_1_with_one_line_at_the_budget(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli.headless import run_headless

    code = run_headless(
        home,
        "Summarize the files",
        cwd=project,
        out=io.StringIO(),
        time_limit=GUARD,
        budget=Budget(0.02, model="claude-sonnet-5-5"),
        shutdown_grace=0.5,
        client=make_client(handler=OfflineModel(), pace=0),
    )
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert code == 1
    assert len(errors) == 1 and errors[0].startswith("teamdeck: error: budget of $0.0200")

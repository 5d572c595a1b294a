"""Cost and ``--budget`` for a Claude Code team (``teamdeck tui --claude --budget USD``).

The hand-built home of ``tests/claude_home.py``: the lead's transcript holds one
``claude-opus-4-7`` call (5000 in, 200 out), the researcher's one ``claude-sonnet-4-6`` call
(1200 in, 80 out, 300 cache read). Each agent's cost comes from its transcript at the list
prices of ``app.runtime.model.pricing``; at 80% of the budget a warning, at 100% one key asks
every teammate to shut down (a request in each inbox, honest about being unverified).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.claude_budget import ClaudeBudget
from app.dashboard.launch import build_dashboard
from app.dashboard.screens.confirm import ConfirmScreen
from app.runtime.model.pricing import call_cost
from tests import claude_home as ch
from tests.ui.helpers import screen_text, wait_for

LEAD = call_cost("claude-opus-4-7", 5000, 200)
RESEARCHER = call_cost("claude-sonnet-4-6", 1200, 80, 300)
assert LEAD is not None and RESEARCHER is not None
TOTAL = LEAD + RESEARCHER


def deck(tmp_path: Path, budget: float) -> TeamDeckApp:
    root = ch.build(tmp_path / "claude")
    return build_dashboard(Home(root, lock_style="mkdir"), viewer=True, budget=budget)


def inbox(app: TeamDeckApp, agent: str) -> list[dict[str, Any]]:
    return json.loads(app.home.mailbox(ch.TEAM).path(agent).read_text())  # type: ignore[no-any-return]


def notices(app: TeamDeckApp) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def cost_of(app: TeamDeckApp, name: str) -> float | None:
    return next((a.cost_usd for a in app.agents if a.name == name), None)


async def test_each_agent_costs_what_its_transcript_used_and_80_percent_warns(
    tmp_path: Path,
) -> None:
    app = deck(tmp_path, budget=TOTAL / 0.9)  # 90% spent
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: cost_of(app, "researcher") is not None)
        assert cost_of(app, "researcher") == pytest.approx(RESEARCHER)
        assert cost_of(app, "team-lead") == pytest.approx(LEAD)
        budget = app.budget  # type: ignore[attr-defined]
        assert isinstance(budget, ClaudeBudget)
        await wait_for(pilot, lambda: budget.state == "warning")
        assert "80% of the budget" in notices(app)
        assert f"of ${TOTAL / 0.9:.4f}" in app.header_now().cost  # "$0.0340 of $0.0378"
        assert not isinstance(app.screen, ConfirmScreen)


async def test_at_the_budget_one_key_asks_every_teammate_to_shut_down(tmp_path: Path) -> None:
    app = deck(tmp_path, budget=TOTAL / 2)
    before = {name: inbox(app, name) for name in ("researcher", "writer")}
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = screen_text(app)
        assert "Budget reached" in question and "unverified" in question
        await pilot.press("y")
        await wait_for(pilot, lambda: "to shut down (unverified" in notices(app))
    for name, old in before.items():
        new = inbox(app, name)
        assert new[: len(old)] == old  # appended, nothing else touched
        (added,) = new[len(old) :]
        assert added["from"] == "team-lead" and added["msgV"] == 1  # the inbox's envelope
        assert json.loads(added["text"])["type"] == "shutdown_request"

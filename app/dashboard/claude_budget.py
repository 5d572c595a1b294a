"""``--budget USD`` for a Claude Code team (``teamdeck tui --claude --budget 5``).

teamdeck does not make a Claude Code team's model calls, so it cannot stop them the way it
stops its own (``app.runtime.model.budget``). What it can do: count the cost from the agents'
session transcripts (their usage, at the list prices of ``app.runtime.model.pricing``), warn at
80%, and at 100% offer one key that asks every teammate to shut down: a ``shutdown_request``
in each teammate's inbox, in the envelope of the inbox's era (``FileSteering.shutdown``).
A signed team (2.1.332) shows a message teamdeck wrote as unverified (only the lead holds the
signing key): the teammate decides whether to heed it, and the dialog says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.runtime.api import AgentSnapshot
from app.runtime.events import TERMINAL_STATUSES
from app.runtime.model.pricing import format_usd
from widgets.agent_text import agent_markup

WARN_AT = 0.8

QUESTION = (
    "Budget reached: this Claude Code team has cost {spent} of {limit} (from its transcripts, "
    "at list prices).\n\nteamdeck cannot stop Claude Code's model calls. Ask every teammate "
    "to shut down? Each gets a shutdown request in its inbox; a signed team (Claude Code "
    "2.1.332) shows it to them as unverified, so each teammate decides whether to heed it."
)


class ClaudeBudget:
    """The budget of a viewed Claude Code team (see the module docstring). ``limit`` and
    ``state`` as the header reads them from ``app.budget``."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.state = "ok"  # "ok", "warning", "reached"
        self.stopped = False  # the runtime's budget's word: a viewer never stops calls

    def describe(self, spent: float) -> str:
        return f"{format_usd(spent)} of {format_usd(self.limit)}"

    def check(self, app: Any, agents: Sequence[AgentSnapshot]) -> None:
        """Warn once at 80%, ask once at 100% (``agents``: the panels', with their costs)."""
        spent = sum(a.cost_usd or 0.0 for a in agents)
        if self.state == "ok" and spent >= WARN_AT * self.limit:
            self.state = "warning"
            app.notify(
                f"{self.describe(spent)} spent: 80% of the budget.",
                title="Budget",
                severity="warning",
                timeout=10,
            )
        if self.state != "reached" and spent >= self.limit:
            self.state = "reached"
            self._offer(app, spent, agents)
        app.set_class(self.state == "warning", "-budget-warning")
        app.set_class(self.state == "reached", "-budget-stopped")

    def _offer(self, app: Any, spent: float, agents: Sequence[AgentSnapshot]) -> None:
        from app.dashboard.screens.confirm import ConfirmScreen

        names = [a.name for a in agents if not a.is_lead and a.status not in TERMINAL_STATUSES]
        question = QUESTION.format(spent=format_usd(spent), limit=format_usd(self.limit))

        def answered(yes: bool | None) -> None:
            if yes:
                shut_down_all(app, names)

        app.push_screen(ConfirmScreen(question, confirm_label="Shut down all"), answered)


def shut_down_all(app: Any, names: Sequence[str]) -> None:
    """Ask each of ``names`` to shut down; one notice says what was done."""
    if not names:
        app.notify("No teammate is left to ask.", title="Budget")
        return
    done = [app.steering.shutdown(name) for name in names]
    asked = [n for n, outcome in zip(names, done, strict=True) if outcome.ok]
    failed = [outcome.message for outcome in done if not outcome.ok]
    lines = []
    if asked:
        lines.append(f"asked {', '.join(asked)} to shut down (unverified: each decides)")
    lines.extend(failed)
    severity = "warning" if failed else "information"
    app.notify(agent_markup("\n".join(lines)), title="Budget", severity=severity)

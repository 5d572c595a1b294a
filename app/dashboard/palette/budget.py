"""Palette entries for ``--budget`` (added to the app's providers by ``app.dashboard.recording``):
raise the budget, or see where it stands."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider

from app.dashboard.screens.feedback import FeedbackScreen
from app.runtime.model.budget import Budget

Command = tuple[str, str]


def parse_amount(text: str) -> float:
    """``12``, ``$12.50`` -> dollars; ValueError with one line otherwise."""
    try:
        value = float(text.strip().lstrip("$").replace(",", ""))
    except ValueError:
        raise ValueError(f"{text!r} is not an amount in US dollars") from None
    if not value > 0 or value == float("inf"):
        raise ValueError("the budget must be more than $0")
    return value


def raise_budget(app: App[Any], budget: Budget, text: str | None) -> None:
    """Apply the amount the person typed (``None``: cancelled)."""
    if text is None:
        return
    try:
        amount = parse_amount(text)
    except ValueError as exc:
        app.notify(str(exc), title="Budget", severity="error")
        return
    if amount <= budget.spent:
        app.notify(
            f"${amount:g} is not above what the run has spent ({budget.describe()}).",
            title="Budget",
            severity="warning",
        )
    budget.raise_to(amount)
    if amount > budget.spent:
        app.notify(f"Budget now {budget.describe()}.", title="Budget")


class BudgetCommands(Provider):
    def _commands(self) -> Iterator[Command]:
        budget: Budget | None = getattr(self.app, "budget", None)
        if budget is None:
            return
        yield "Raise budget…", f"The run has spent {budget.describe()}"

    def _run(self) -> None:
        budget: Budget | None = getattr(self.app, "budget", None)
        if budget is None:
            return
        screen = FeedbackScreen(
            f"New budget in US dollars (spent {budget.describe()})", placeholder="e.g. 5"
        )
        self.app.push_screen(screen, lambda text: raise_budget(self.app, budget, text))

    async def discover(self) -> Hits:
        for name, help_text in self._commands():
            yield DiscoveryHit(name, self._run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), self._run, help=help_text)

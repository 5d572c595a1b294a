"""The team at a glance: the task board's progress as a bar, and each agent's tokens over time
as a sparkline (what each second added, the last minute), with its total and cost. Below 32
rows only the selected agent's line is shown, so it stays legible at 80x24.

Given values (``app.display.trends``): the widget reads no file.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import ProgressBar, Sparkline, Static

from app.display.format import format_count, rich_color
from app.display.trends import AgentTrend, Progress
from app.runtime.model.pricing import format_usd

LABEL = 11  # cells for an agent's name


class UsageTrend(Vertical):
    """See the module docstring."""

    SCOPED_CSS = False  # the view's breakpoint classes (-short, -narrow) apply
    DEFAULT_CSS = """
    UsageTrend { height: auto; padding: 0 1; }
    UsageTrend .trend-row { height: 1; }
    UsageTrend .trend-label { width: 12; padding-right: 1; }
    UsageTrend .trend-total { width: auto; min-width: 6; padding-left: 1; }
    UsageTrend #trend-tasks-label { width: auto; min-width: 12; }
    UsageTrend Sparkline { width: 1fr; height: 1; }
    UsageTrend ProgressBar { width: 1fr; height: 1; }
    UsageTrend ProgressBar Bar { width: 1fr; }
    .-short UsageTrend .trend-row.-other { display: none; }
    .-narrow UsageTrend .trend-label { width: 10; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(classes="trend-row", id="trend-tasks"):
            yield Static("Tasks", classes="trend-label", id="trend-tasks-label")
            # never indeterminate: that bar animates with the clock (no task yet is 0%)
            yield ProgressBar(total=1, show_eta=False, id="trend-progress")

    def show(self, trends: list[AgentTrend], selected: str | None, progress: Progress) -> None:
        """Draw ``trends`` (one line per agent; ``selected``'s always shown) and ``progress``."""
        label = self.query_one("#trend-tasks-label", Static)
        label.update(f"Tasks {progress.done}/{progress.total}")
        bar = self.query_one("#trend-progress", ProgressBar)
        bar.update(total=max(progress.total, 1), progress=progress.done)
        rows = {row.agent: row for row in self.query(TrendRow)}
        for trend in trends:
            row = rows.pop(trend.name, None)
            if row is None:
                row = TrendRow(trend.name)
                self.mount(row)
            row.show(trend)
            row.set_class(trend.name != selected, "-other")
        for gone in rows.values():
            gone.remove()


class TrendRow(Horizontal):
    """One agent: name, sparkline of tokens per second, total and cost."""

    def __init__(self, name: str) -> None:
        super().__init__(classes="trend-row")
        self.agent = name
        self._label = Static(classes="trend-label")
        self._line = Sparkline([], summary_function=max)
        self._total = Static(classes="trend-total")

    def compose(self) -> ComposeResult:
        yield self._label
        yield self._line
        yield self._total

    def show(self, trend: AgentTrend) -> None:
        name = trend.name if len(trend.name) <= LABEL else trend.name[: LABEL - 1] + "…"
        self._label.update(Text(name, style=f"bold {rich_color(trend.color)}", no_wrap=True))
        # from 0: the bars' heights are tokens, not the spread between the smallest and the
        # largest; nothing yet is a flat line (Textual draws a single value as a full bar)
        data = [0, *trend.tokens] if any(trend.tokens) else []
        if data != self._line.data:
            self._line.data = data
        cost = "" if trend.cost is None else f" {format_usd(trend.cost)}"
        self._total.update(f"{format_count(trend.total_tokens)}{cost}")

"""The team at a glance: the task board's progress as a bar, and each agent's tokens over time
as a sparkline (what each second added, the last minute), with its total and cost. Below 32
rows only the selected agent's line is shown, so it stays legible at 80x24; in a team of more
than ``MAX_LINES`` agents, the first ones' and the selected agent's.

Given values (``app.display.trends``): the widget reads no file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import ProgressBar, Sparkline, Static

from app.display.format import format_count, rich_color
from app.display.trends import AgentTrend, Progress
from app.runtime.model.pricing import format_usd

LABEL = 11  # cells for an agent's name
COUNT_CELLS = len("999.9k")  # a token count's cells, at most (below a billion)
MAX_LINES = 8
#: The view classes in which a line not the selected agent's is hidden (``-short`` here,
#: ``-strip`` in ``styles/deck.tcss``).
HIDING_VIEWS = ("-short", "-strip")
"""Agents' lines at most: a team of fifty drew fifty lines, which pushed the roster off a
120x40 screen and were all laid out and drawn again on every key press."""


class UsageTrend(Vertical):
    """See the module docstring."""

    SCOPED_CSS = False  # the view's breakpoint classes (-short, -narrow) apply
    DEFAULT_CSS = """
    UsageTrend { height: auto; padding: 0 1; }
    UsageTrend .trend-row { height: 1; }
    UsageTrend .trend-label {
        width: 12; padding-right: 1; text-wrap: nowrap; text-overflow: ellipsis;
    }
    UsageTrend .trend-total { width: auto; min-width: 6; padding-left: 1; text-align: right; }
    UsageTrend #trend-tasks-label { width: auto; min-width: 12; }
    UsageTrend Sparkline { width: 1fr; height: 1; }
    UsageTrend ProgressBar { width: 1fr; height: 1; }
    UsageTrend ProgressBar Bar { width: 1fr; }
    .-short UsageTrend .trend-row.-other { display: none; }
    .-narrow UsageTrend .trend-label { width: 10; }
    """

    _shown_tasks: str | None = None
    _total_width = 0  # cells of the totals' column: the longest total shown so far

    def compose(self) -> ComposeResult:
        with Horizontal(classes="trend-row", id="trend-tasks"):
            yield Static("Tasks", classes="trend-label", id="trend-tasks-label")
            # never indeterminate: that bar animates with the clock (no task yet is 0%)
            yield ProgressBar(total=1, show_eta=False, id="trend-progress")

    def show(self, trends: list[AgentTrend], selected: str | None, progress: Progress) -> None:
        """Draw ``trends`` (one line per agent; ``selected``'s always shown) and ``progress``."""
        try:
            label = self.query_one("#trend-tasks-label", Static)
            bar = self.query_one("#trend-progress", ProgressBar)
        except NoMatches:  # mounted, its children not yet (a tick came first): the next draws
            return
        tasks = f"Tasks {progress.done}/{progress.total}"
        if tasks != self._shown_tasks:
            # its width follows the text: a layout only when that width changes
            layout = len(tasks) != len(self._shown_tasks or "")
            self._shown_tasks = tasks
            label.update(tasks, layout=layout)
        if (bar.total, bar.progress) != (max(progress.total, 1), progress.done):
            bar.update(total=max(progress.total, 1), progress=progress.done)
        rows = {row.agent: row for row in self.children if isinstance(row, TrendRow)}
        # "-other" (not the selected agent's line) hides a line only in a view of one of
        # HIDING_VIEWS' classes; in any other the class is kept without restyling the line
        # (Textual restyles a line and its parts at once: two lines a selection move were
        # the most of a key press's ~10 ms with a team working, bench/live.py). The view
        # taking such a class restyles all of it, these lines with their classes then.
        screen = self.screen
        hides = any(screen.has_class(name) for name in HIDING_VIEWS)
        shown = shown_lines(trends, selected)
        names = {trend.name for trend in shown}
        widest = max((total_width(trend) for trend in shown), default=0)
        if widest > self._total_width:  # the column grows: with the costs only, rarely
            self._total_width = widest
            for each in rows.values():
                each.widen(widest)
        # A row whose agent left the lines is given to one that joined them, in its place:
        # the selection moving past the first lines changes one agent, not the rows (a
        # mount and a removal lay out the whole screen, on each key press).
        spare = [row for name, row in rows.items() if name not in names]
        for trend in shown:
            row = rows.pop(trend.name, None)
            if row is None and spare:
                row = spare.pop(0)
                rows.pop(row.agent)
                row.agent = trend.name
            elif row is None:
                row = TrendRow(trend.name)
                row.widen(self._total_width)
                self.mount(row)
            row.show(trend)
            row.set_class(trend.name != selected, "-other", update=hides)
        for gone in spare:
            gone.remove()


class Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)


def shown_lines(trends: Sequence[N], selected: str | None) -> list[N]:
    """The first ``MAX_LINES`` agents (or their trends) in team order, the selected agent
    among them: the leader view makes only these agents' trends (a hundred agents' made each
    second and on each key press, to draw nine, were a tenth of the dashboard's loop)."""
    trends = list(trends)
    if len(trends) <= MAX_LINES:
        return trends
    shown = trends[:MAX_LINES]
    if selected is not None and all(t.name != selected for t in shown):
        chosen = [t for t in trends if t.name == selected]
        shown = shown[: MAX_LINES - len(chosen)] + chosen
    return shown


class TrendRow(Horizontal):
    """One agent: name, sparkline of tokens per second, total and cost."""

    def __init__(self, name: str) -> None:
        super().__init__(classes="trend-row")
        self.agent = name
        self._label = Static(classes="trend-label")
        self._line = Sparkline([], summary_function=max)
        self._total = Static(classes="trend-total")
        self._shown_label: tuple[str, str | None] | None = None
        self._shown_total: str | None = None

    def compose(self) -> ComposeResult:
        yield self._label
        yield self._line
        yield self._total

    def show(self, trend: AgentTrend) -> None:
        """Update what reads differently: with fifty agents, rewriting every row each second
        and on each key press laid the whole screen out again (``Static.update`` asks for a
        layout) -- a fifth of the dashboard's loop in a 50-teammate profile."""
        name = trend.name if len(trend.name) <= LABEL else trend.name[: LABEL - 1] + "…"
        label = (name, trend.color)
        if label != self._shown_label:
            self._shown_label = label
            # A Rich style, parsed by Rich: a style string on a Text is parsed by Textual when
            # drawn, which knows no Rich colour names ("dark_cyan"): the label lost its colour
            # and each of its frames paid ~2 ms for a failed parse's suggestions.
            style = Style.parse(f"bold {rich_color(trend.color)}")
            # its width is fixed (.trend-label): no layout
            self._label.update(Text(name, style=style, no_wrap=True), layout=False)
        # from 0: the bars' heights are tokens, not the spread between the smallest and the
        # largest; nothing yet is a flat line (Textual draws a single value as a full bar)
        data = [0, *trend.tokens] if any(trend.tokens) else []
        if data != self._line.data:
            self._line.data = data
        total = total_text(trend)
        if total != self._shown_total:
            # the column's width is the view's (``widen``): the text lays nothing out
            self._shown_total = total
            self._total.update(total, layout=False)

    def widen(self, cells: int) -> None:
        """The totals are one column as wide as the longest total shown so far, right-aligned.
        Each row's was as wide as its text, and a total's length changes often while a team
        works (950 -> 1.0k -> 10.0k, on any row, on a key press's frame too): each change laid
        the screen out, and the sparkline it resized asked for a second layout (bench/live.py's
        ``keypress`` row: most of its slowest presses waited behind those two frames)."""
        if cells:
            self._total.styles.width = cells + 1  # and the padding before it


def total_text(trend: AgentTrend) -> str:
    """An agent's total tokens and cost, as its line ends with them."""
    return f"{format_count(trend.total_tokens)}{_cost(trend)}"


def total_width(trend: AgentTrend) -> int:
    """The cells ``trend``'s total may need before its cost changes: room for any count up
    to "999.9M" ("999.9k" is as wide), so that counting tokens never widens the column."""
    return max(COUNT_CELLS, len(format_count(trend.total_tokens))) + len(_cost(trend))


def _cost(trend: AgentTrend) -> str:
    return "" if trend.cost is None else f" {format_usd(trend.cost)}"

"""The header line: team, counts of teammates, open tasks and pending approvals, the model
and the run's cost so far."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

#: How the header names the lead's permission mode (as Claude Code's status line does).
MODE_LABELS = {
    "acceptEdits": "⏵⏵ accept edits on",
    "plan": "⏸ plan mode on",
    "bypassPermissions": "⏵⏵ bypass permissions on",
    "dontAsk": "don't ask mode",
    "delegate": "delegate mode",
}


#: What the header adds to a deleted team's name (``app.display.values.header_info``).
DELETED = " (deleted)"
#: The fewest cells a shortened team name keeps (with its "…").
MIN_TEAM = 6


@dataclass(frozen=True)
class _Values:
    """What the line says besides the team and the model (see ``StatusBar.show``)."""

    demo: bool
    stale: str
    view: str
    teammates: int
    gone: int
    open_tasks: int
    approvals: int
    mode: str
    error: str | None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def short_model(model: str) -> str:
    """``offline model — set ANTHROPIC_API_KEY for Claude`` -> ``offline model`` (the hint
    is on the help screen)."""
    return model.split(" — ", 1)[0].strip()


def model_and_cost(model: str, cost: str, *, short: bool, sandbox_only: bool = False) -> str:
    """The header's tail: ``Claude · claude-sonnet-5-5 · sandbox · $0.0123``; short: the
    offline model is ``offline · sandbox · $0``."""
    if short:
        model = short_model(model)
        if model.startswith("offline"):
            _, dot, rest = model.partition(" · ")  # the sandbox's state stays
            model = f"offline{dot}{rest}"
    if sandbox_only:  # the narrower forms drop the model but keep where commands run
        model = next((part for part in model.split(" · ") if "sandbox" in part), "")
    return " · ".join(part for part in (model, cost) if part)


class StatusBar(Widget):
    """One line at the top of every view. Text only (no markup): names are never parsed.

    The line comes in forms from long to short; the longest that fits the width is drawn, so
    nothing is cut at 80 columns (the model's long hint is on the help screen); past the
    shorter words, the team's name is shortened before anything else goes. Redrawn in
    place (no layout pass) and only when the line changes: it is updated on every store delta.
    """

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    App.-budget-warning StatusBar { background: $warning 50%; }
    App.-budget-stopped StatusBar { background: $error 60%; }
    """

    def show(
        self,
        *,
        team: str | None,
        model: str,
        teammates: int,
        open_tasks: int,
        approvals: int,
        view: str = "",
        read_only: bool = False,
        demo: bool = False,
        error: str | None = None,
        gone: int = 0,
        mode: str = "",
        stale: str = "",
        cost: str = "",
    ) -> None:
        """Redraw the line from these values (``gone``: teammates that left or were killed;
        ``stale``: the team is quiet, e.g. "stale since 2026-11-22 10:00"; ``cost``: the run's
        cost so far)."""
        source = "read-only viewer" if read_only else model  # a viewer that steers: its words
        self._values = _Values(
            demo, stale, view, teammates, gone, open_tasks, approvals, mode, error
        )
        self._team = team
        self._tails = [
            (False, model_and_cost(source, cost, short=False)),
            (False, model_and_cost(source, cost, short=True)),
            (True, model_and_cost(source, cost, short=True)),
            (True, model_and_cost(source, cost, short=True, sandbox_only=True)),
            (True, cost),
            (True, ""),
        ]
        forms = [self._form(team, short, tail) for short, tail in self._tails]
        if [(f.plain, f.spans) for f in forms] != [(f.plain, f.spans) for f in self._forms]:
            self._forms = forms
            self.refresh()

    _forms: list[Text] = []
    _team: str | None = None
    _values: _Values | None = None
    _tails: list[tuple[bool, str]] = []

    def _form(self, team: str | None, short: bool, model_text: str, bare: bool = False) -> Text:
        """One form of the line, with ``team`` as given (whole or already shortened);
        ``bare``: without the word "teamdeck" (the narrowest forms)."""
        v = self._values
        assert v is not None, "show() first"
        stale = v.stale
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if not bare:
            text.append("teamdeck", style="bold")
        if v.demo:
            text.append("demo" if bare else " demo", style="bold magenta")
        if not bare or v.demo:
            text.append(" · ")
        text.append(team or "no team yet", style="bold" if team else "dim italic")
        if stale:  # the shortest form keeps the word, the others the time too
            text.append(f" ({stale if model_text or not short else 'stale'})", style="yellow")
        if v.view:
            text.append(f" · {v.view}", style="italic")
        text.append(" · ")
        text.append(_plural(v.teammates, "teammate"))
        if v.gone:
            text.append(f" (+{v.gone} gone)", style="dim")
        text.append(" · ")
        open_tasks = v.open_tasks
        text.append(f"{open_tasks} open" if short else _plural(open_tasks, "open task"))
        text.append(" · ")
        approvals = v.approvals
        text.append(
            _plural(approvals, "approval" if short else "pending approval"),
            style="bold yellow" if approvals else "",
        )
        mode = v.mode
        if mode:
            text.append(f" · {MODE_LABELS.get(mode, mode)}", style="bold magenta")
        if v.error:
            text.append(f"  ⚠ {v.error}", style="bold red")
        if model_text:
            text.append(" · ")
            text.append(model_text, style="dim")
        return text

    @property
    def line(self) -> Text:
        """The form drawn at the current width: the longest that fits with the team's name
        whole; else the team's name is what gets shortened (the cost, "offline", the mode
        and a viewer's words stay), the model's words going last."""
        width = self.content_region.width or self.size.width
        for form in self._forms[:3]:
            if cell_len(form.plain) <= width:
                return form
        team = self._team
        for short, tail in self._tails[2:]:
            for bare in (False, True):
                form = self._form(team, short, tail, bare)
                if not team:
                    if cell_len(form.plain) <= width:
                        return form
                    continue
                name, deleted, _ = team.partition(DELETED)  # "(deleted)" stays whole
                room = width - (cell_len(form.plain) - cell_len(name))
                if room >= MIN_TEAM:
                    return self._form(name[: room - 1] + "…" + deleted, short, tail, bare)
        return self._forms[-1] if self._forms else Text()

    def render(self) -> Text:
        return self.line

"""The header line: team, counts of teammates, open tasks and pending approvals, the model
and the run's cost so far."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from app.display.agent_text import flat
from app.display.fit import Part, cut, fit_parts

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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def short_model(model: str) -> str:
    """``offline model — set ANTHROPIC_API_KEY for Claude`` -> ``offline model`` (the hint
    is on the help screen)."""
    return model.split(" — ", 1)[0].strip()


def model_and_cost(model: str, cost: str, *, short: bool) -> str:
    """The header's tail: ``Claude · claude-sonnet-5-5 · $0.0123``; short: the offline model
    is ``offline · $0``."""
    if short:
        model = short_model(model)
        if model.startswith("offline"):
            model = "offline"
    return " · ".join(part for part in (model, cost) if part)


class StatusBar(Widget):
    """One line at the top of every view. Text only (no markup): names are never parsed.

    The line is made of parts (``app.display.fit.fit_parts``): at a narrow width the long
    words take their short forms first ("5 open", "offline"), then the team's name is
    shortened ("(deleted)" stays whole), then parts go, the least important first: teammates
    gone, the view, the model's name, the word "teamdeck", the counts. What stays whatever the
    width: the team (shortened), the cost, "offline", the sandbox's state, the permission
    mode, an error and a viewer's words ("read-only viewer", "steering a Claude Code team").
    Redrawn in place (no layout pass) and only when the line changes: it is updated on every
    store delta.
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

    _parts: list[Part] = []
    _name_at: int | None = None
    _fitted: tuple[int, Text] | None = None

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
        if demo:
            parts = [Part("teamdeck ", "bold", drop=5), Part("demo · ", "bold magenta", drop=1)]
        else:
            parts = [Part("teamdeck · ", "bold", drop=5)]
        name_at: int | None = None
        if team:
            name, deleted, _ = team.partition(DELETED)  # "(deleted)" stays whole
            name_at = len(parts)
            parts.append(Part(flat(name), "bold"))
            if deleted:
                parts.append(Part(deleted, "bold"))
        else:
            parts.append(Part("no team yet", "dim italic"))
        if stale:
            parts.append(Part(f" ({stale})", "yellow", short=" (stale)"))
        if view:
            parts.append(Part(f" · {view}", "italic", drop=7))
        parts.append(Part(f" · {_plural(teammates, 'teammate')}", drop=4))
        if gone:
            parts.append(Part(f" (+{gone} gone)", "dim", drop=8))
        parts.append(
            Part(f" · {_plural(open_tasks, 'open task')}", drop=3, short=f" · {open_tasks} open")
        )
        parts.append(
            Part(
                f" · {_plural(approvals, 'pending approval')}",
                "bold yellow" if approvals else "",
                drop=2,
                short=f" · {_plural(approvals, 'approval')}",
            )
        )
        if mode:
            label = MODE_LABELS.get(mode, mode)
            parts.append(Part(f" · {label}", "bold magenta"))
        if error:
            error = flat(error)
            parts.append(Part(f"  ⚠ {error}", "bold red", short=f"  ⚠ {cut(error, 16)}"))
        if read_only:  # a viewer that steers: its words (never dropped), no model, no cost
            parts.append(Part(" · read-only viewer", "dim"))
        else:
            head, dash, hint = model.partition(" — ")
            segments = head.split(" · ")
            sandbox = next((p for p in segments if "sandbox" in p), "")  # where commands run
            words = " · ".join(p for p in segments if p != sandbox)
            if words.startswith("Claude · "):  # a model's name: goes before the counts
                parts.append(Part(f" · {words}", "dim", drop=6))
            elif words:  # "offline", "steering a Claude Code team": they stay
                short = "offline" if words.startswith("offline") else words
                parts.append(Part(f" · {words}{dash}{hint}", "dim", short=f" · {short}"))
            if sandbox:  # stays, as the cost does; "no sandbox", "no bwrap": a warning
                warn = sandbox.startswith("no ") or "no bwrap" in sandbox
                parts.append(Part(f" · {sandbox}", "bold yellow" if warn else "dim"))
            if cost:
                parts.append(Part(f" · {cost}", "dim"))
        if parts != self._parts or name_at != self._name_at:
            self._parts, self._name_at, self._fitted = parts, name_at, None
            self.refresh()

    @property
    def line(self) -> Text:
        """The line drawn at the current width (see the class docstring)."""
        width = self.content_region.width or self.size.width
        fitted = self._fitted
        if fitted is None or fitted[0] != width:
            text = Text(no_wrap=True, overflow="ellipsis", end="")
            parts = fit_parts(self._parts, width, shorten=self._name_at, least=MIN_TEAM)
            for part in parts:
                text.append(part.text, style=part.style)
            self._fitted = fitted = (width, text)
        return fitted[1]

    def render(self) -> Text:
        return self.line

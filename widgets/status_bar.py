"""The header line: team, counts of teammates, open tasks and pending approvals, the model
and the run's cost so far."""

from __future__ import annotations

import re
from functools import partial

from rich.text import Text
from textual.widget import Widget

from app.display.agent_text import flat
from app.display.fit import Part, cut, fit_parts_as

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


def widest_count(count: int, digits: int) -> int:
    """``count`` at its widest for the header's layout: all nines, of at least ``digits``
    digits (a team of 3 is laid out as one of 9, 2 open tasks as 99)."""
    return 10 ** max(digits, len(str(count))) - 1


def widest_cost(cost: str, model: str) -> str:
    """The cost at its widest for the header's layout: "$0.0000" or more ("$0" grows as the
    run spends); the offline model's "$0" stays "$0"."""
    if not cost or model.startswith("offline"):
        return cost
    return re.sub(r"\$[0-9.,]+", lambda m: m.group(0).ljust(7, "0"), cost)


def _parts(
    *,
    team: str | None,
    model: str,
    teammates: int,
    open_tasks: int,
    approvals: int,
    view: str,
    read_only: bool,
    demo: bool,
    error: str | None,
    gone: int,
    mode: str,
    stale: str,
    cost: str,
) -> tuple[list[Part], int | None]:
    """The header's parts from its values, and the index of the team's name."""
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
        label = MODE_LABELS.get(mode, mode)  # never dropped; "on" goes at a narrow width
        short = label.removesuffix(" on")
        parts.append(Part(f" · {label}", "bold magenta", short=f" · {short}"))
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
    return parts, name_at


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
    _widest: list[Part] = []
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
        cost so far). The line is laid out as if the counts and the cost were at their widest
        (``fit_parts_as``): one layout at a width, whatever the values."""
        build = partial(
            _parts, team=team, model=model, view=view, read_only=read_only, demo=demo,
            error=error, mode=mode, stale=stale,
        )  # fmt: skip
        parts, name_at = build(
            teammates=teammates, open_tasks=open_tasks, approvals=approvals, gone=gone, cost=cost
        )
        widest, _ = build(
            teammates=widest_count(teammates, 1), open_tasks=widest_count(open_tasks, 2),
            approvals=widest_count(approvals, 1), gone=widest_count(gone, 1) if gone else 0,
            cost=widest_cost(cost, model),
        )  # fmt: skip
        if parts != self._parts or name_at != self._name_at or widest != self._widest:
            self._parts, self._widest, self._name_at, self._fitted = parts, widest, name_at, None
            self.refresh()

    @property
    def line(self) -> Text:
        """The line drawn at the current width (see the class docstring)."""
        width = self.content_region.width or self.size.width
        fitted = self._fitted
        if fitted is None or fitted[0] != width:
            text = Text(no_wrap=True, overflow="ellipsis", end="")
            parts = fit_parts_as(
                self._parts, self._widest, width, shorten=self._name_at, least=MIN_TEAM
            )
            for part in parts:
                text.append(part.text, style=part.style)
            self._fitted = fitted = (width, text)
        return fitted[1]

    def render(self) -> Text:
        return self.line

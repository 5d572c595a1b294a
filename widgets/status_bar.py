"""The header line: team, model, counts of teammates, open tasks and pending approvals."""

from __future__ import annotations

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


class StatusBar(Widget):
    """One line at the top of every view. Text only (no markup): names are never parsed.

    Redrawn in place (no layout pass) and only when the line changes: it is updated on every
    store delta."""

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
        mode: str = "",
    ) -> None:
        """Redraw the line from these values."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("teamdeck", style="bold")
        if demo:
            text.append(" demo", style="bold magenta")
        text.append(" · ")
        text.append(team or "no team yet", style="bold" if team else "dim italic")
        if view:
            text.append(f" · {view}", style="italic")
        text.append(" · ")
        text.append(f"{teammates} teammate{'s' if teammates != 1 else ''}")
        text.append(" · ")
        text.append(f"{open_tasks} open task{'s' if open_tasks != 1 else ''}")
        text.append(" · ")
        text.append(
            f"{approvals} pending approval{'s' if approvals != 1 else ''}",
            style="bold yellow" if approvals else "",
        )
        if mode:
            text.append(f" · {MODE_LABELS.get(mode, mode)}", style="bold magenta")
        if error:
            text.append(f"  ⚠ {error}", style="bold red")
        text.append(" · ")
        text.append("read-only viewer" if read_only else model, style="dim")
        if text != self._text or text.spans != self._text.spans:
            self._text = text
            self.refresh()

    _text = Text()

    def render(self) -> Text:
        return self._text

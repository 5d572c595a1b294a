"""``?``: every key of the dashboard, by where it works (``app.dashboard.keys``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from app.dashboard.keys import SECTIONS
from app.dashboard.screens.host import DeckHost
from widgets.footer import KeyFooter

#: (key, what it does), from ``app.dashboard.keys``; a row with an empty description is a
#: section title.
KEYS: tuple[tuple[str, str], ...] = tuple(
    row for title, keys in SECTIONS for row in ((title, ""), *((k.shown, k.does) for k in keys))
)


def keys_rows(unavailable: Callable[[str], str | None]) -> list[tuple[str, str]]:
    """:data:`KEYS` on this team: a key whose lever it does not offer says why instead."""
    rows: list[tuple[str, str]] = []
    for title, keys in SECTIONS:
        rows.append((title, ""))
        for k in keys:
            why = unavailable(k.lever) if k.lever else None
            rows.append((k.shown, why or k.does))
    return rows


def keys_table(unavailable: Callable[[str], str | None] = lambda _: None) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, description in keys_rows(unavailable):
        if description:
            table.add_row(Text(key), Text(description))
        else:
            table.add_row(Text(key, style="bold underline"), Text(""))
    return table


class HelpScreen(ModalScreen[None]):
    """Every key; esc, q or ? closes."""

    AUTO_FOCUS = ".dialog-body"  # up/down/page keys scroll the text
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="help-close")]

    def __init__(self, model: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.model = model

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="help"):
            yield Static(Text("teamdeck keys", style="bold"), classes="dialog-question")
            # The header shows the model's short form; the whole description (e.g. how to use
            # the real model) is here.
            model = self.model or cast(DeckHost, self.app).model_description
            if model:
                yield Static(Text(f"Model: {model}", style="dim"), id="help-model")
            with VerticalScroll(classes="dialog-body"):
                yield Static(keys_table(self._unavailable))
            yield Static(Text("esc to close", style="dim"), classes="dialog-hint")
        yield KeyFooter()  # the dialog's keys, over the view's

    def _unavailable(self, lever: str) -> str | None:
        steering = getattr(self.app, "steering", None)
        return steering.unavailable(lever) if steering is not None else None

    def action_close(self) -> None:
        self.dismiss(None)

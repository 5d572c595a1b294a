"""``?``: every key of the dashboard, by where it works."""

from __future__ import annotations

from typing import cast

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from app.dashboard.screens.host import DeckHost

#: (key, what it does); a row with an empty description is a section title.
KEYS: tuple[tuple[str, str], ...] = (
    ("Typing", ""),
    ("(input focused)", "keys are text: no single-letter key acts while you type"),
    ("enter", "send to the lead (leader view) or to the agent shown"),
    ("esc", "leave the input: single-letter keys act again"),
    ("i / n", "back into the input (n: a new goal for the lead, after a run)"),
    ("f1", "this help, while typing"),
    ("Leader and agent views", ""),
    ("shift+up / shift+down", "select the previous / next agent"),
    ("1-9 / 0", "jump to teammate 1-9 / to the lead"),
    ("enter", "roster: open the agent's view · approvals: review · feed: read the message"),
    ("esc", "agent view: back to the leader view (after leaving the input)"),
    ("a", "approve the selected teammate's oldest request (highlighted in the queue)"),
    ("r", "reject it: asks for plan feedback, a shutdown reason, or why a permission is denied"),
    ("v", "review that request in its dialog"),
    ("s", "ask the selected teammate to shut down"),
    ("K", "kill the selected teammate (asks first)"),
    ("f", "feed: only the selected agent's messages / everything"),
    ("/", "search the feed (agent view: the transcript) as you type: text, sender or type"),
    ("n / N", "with a search: the next / previous matching line (enter leaves the box)"),
    ("esc", "close the search: everything shown again"),
    ("ctrl+t", "show / hide the task board"),
    ("tab", "move to the next panel"),
    (
        "shift+tab",
        "the lead's permission mode: default → acceptEdits → plan (→ bypassPermissions"
        " once allowed); shown in the header",
    ),
    ("up / down", "roster: select · queue: select a request · board, feed: move"),
    ("ctrl+p", "command palette: spawn, shut down, kill, views, filter, switch team, theme"),
    ("?", "this help"),
    ("ctrl+q", "quit (with a live team: asks whether to shut it down)"),
    ("Plan or shutdown review", ""),
    ("a", "approve"),
    ("r", "reject (asks for feedback / a reason)"),
    ("esc", "close without answering"),
    ("Permission request", ""),
    ("y", "allow once"),
    ("A", "always allow (adds the suggested rule)"),
    ("n", "deny (a Claude Code team: asks why first, optional)"),
    ("esc", "close without answering"),
    ("Message", ""),
    ("esc / q / enter", "close"),
    ("Quitting with a live team", ""),
    ("y / enter", "shut the team down (asks each teammate, then deletes the team)"),
    ("l", "leave it on disk (listed at the next start)"),
    ("n / esc", "cancel"),
    ("Teams left on disk (at start)", ""),
    ("d", "delete them"),
    ("k / enter / esc", "keep them (ctrl+p: switch team)"),
    ("Spawning a teammate (ctrl+p)", ""),
    ("up / down, enter", "its permission mode (the team's is highlighted)"),
    ("Dialogs", ""),
    ("y / enter", "confirm"),
    ("n / esc", "cancel"),
)


def keys_table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, description in KEYS:
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
                yield Static(keys_table())
            yield Static(Text("esc to close", style="dim"), classes="dialog-hint")

    def action_close(self) -> None:
        self.dismiss(None)

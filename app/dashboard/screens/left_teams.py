"""Teams an earlier run left on disk, shown when the dashboard starts with none of its own:
``d`` deletes them all (the team, its inboxes and its tasks), ``enter``/``esc`` keeps them
(reachable through the palette's "Switch team").

``ModalScreen[bool]``: dismissed with True to delete.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.dashboard import keys
from widgets.footer import KeyFooter


class LeftTeamsScreen(ModalScreen[bool]):
    """See the module docstring."""

    AUTO_FOCUS = "#keep"
    BINDINGS = [
        keys.LEFT_DELETE.binding(),
        keys.LEFT_KEEP.binding(),
    ]

    def __init__(self, teams: list[str], *, resume: str = "") -> None:
        super().__init__(classes="dialog-screen")
        self.teams = teams
        #: The command that resumes the first one, as the person can type it (with ``--home``
        #: and ``.venv/bin/`` where they are needed: ``teamdeck --team beta`` looked in the
        #: default home).
        self.resume = resume or f"teamdeck --team {teams[0]}"

    def compose(self) -> ComposeResult:
        many = len(self.teams) != 1
        text = Text()
        text.append(f"{len(self.teams)} team{'s' if many else ''} left on disk", style="bold")
        text.append(" by an earlier run:\n")
        for name in self.teams:
            text.append(f"  • {name}\n", style="bold")
        text.append("\nDelete removes their config, inboxes and tasks. Kept, they stay reachable ")
        text.append("with ctrl+p → Switch team; ")
        text.append(self.resume, style="bold")
        text.append(" resumes one (its lead carries on with its tasks).")
        with Vertical(classes="dialog", id="left-teams"):
            yield Static(text, classes="dialog-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Delete (d)", variant="error", id="delete")
                yield Button("Keep (enter)", id="keep")
        yield KeyFooter()  # the dialog's keys, over the view's

    def action_choose(self, delete: bool) -> None:
        self.dismiss(delete)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "delete")

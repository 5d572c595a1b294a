"""Quitting while a team is working: shut it down (default), leave it on disk, or stay.

``ModalScreen[str | None]``, dismissed with ``"shutdown"``, ``"leave"`` or ``None`` (cancel).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class QuitScreen(ModalScreen[str | None]):
    """Ask what becomes of ``team`` (with ``working`` teammates still at it)."""

    AUTO_FOCUS = "#shutdown"
    BINDINGS = [
        Binding("y,enter", "choose('shutdown')", "Shut down", id="quit-shutdown"),
        Binding("l", "choose('leave')", "Leave on disk", id="quit-leave"),
        Binding("n,escape", "choose('')", "Cancel", id="quit-cancel"),
    ]

    def __init__(self, team: str, working: int) -> None:
        super().__init__(classes="dialog-screen")
        self.team = team
        self.working = working

    def compose(self) -> ComposeResult:
        who = f"{self.working} teammate{'s' if self.working != 1 else ''} still working"
        question = Text.assemble(
            "Quit while team ", (self.team, "bold"), f" is live ({who})?\n\n",
            "Shutting it down asks every teammate to stop and deletes the team and its tasks. ",
            "Left on disk, it is listed the next time teamdeck starts.",
        )  # fmt: skip
        with Vertical(classes="dialog", id="quit"):
            yield Static(question, classes="dialog-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Shut down (y)", variant="error", id="shutdown")
                yield Button("Leave on disk (l)", id="leave")
                yield Button("Cancel (n)", id="cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice or None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = event.button.id or ""
        self.dismiss(None if choice == "cancel" else choice)

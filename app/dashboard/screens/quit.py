"""Quitting while a team is working: shut it down (default), leave it, or stay.

A team whose teammates run in processes of their own (``--teammate-mode process|tmux``) is
left *running*: its teammates go on working and ``teamdeck attach`` opens it again. An
in-process team is left on disk (its teammates stop with the dashboard).

``ModalScreen[str | None]``, dismissed with ``"shutdown"``, ``"leave"`` or ``None`` (cancel).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.dashboard import keys


class QuitScreen(ModalScreen[str | None]):
    """Ask what becomes of ``team`` (with ``working`` teammates still at it)."""

    AUTO_FOCUS = "#shutdown"
    BINDINGS = [
        keys.QUIT_SHUTDOWN.binding(),
        keys.QUIT_LEAVE.binding(),
        keys.QUIT_CANCEL.binding(),
    ]

    def __init__(self, team: str, working: int, *, running: bool = False) -> None:
        super().__init__(classes="dialog-screen")
        self.team = team
        self.working = working
        #: The teammates run in processes of their own: leaving keeps them working.
        self.running = running

    def compose(self) -> ComposeResult:
        who = f"{self.working} teammate{'s' if self.working != 1 else ''} still working"
        left: tuple[str | tuple[str, str], ...]
        if self.running:
            left = (
                "Left running, its teammates keep working; ",
                (f"teamdeck attach {self.team}", "bold"),
                " opens it again.",
            )
        else:
            left = ("Left on disk, it is listed the next time teamdeck starts.",)
        question = Text.assemble(
            "Quit while team ", (self.team, "bold"), f" is live ({who})?\n\n",
            "Shutting it down asks every teammate to stop and deletes the team and its tasks. ",
            *left,
        )  # fmt: skip
        with Vertical(classes="dialog", id="quit"):
            yield Static(question, classes="dialog-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Shut down (y)", variant="error", id="shutdown")
                yield Button("Leave running (l)" if self.running else "Leave on disk (l)",
                             id="leave")  # fmt: skip
                yield Button("Cancel (n)", id="cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice or None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = event.button.id or ""
        self.dismiss(None if choice == "cancel" else choice)

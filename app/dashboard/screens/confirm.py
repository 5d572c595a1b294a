"""A yes/no question (``ModalScreen[bool]``): y or enter confirms, n or esc cancels."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.dashboard import keys
from widgets.footer import KeyFooter


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``question``; dismissed with True (confirmed) or False."""

    BINDINGS = [
        keys.CONFIRM.binding(),
        keys.CANCEL.binding(),
    ]

    def __init__(self, question: str, *, confirm_label: str = "Yes") -> None:
        super().__init__(classes="dialog-screen")
        self.question = question
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.question), classes="dialog-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm_label} (y)", variant="error", id="yes")
                yield Button("Cancel (n)", id="no")
        yield KeyFooter()  # the dialog's keys, over the view's

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The footer names what y does here, as its button does ("y Kill", not "y Yes")."""
        found = super().active_bindings
        shown = found.get("y")
        if shown is not None:
            label = replace(shown.binding, description=self.confirm_label)
            found["y"] = shown._replace(binding=label)
        return found

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)

"""Ask for one line of text (``ModalScreen[str | None]``): plan feedback, a reason, a name."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from widgets.footer import KeyFooter


class FeedbackScreen(ModalScreen[str | None]):
    """Dismissed with the text entered (enter), or ``None`` (esc). Empty text is refused
    unless ``allow_empty``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="feedback-cancel")]

    def __init__(
        self,
        title: str,
        *,
        placeholder: str = "",
        hint: str = "enter to send · esc to cancel",
        allow_empty: bool = False,
        value: str = "",
    ) -> None:
        """``value``: the text to start from (an edit)."""
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.placeholder = placeholder
        self.hint = hint
        self.allow_empty = allow_empty
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), classes="dialog-question")
            yield Input(self.value, placeholder=self.placeholder, id="feedback")
            yield Static(Text(self.hint, style="dim"), classes="dialog-hint")
        yield KeyFooter()  # the dialog's keys, over the view's

    def on_mount(self) -> None:
        self.query_one("#feedback", Input).focus()

    @on(Input.Submitted, "#feedback")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text or self.allow_empty:
            self.dismiss(text)
        else:
            self.notify("Type something first (esc cancels).", severity="warning")

    def action_cancel(self) -> None:
        self.dismiss(None)

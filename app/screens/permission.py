"""A permission request in a modal: the tool and its input; y allows once, A always allows
(adds the suggested rule), n denies, esc closes without answering.

Dismissed with ``"allow"``, ``"always"``, ``"deny"`` or ``None``.
"""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.runtime.api import Approval


class PermissionScreen(ModalScreen[str | None]):
    """See the module docstring."""

    AUTO_FOCUS = ".dialog-body"  # up/down/page keys scroll the text
    BINDINGS = [
        Binding("y", "answer('allow')", "Allow once", id="permission-allow"),
        Binding("A", "answer('always')", "Always allow", id="permission-always"),
        Binding("n", "answer('deny')", "Deny", id="permission-deny"),
        Binding("escape", "answer('')", "Close", id="permission-close"),
    ]

    def __init__(self, approval: Approval) -> None:
        super().__init__(classes="dialog-screen")
        self.approval = approval
        self.request_id = approval.request_id

    def compose(self) -> ComposeResult:
        approval = self.approval
        tool = approval.tool_name or "tool"
        with Vertical(classes="dialog wide"):
            yield Static(
                Text.assemble((approval.agent, "bold"), " wants to use ", (tool, "bold yellow")),
                classes="dialog-question",
            )
            with VerticalScroll(classes="dialog-body"):
                yield Static(Syntax(approval.body or "{}", "json", word_wrap=True), id="input")
            if approval.suggestion:
                hint = f"Always allow adds the rule {approval.suggestion}"
                yield Static(Text(hint, style="dim"), classes="dialog-hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Allow once (y)", variant="success", id="allow")
                yield Button("Always (A)", variant="primary", id="always")
                yield Button("Deny (n)", variant="error", id="deny")

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer or None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("allow", "always", "deny"):
            self.dismiss(event.button.id)

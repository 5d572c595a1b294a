"""A permission request in a modal: the tool and its input (a shell command as the line it
runs, with what it is for; other tools' input as JSON); y allows once, A always allows (adds the
suggested rule), n denies, esc closes without answering. An Edit/Write/MultiEdit request shows
what it would change as a diff (given by the view: ``app.dashboard.review``). The keys that
answer a request outside the dialog work here too: a allows once, r denies.

Dismissed with ``"allow"``, ``"always"``, ``"deny"`` or ``None``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from app.dashboard import keys
from app.display.request_text import rule_words
from app.runtime.api import Approval
from app.runtime.review.diffs import FileDiff
from widgets.agent_text import agent_text, shown
from widgets.diff_view import DiffView
from widgets.footer import KeyFooter


def shown_input(approval: Approval) -> RenderableType:
    """What the tool would do: ``$ command`` (and why) for a shell command, else the JSON."""
    data: dict[str, Any] = approval.tool_input or {}
    command = data.get("command")
    if not isinstance(command, str):
        return Syntax(shown(approval.body or "{}"), "json", word_wrap=True)
    parts: list[RenderableType] = [Syntax(f"$ {shown(command)}", "bash", word_wrap=True)]
    for key, value in data.items():
        if key != "command":
            parts.append(agent_text(f"{key}: {value}", style="dim"))
    return Group(*parts)


class PermissionScreen(ModalScreen[str | None]):
    """See the module docstring."""

    AUTO_FOCUS = ".dialog-body"  # up/down/page keys scroll the text
    BINDINGS = [
        *keys.ALLOW_ONCE.bindings,
        keys.ALLOW_ALWAYS.binding(),
        *keys.DENY.bindings,
        keys.PERMISSION_CLOSE.binding(),
    ]

    def __init__(self, approval: Approval, diff: FileDiff | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.approval = approval
        self.diff = diff
        self.request_id = approval.request_id

    def compose(self) -> ComposeResult:
        approval = self.approval
        tool = approval.tool_name or "tool"
        with Vertical(classes="dialog wide diff" if self.diff else "dialog wide"):
            yield Static(
                Text.assemble(
                    (shown(approval.agent), "bold"), " wants to use ", (shown(tool), "bold yellow")
                ),
                classes="dialog-question",
            )
            if approval.origin:  # a Claude Code request: its session, team and folder
                yield Static(Text(shown(approval.origin), style="dim"), id="origin")
            with VerticalScroll(classes="dialog-body"):
                if self.diff is not None:
                    yield DiffView(self.diff, id="diff")
                else:
                    yield Static(shown_input(approval), id="input")
            if approval.suggestion:
                hint = f"Always allow adds the rule {rule_words(approval.suggestion)}"
                if approval.rule_home:  # a Claude Code request: where the rule lives
                    hint += f", {approval.rule_home}"
                yield Static(Text(hint, style="dim"), classes="dialog-hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Allow once (y/a)", variant="success", id="allow")
                yield Button("Always (A)", variant="primary", id="always")
                yield Button("Deny (n/r)", variant="error", id="deny")
        yield KeyFooter()  # the dialog's keys, over the view's

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer or None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("allow", "always", "deny"):
            self.dismiss(event.button.id)

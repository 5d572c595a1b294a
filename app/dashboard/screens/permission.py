"""A permission request in a modal: the tool and its input (a shell command as the line it
runs, with what it is for; other tools' input as JSON); y allows once, A always allows (adds the
rule shown), n denies, esc closes without answering. An Edit/Write/MultiEdit request shows
what it would change as a diff (given by the view: ``app.dashboard.review``). The keys that
answer a request outside the dialog work here too: a allows once, r denies.

A Claude Code request offers Claude Code's own rules (``Approval.rule_choices``: this exact
command, its prefix, a file's directory): c picks the one A adds, and the dialog shows it, and
where it will live, before anything is added. e edits a shell command first: the dialog then
shows the edited command, which is what y or A run.

Dismissed with ``"allow"``, ``"always"``, ``"deny"`` or ``None``; :meth:`PermissionScreen.chosen`
is the request as answered (the rule picked, the command as edited).
"""

from __future__ import annotations

from dataclasses import replace
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
from app.dashboard.screens.feedback import FeedbackScreen
from app.display.request_text import rule_words
from app.runtime.api import Approval
from app.runtime.bridge.choices import rule_choices
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
        keys.RULE_CHOICE.binding(),
        keys.EDIT_COMMAND.binding(),
        *keys.DENY.bindings,
        keys.PERMISSION_CLOSE.binding(),
    ]

    def __init__(self, approval: Approval, diff: FileDiff | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.approval = approval
        self.diff = diff
        self.request_id = approval.request_id
        #: the rules A may add (the request's; an edited command's own once edited)
        self.choices = list(approval.rule_choices)
        rules = [rule for rule, _ in self.choices]
        #: the rule A adds: an index into ``choices`` (the suggestion at first)
        self.rule_index = rules.index(approval.suggestion) if approval.suggestion in rules else 0
        #: the input as the person edited it (``None``: as the agent asked)
        self.edited: dict[str, Any] | None = None

    def chosen(self) -> Approval:
        """The request as the person answered it: the rule picked, the command as edited."""
        approval = self.approval
        if self.choices:
            approval = replace(approval, suggestion=self.choices[self.rule_index][0])
        if self.edited is not None:
            approval = replace(approval, tool_input=self.edited)
        return approval

    def _rule_hint(self) -> Text:
        approval = self.approval
        if self.choices:
            rule, words = self.choices[self.rule_index]
            hint = f"Always allow (A) adds the rule {rule_words(rule)} ({words})"
        else:
            hint = f"Always allow adds the rule {rule_words(approval.suggestion or '')}"
        if approval.rule_home:  # a Claude Code request: where the rule lives
            hint += f", {approval.rule_home}"
        if len(self.choices) > 1:
            hint += f" · c: the next of {len(self.choices)} choices"
        return Text(hint, style="dim")

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
            yield Static("", id="edited", classes="dialog-hint")
            if approval.suggestion:
                yield Static(self._rule_hint(), id="rule", classes="dialog-hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Allow once (y/a)", variant="success", id="allow")
                yield Button("Always (A)", variant="primary", id="always")
                yield Button("Deny (n/r)", variant="error", id="deny")
        yield KeyFooter()  # the dialog's keys, over the view's

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """c and e only where they act (a Claude Code request's choices, its shell command):
        elsewhere the footer does not offer them."""
        if action == "next_rule":
            return len(self.choices) > 1
        if action == "edit_command":
            return self._command() is not None and bool(self.approval.rule_home)
        return True

    def on_mount(self) -> None:
        self.query_one("#edited").display = False

    def action_next_rule(self) -> None:
        """``c``: the next of Claude Code's rule choices, shown before anything is added."""
        count = len(self.choices)
        if count < 2:
            self.notify("This request offers one rule only.", severity="warning")
            return
        self.rule_index = (self.rule_index + 1) % count
        self.query_one("#rule", Static).update(self._rule_hint())

    def _command(self) -> str | None:
        data = self.edited if self.edited is not None else self.approval.tool_input or {}
        command = data.get("command")
        return command if isinstance(command, str) else None

    def action_edit_command(self) -> None:
        """``e``: edit the shell command; the dialog then shows what will run."""
        command = self._command()
        if command is None or not self.approval.rule_home:
            self.notify("Only a Claude Code shell command can be edited.", severity="warning")
            return
        ask = FeedbackScreen(
            f"Edit {self.approval.agent}'s command (it runs as you leave it)",
            value=command,
            hint="enter keeps the edit (then y or A allows it) · esc leaves it as it was",
        )
        self.app.push_screen(ask, self._edited)

    def _edited(self, command: str | None) -> None:
        if command is None or command == self._command():
            return
        self.edited = {**(self.approval.tool_input or {}), "command": command}
        if command == (self.approval.tool_input or {}).get("command"):
            self.edited = None
        shown_now = replace(self.approval, tool_input=self.edited or self.approval.tool_input)
        if self.choices:  # the edited command's own rules, the same kind still picked
            words = self.choices[self.rule_index][1]
            tool = self.approval.tool_name or "Bash"
            self.choices = rule_choices({}, tool, shown_now.tool_input or {})
            kinds = [w for _, w in self.choices]
            self.rule_index = kinds.index(words) if words in kinds else 0
            self.query_one("#rule", Static).update(self._rule_hint())
        self.query_one("#input", Static).update(shown_input(shown_now))
        note = self.query_one("#edited", Static)
        note.display = self.edited is not None
        note.update(
            Text(
                f"Edited by you: this runs instead of {self.approval.agent}'s command",
                style="bold yellow",
            )
        )

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer or None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("allow", "always", "deny"):
            self.dismiss(event.button.id)

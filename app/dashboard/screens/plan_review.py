"""Review a plan (or a shutdown request) in a modal: the text as Markdown, with file and
code names as written (``__init__.py`` stays ``__init__.py``: see ``widgets.literal_markdown``);
a approves, r rejects after asking for feedback (or a reason), esc closes without answering.

Dismissed with ``("approve", "")``, ``("reject", text)`` or ``None``.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Markdown, Static

from app.dashboard import keys
from app.dashboard.screens.feedback import FeedbackScreen
from app.runtime.api import Approval
from widgets.agent_text import agent_text, shown
from widgets.footer import KeyFooter
from widgets.literal_markdown import literal_parser

Decision = tuple[str, str]


def touched_line(touched: list[str] | str) -> Text:
    """``Files touched so far: a.py (+3 -1), b.py (new, +9 -0)`` (d shows them)."""
    line = Text("Files touched so far: ", style="bold")
    if isinstance(touched, str):
        return line.append(shown(touched), style="yellow")
    return line.append(
        shown(", ".join(touched)) if touched else "none", style="dim" if not touched else ""
    )


class PlanReviewScreen(ModalScreen[Decision | None]):
    """See the module docstring. ``request_id`` lets the app close it when answered elsewhere."""

    AUTO_FOCUS = ".dialog-body"  # up/down/page keys scroll the text
    BINDINGS = [
        keys.PLAN_APPROVE.binding(),
        keys.PLAN_REJECT.binding(),
        keys.PLAN_CLOSE.binding(),
    ]

    def __init__(self, approval: Approval, touched: list[str] | str | None = None) -> None:
        """``touched``: the files the teammate changed so far (or why they are unknown)."""
        super().__init__(classes="dialog-screen")
        self.approval = approval
        self.touched = touched
        self.request_id = approval.request_id

    def compose(self) -> ComposeResult:
        approval = self.approval
        shutdown = approval.kind == "shutdown"
        with Vertical(classes="dialog wide"):
            yield Static(agent_text(approval.title, style="bold"), classes="dialog-question")
            if approval.origin:  # a Claude Code request: its session, team and folder
                yield Static(agent_text(approval.origin, style="dim"), id="origin")
            with VerticalScroll(classes="dialog-body"):
                if shutdown:
                    reason = approval.body or "(no reason given)"
                    yield Static(agent_text(f"Reason: {reason}"))
                else:
                    yield Markdown(
                        shown(approval.body) or "*(empty plan)*",
                        id="plan",
                        parser_factory=literal_parser,
                    )
            if self.touched is not None:
                yield Static(touched_line(self.touched), id="touched", classes="dialog-hint")
            if approval.approve_words:  # approving is not the person's word alone: say so now
                words = f"a: {approval.approve_words}"
                yield Static(agent_text(words, style="yellow"), id="approve-words")
            with Horizontal(classes="dialog-buttons"):
                label = "Approve (a): to the lead" if approval.approve_words else "Approve (a)"
                yield Button(label, variant="success", id="approve")
                yield Button("Reject (r)", variant="error", id="reject")
                yield Button("Close (esc)", id="close")
        yield KeyFooter()  # the dialog's keys, over the view's

    def action_approve(self) -> None:
        self.dismiss(("approve", ""))

    def action_reject(self) -> None:
        if self.approval.kind == "shutdown":
            ask = FeedbackScreen(
                f"Why should {self.approval.agent} keep working?",
                placeholder="reason for rejecting the shutdown",
            )
        else:
            ask = FeedbackScreen(
                f"Feedback for {self.approval.agent}'s plan",
                placeholder="what should change (sent to the teammate)",
            )

        def done(text: str | None) -> None:
            if text is not None:
                self.dismiss(("reject", text))

        self.app.push_screen(ask, done)

    def action_close(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#approve")
    def _approve(self) -> None:
        self.action_approve()

    @on(Button.Pressed, "#reject")
    def _reject(self) -> None:
        self.action_reject()

    @on(Button.Pressed, "#close")
    def _close(self) -> None:
        self.dismiss(None)

"""One task in full (``enter`` on the task board): its subject, status, owner, what it blocks
and waits for, and its whole description (the board cuts the subject to its column). "waits
for" names the blockers still open, as the board's column does, and the finished ones as done
(it listed a completed blocker as one the task still waited for)."""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from app.core.models import Task
from app.dashboard import keys
from widgets.footer import KeyFooter


class TaskScreen(ModalScreen[None]):
    """See the module docstring; esc, q or enter closes."""

    AUTO_FOCUS = ".dialog-body"
    BINDINGS = [keys.MESSAGE_CLOSE.binding()]

    def __init__(self, task: Task, *, is_open: Callable[[str], bool] = lambda _: True) -> None:
        super().__init__(classes="dialog-screen")
        self.task_shown = task
        self.is_open = is_open

    def compose(self) -> ComposeResult:
        task = self.task_shown
        head = Text.assemble((f"#{task.id} ", "bold"), (task.subject, "bold"))
        fields = Table.grid(padding=(0, 2))
        fields.add_column(style="dim", no_wrap=True)
        fields.add_column()
        fields.add_row("status", Text(task.status))
        fields.add_row("owner", Text(task.owner or "-"))
        if task.active_form:
            fields.add_row("doing", Text(task.active_form))
        if task.blocked_by:
            fields.add_row("waits for", Text(self._waits_for(task.blocked_by)))
        if task.blocks:
            fields.add_row("blocks", Text(", ".join(f"#{t}" for t in task.blocks)))
        with Vertical(classes="dialog wide", id="task"):
            yield Static(head, classes="dialog-question")
            with VerticalScroll(classes="dialog-body"):
                yield Static(fields, id="task-fields")
                yield Static(Text(task.description or "(no description)"), id="task-text")
            yield Static(Text("esc to close", style="dim"), classes="dialog-hint")
        yield KeyFooter()

    def _waits_for(self, blockers: list[str]) -> str:
        """``#1 (#2 done)``: the open blockers, then the finished ones."""
        waiting = ", ".join(f"#{t}" for t in blockers if self.is_open(t)) or "nothing now"
        done = ", ".join(f"#{t}" for t in blockers if not self.is_open(t))
        return f"{waiting} ({done} done)" if done else waiting

    def action_close(self) -> None:
        self.dismiss(None)

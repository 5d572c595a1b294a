"""An agent's work so far (``d``), one file at a time: ``]`` / ``[`` move between files, the
request keys answer the agent's pending request from here (``a`` approves, ``r`` rejects, ``v``
opens it), esc closes.

Dismissed with ``"approve"``, ``"reject"``, ``"review"`` or ``None``; the view that opened it
answers. The diffs are given (``app.dashboard.review``): the screen reads no file.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from app.dashboard import keys
from app.runtime.review.diffs import FileDiff
from widgets.diff_view import DiffView
from widgets.footer import KeyFooter


class WorkReviewScreen(ModalScreen[str | None]):
    """See the module docstring. ``request``: the agent's pending request in words, if any."""

    AUTO_FOCUS = ".dialog-body"
    BINDINGS = [
        *keys.WORK_FILES.bindings,
        *keys.WORK_ANSWER.bindings,
        keys.WORK_CLOSE.binding(),
    ]

    def __init__(self, agent: str, files: list[FileDiff] | str, request: str | None) -> None:
        super().__init__(classes="dialog-screen")
        self.agent = agent
        self.files = files
        self.request = request
        self.index = 0

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide diff"):
            yield Static(id="work-title", classes="dialog-question")
            with VerticalScroll(classes="dialog-body"):
                yield DiffView(id="work-diff")
            yield Static(self._hint(), classes="dialog-hint")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._show()

    def _hint(self) -> Text:
        if self.request is None:
            return Text(f"{self.agent} has no pending request.", style="dim")
        return Text(f"Pending: {self.request} · a approve · r reject · v review", style="dim")

    def _show(self) -> None:
        files = self.files
        heading = Text.assemble((self.agent, "bold"), "'s work so far")
        view = self.query_one("#work-diff", DiffView)
        if isinstance(files, str):
            heading.append(f": {files}", style="yellow")
            view.show(None)
        elif not files:
            heading.append(": no changed file", style="dim")
            view.show(None)
        else:
            count = len(files)
            heading.append(f" · file {self.index + 1} of {count}", style="dim")
            if count > 1:
                heading.append("  ] next · [ previous", style="dim")
            view.show(files[self.index])
            self.query_one(".dialog-body", VerticalScroll).scroll_home(animate=False)
        self.query_one("#work-title", Static).update(heading)

    def action_file(self, step: int) -> None:
        if isinstance(self.files, list) and self.files:
            self.index = (self.index + step) % len(self.files)
            self._show()

    def action_answer(self, answer: str) -> None:
        if answer and self.request is None:
            self.notify(f"{self.agent} has no pending request.", severity="warning")
            return
        self.dismiss(answer or None)

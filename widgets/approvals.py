"""The approvals queue: pending plan, permission and shutdown requests, oldest first.

A permission request is denied when nobody answers it within the run's permission timeout;
once a second (:meth:`ApprovalsQueue.tick`) its row shows the time left in its last minute."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from app.display.agent_text import flat
from app.display.request_text import request_line, request_what
from app.runtime.api import Approval
from widgets.agent_text import Fitted

KINDS: dict[str, tuple[str, str]] = {
    "plan": ("plan", "bold magenta"),
    "permission": ("perm", "bold yellow"),
    "shutdown": ("stop", "bold red"),
}
EMPTY_ID = "-empty-"
#: Narrower than this (the roster's column), a row takes two lines: who asks, then what it
#: runs (its start and its end), rather than cutting the command to a few cells.
TWO_LINES_BELOW = 48
#: A permission request's row counts down in the last this many seconds before it times out.
COUNTDOWN = 60.0


def approval_prompt(approval: Approval, left: int | None = None, width: int = 80) -> Text:
    """The row of ``approval`` in ``width`` cells; ``left``: seconds before it times out
    (shown when given). A permission request shows what it runs (its start and its end),
    never its asker's description alone (``app.display.request_text``)."""
    label, style = KINDS.get(approval.kind, (approval.kind, "bold"))
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{label:<4} ", style=style)
    if left is not None:  # 0: the asker stopped waiting (its answer can no longer help)
        words = f"{left // 60}:{left % 60:02d} left" if left else "timed out"
        text.append(f"{words} ", style="bold red")
    if width >= TWO_LINES_BELOW:
        text.append(request_line(approval, width - text.cell_len))
        return text
    text.append(Text(flat(approval.agent), no_wrap=True, overflow="ellipsis"))
    text.truncate(width, overflow="ellipsis")
    text.append("\n")
    text.append("  " + request_what(approval, width - 2))
    return text


def fitted_prompt(approval: Approval, left: int | None = None) -> Fitted:
    """:func:`approval_prompt` at the width the row is drawn at."""
    return Fitted(lambda width: approval_prompt(approval, left, width))


def seconds_left(approval: Approval, now: float, limit: float | None) -> int | None:
    """Whole seconds before a permission request times out, when under :data:`COUNTDOWN`
    (``None``: more than that, no limit, or another kind of request)."""
    if limit is None or approval.kind != "permission":
        return None
    left = approval.created_at + limit - now
    return max(0, math.ceil(left)) if left < COUNTDOWN else None


class ApprovalsQueue(OptionList):
    """Options keyed by request id; the highlight survives updates while its request is pending."""

    DEFAULT_CSS = """
    ApprovalsQueue {
        height: auto;
        max-height: 8;
        scrollbar-size-vertical: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.approvals: list[Approval] = []
        self._left: dict[str, int | None] = {}  # the seconds left each row shows

    def set_approvals(self, approvals: list[Approval]) -> None:
        ids = [a.request_id for a in approvals]
        if ids == [a.request_id for a in self.approvals] and self.option_count:
            self.approvals = list(approvals)
            return
        keep = self.selected_id
        self.approvals = list(approvals)
        self._left.clear()
        self.clear_options()
        if not approvals:
            self.add_option(Option(Text("nothing to approve", style="dim italic"), EMPTY_ID, True))
            return
        self.add_options(Option(fitted_prompt(a), id=a.request_id) for a in approvals)
        self.highlighted = ids.index(keep) if keep in ids else None

    def tick(self, now: float, limit: float | None) -> None:
        """Once a second: redraw the rows whose time left changed (``limit``: the run's
        permission timeout, ``None`` for none)."""
        for approval in self.approvals:
            left = seconds_left(approval, now, limit)
            if left != self._left.get(approval.request_id):
                self._left[approval.request_id] = left
                self.replace_option_prompt(approval.request_id, fitted_prompt(approval, left))

    def on_focus(self) -> None:
        if self.highlighted is None and self.approvals:
            self.highlighted = 0  # reached with tab: the oldest request (its agent is selected)

    def highlight_request(self, request_id: str | None) -> None:
        """Highlight the request ``a``/``r``/``v`` would answer (``None``: nothing)."""
        ids = [a.request_id for a in self.approvals]
        self.highlighted = ids.index(request_id) if request_id in ids else None

    @property
    def selected_id(self) -> str | None:
        """The highlighted request's id (``None`` when the queue is empty)."""
        if self.highlighted is None or not self.approvals:
            return None
        option_id = self.get_option_at_index(self.highlighted).id
        return None if option_id == EMPTY_ID else option_id

    @property
    def selected(self) -> Approval | None:
        """The highlighted request (``None``: nothing highlighted)."""
        chosen = self.selected_id
        return next((a for a in self.approvals if a.request_id == chosen), None)

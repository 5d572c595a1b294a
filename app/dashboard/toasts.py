"""Toasts of background events, coalesced: a burst becomes one toast ("3 tasks completed").

The app's own answers to a key press are notified at once; what happens in the team (tasks
completed, requests arriving) comes in bursts, so those go through :class:`ToastBatch`: the
first of a kind waits ``window`` seconds for the others, then one toast tells them all.
No Textual here: the app passes how to schedule and how to show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

#: How loud a toast is (Textual's ``SeverityLevel``).
Severity = Literal["information", "warning", "error"]

#: Title of a burst of one kind: ``plural(count)``.
PLURALS: dict[str, Callable[[int], str]] = {
    "Task completed": lambda n: f"{n} tasks completed",
    "Plan": lambda n: f"{n} plans to review",
    "Permission": lambda n: f"{n} permission requests",
}
MAX_LINES = 4


def request_kind(title: str) -> str | None:
    """The kind of request a toast's title announces ("Plan", "3 permission requests"...)."""
    if title == "Plan" or title.endswith("plans to review"):
        return "plan"
    if title == "Permission" or title.endswith("permission requests"):
        return "permission"
    return None


@dataclass
class _Pending:
    title: str
    severity: Severity
    lines: list[str] = field(default_factory=list)


class ToastBatch:
    """Collects toasts by title for ``window`` seconds; see the module docstring.

    Args:
        show: ``show(message, title, severity)`` draws one toast (markup already escaped).
        schedule: ``schedule(delay, callback)`` runs ``callback`` once after ``delay`` seconds.
    """

    def __init__(
        self,
        show: Callable[[str, str, Severity], object],
        schedule: Callable[[float, Callable[[], None]], object],
        window: float = 0.3,
    ) -> None:
        self.show = show
        self.schedule = schedule
        self.window = window
        self._pending: dict[str, _Pending] = {}

    def add(self, message: str, title: str, severity: Severity = "information") -> None:
        pending = self._pending.get(title)
        if pending is None:
            pending = self._pending[title] = _Pending(title, severity)
            self.schedule(self.window, lambda: self._flush(title))
        pending.lines.append(message)

    def _flush(self, title: str) -> None:
        pending = self._pending.pop(title, None)
        if pending is None:
            return
        lines = pending.lines
        if len(lines) == 1:
            self.show(lines[0], title, pending.severity)
            return
        plural = PLURALS.get(title, lambda n: f"{title} ×{n}")
        shown = lines[:MAX_LINES]
        if len(lines) > MAX_LINES:
            shown.append(f"…and {len(lines) - MAX_LINES} more")
        self.show("\n".join(shown), plural(len(lines)), pending.severity)

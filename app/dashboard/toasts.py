"""Toasts of background events, coalesced: a burst becomes one toast ("3 tasks completed").

The app's own answers to a key press are notified at once; what happens in the team (tasks
completed, requests arriving) comes in bursts, so those go through :class:`ToastBatch`: the
first of a kind waits ``window`` seconds for the others, then one toast tells them all.
A burst is of one team (``tag``, read when each toast comes): a team shown after the first
toast never gets the previous team's burst as its own.
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
    tag: str | None
    lines: list[str] = field(default_factory=list)


class ToastBatch:
    """Collects toasts by title for ``window`` seconds; see the module docstring.

    Args:
        show: ``show(message, title, severity, tag)`` draws one toast (markup already escaped).
        schedule: ``schedule(delay, callback)`` runs ``callback`` once after ``delay`` seconds.
        tag: whose toasts come now (the team shown): a burst is of one tag.
    """

    def __init__(
        self,
        show: Callable[[str, str, Severity, str | None], object],
        schedule: Callable[[float, Callable[[], None]], object],
        window: float = 0.3,
        tag: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.show = show
        self.schedule = schedule
        self.window = window
        self.tag = tag
        self._pending: dict[tuple[str | None, str], _Pending] = {}

    def add(self, message: str, title: str, severity: Severity = "information") -> None:
        key = (self.tag(), title)
        pending = self._pending.get(key)
        if pending is None:
            pending = self._pending[key] = _Pending(title, severity, key[0])
            self.schedule(self.window, lambda: self._flush(key))
        pending.lines.append(message)

    def _flush(self, key: tuple[str | None, str]) -> None:
        pending = self._pending.pop(key, None)
        if pending is None:
            return
        lines, title = pending.lines, pending.title
        if len(lines) == 1:
            self.show(lines[0], title, pending.severity, pending.tag)
            return
        plural = PLURALS.get(title, lambda n: f"{title} ×{n}")
        shown = lines[:MAX_LINES]
        if len(lines) > MAX_LINES:
            shown.append(f"…and {len(lines) - MAX_LINES} more")
        self.show("\n".join(shown), plural(len(lines)), pending.severity, pending.tag)

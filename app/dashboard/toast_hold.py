"""Toasts never cover a dialog, and never pile up over the view: a toast raised while a modal
screen is open (help, a review, a confirmation, the palette) waits until the dialog closes,
and only a few are shown at once (one on a short terminal): the next waits for one to time out.
Toasts already shown are hidden while a dialog is open (``styles/deck.tcss``) and come back
with the view if they have not timed out.

What the team does (tasks completed, requests, the run's end: :meth:`notify_background`) waits
its turn; the app's answer to a key press (``notify``) never waits behind it: it goes first and,
with no room, the background toasts shown give way (a person pressing ``s`` learns at once why
nothing happened, not after the five toasts a finished run left).

Where a toast appears on a view (beside the lead's transcript, never over the task board) is
``styles/deck.tcss``'s.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

from textual.app import App
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen

#: Toasts shown at once: on a terminal of fewer rows than ``TALL``, one.
AT_ONCE = 2
TALL = 32


@dataclass(frozen=True)
class _Held:
    message: str
    title: str
    severity: SeverityLevel
    timeout: float | None
    markup: bool
    answer: bool = True  # the answer to a key press (else what the team did)


class HoldsToasts(App[None]):
    """An App whose toasts wait (see the module docstring)."""

    _waiting: deque[_Held] | None = None
    _shown_until: list[float] | None = None  # when each toast shown times out (monotonic)
    _answer_until = 0.0  # when the last key answer shown times out

    def toast_still_news(self, title: str) -> bool:
        """Whether a toast of the team's that waited is still worth showing (the app says)."""
        return True

    def _answers_shown(self, now: float) -> bool:
        """A key's answer is still on screen (never cleared for another one)."""
        return self._answer_until > now

    @property
    def waiting_toasts(self) -> list[_Held]:
        """The toasts not shown yet (each has ``message`` and ``title``), oldest first."""
        return list(self._waiting or ())

    @property
    def modal_open(self) -> bool:
        return any(isinstance(screen, ModalScreen) for screen in self.screen_stack)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self._hold(_Held(message, title, severity, timeout, markup))

    def notify_background(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information"
    ) -> None:
        """A toast of something the team did: it waits its turn behind the others."""
        self._hold(_Held(message, title, severity, None, True, answer=False))

    def _hold(self, toast: _Held) -> None:
        if threading.current_thread() is not threading.main_thread() and self.is_running:
            self.call_from_thread(self._hold, toast)
            return
        if not self.is_running:
            super().notify(
                toast.message,
                title=toast.title,
                severity=toast.severity,
                timeout=toast.timeout,
                markup=toast.markup,
            )
            return
        if self._waiting is None:
            self._waiting = deque()
        waiting = self._waiting
        if toast.answer:  # after the answers already waiting, before the team's toasts
            waiting.insert(sum(1 for t in waiting if t.answer), toast)
        else:
            waiting.append(toast)
        self.release_toasts()

    def release_toasts(self) -> None:
        """Show the toasts waiting, as far as there is room; called again when a dialog closes
        (the views' ``ScreenResume``) and when a toast times out."""
        waiting = self._waiting
        if not waiting or self.modal_open:
            return
        now = time.monotonic()
        shown = [t for t in self._shown_until or [] if t > now]
        room = AT_ONCE if self.size.height >= TALL else 1
        if waiting[0].answer and len(shown) >= room and not self._answers_shown(now):
            self.clear_notifications()  # the team's toasts give way to a key's answer
            shown = []
        while waiting and len(shown) < room:
            toast = waiting.popleft()
            if not toast.answer and not self.toast_still_news(toast.title):
                continue  # e.g. a request's toast, its request answered while it waited
            timeout = self.NOTIFICATION_TIMEOUT if toast.timeout is None else toast.timeout
            shown.append(now + timeout)
            if toast.answer:
                self._answer_until = max(self._answer_until, now + timeout)
            super().notify(
                toast.message,
                title=toast.title,
                severity=toast.severity,
                timeout=timeout,
                markup=toast.markup,
            )
        self._shown_until = shown
        if waiting:
            self.set_timer(max(0.05, min(shown) - now + 0.05), self.release_toasts)

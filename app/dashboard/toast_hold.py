"""Toasts never cover a dialog, and never pile up over the view: a toast raised while a modal
screen is open (help, a review, a confirmation, the palette) waits until the dialog closes,
and only a few are shown at once (one on a short terminal): the next waits for one to time out.
Toasts already shown are hidden while a dialog is open (``styles/deck.tcss``) and come back
with the view if they have not timed out.

What the team does (tasks completed, requests, the run's end: :meth:`notify_background`) waits
its turn; the app's answer to a key press (``notify``) never waits behind it: it goes first and,
with no room, the background toasts shown give way (a person pressing ``s`` learns at once why
nothing happened, not after the five toasts a finished run left).

A toast of the team's is news only while it is still true (:meth:`HoldsToasts.toast_still_news`,
the app's rule): a request's toast goes once no such request waits, any toast of the team's once
another team is shown -- dropped if it still waits, taken off the screen if shown
(:meth:`HoldsToasts.drop_stale_toasts`, called when the requests or the team change).

Where a toast appears on a view (beside the lead's transcript, never over the task board) is
``styles/deck.tcss``'s.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

from textual.app import App
from textual.notifications import Notification, Notify, SeverityLevel
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
    team: str | None = None  # the team shown when the team's toast was raised


class HoldsToasts(App[None]):
    """An App whose toasts wait (see the module docstring)."""

    _waiting: deque[_Held] | None = None
    _shown_until: list[float] | None = None  # when each toast shown times out (monotonic)
    _answer_until = 0.0  # when the last key answer shown times out
    _news: list[tuple[Notification, _Held]] | None = None  # the team's toasts shown

    def toast_still_news(self, title: str, team: str | None) -> bool:
        """Whether a toast of the team's (raised while ``team`` was shown) is still true."""
        return True

    def drop_stale_toasts(self) -> None:
        """Take off the screen the team's toasts that are no longer true (their request was
        answered, another team is shown)."""
        news = self._news or []
        keep = [(n, held) for n, held in news if self.toast_still_news(held.title, held.team)]
        if len(keep) == len(news):
            return
        self._news = keep
        kept = {id(n) for n, _ in keep}
        for notification, _ in news:
            if id(notification) not in kept:
                self._unnotify(notification, refresh=False)
        self._refresh_notifications()

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
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        team: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """A toast of something the team did (``team``, shown then): it waits its turn behind
        the others, and is dropped if it is no longer true by then."""
        self._hold(_Held(message, title, severity, timeout, True, answer=False, team=team))

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
            if not toast.answer and not self.toast_still_news(toast.title, toast.team):
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
                continue
            notification = Notification(
                toast.message, toast.title, toast.severity, timeout, markup=toast.markup
            )
            news = self._news = [(n, h) for n, h in self._news or [] if n.time_left > 0]
            news.append((notification, toast))
            self.post_message(Notify(notification))
        self._shown_until = shown
        if waiting:
            self.set_timer(max(0.05, min(shown) - now + 0.05), self.release_toasts)

"""Toasts never cover a dialog, never pile up over the view, and never tell old news.

A toast raised while a modal screen is open (help, a review, a confirmation, the palette) waits
until the dialog closes, and only a few are shown at once (one on a short terminal). Toasts
already shown are hidden while a dialog is open (``styles/deck.tcss``) and come back with the
view if they have not timed out.

What the team does (tasks completed, requests, the run's end: :meth:`notify_background`) is
news when it happens, or not at all. Toasts used to wait their turn behind each other, each for
its whole timeout: at 80x24 (one at a time) "Task completed #1 … by researcher" showed five
seconds after the key's answer that took its place, and the run's end five seconds after that.
Now:

- a toast shown long enough to be read (``reading_time``: ``GIVE_WAY`` seconds for a few
  words, up to ``READ_MAX`` for a long one) makes room for a newer one;
- toasts of the team's that wait together become one summary toast ("3 updates"), requests
  apart from the rest (a request's toast goes once it is answered); the team's toasts raised
  within ``BURST`` seconds of each other wait for each other (Claude Code's hooks say "worker
  finished its turn" and "worker is idle" at once: one toast, not two);
- a toast of the team's that would show more than ``LATE`` seconds after it was raised (it
  waited behind a dialog) is dropped: the feed, the board and the needs-you line have it. An
  error is not dropped (it is shown late rather than never).

The app's answer to a key press (``notify``) goes before the team's toasts and makes one of
them give way at once (a person pressing ``s`` learns at once why nothing happened).

A toast of the team's is news only while it is still true (:meth:`HoldsToasts.toast_still_news`,
the app's rule): a request's toast goes once its request was answered, any toast of the team's
once another team is shown -- dropped if it still waits, taken off the screen if shown
(:meth:`HoldsToasts.drop_stale_toasts`, called when the requests or the team change).

Times are ``toast_clock``'s (tests pass a fake one). Where a toast appears on a view (beside
the lead's transcript, never over the task board) is ``styles/deck.tcss``'s.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from textual.app import App
from textual.css.query import NoMatches
from textual.markup import escape
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets._toast import ToastRack

from app.dashboard.toasts import request_kind

#: Toasts shown at once: on a terminal of fewer rows than ``TALL``, one.
AT_ONCE = 2
TALL = 32
#: Seconds a toast of a few words is shown before it makes room for a newer one.
GIVE_WAY = 1.5
#: ... and one of many words ("the lead approves worker's plan by itself: …"), at most.
READ_MAX = 4.0
#: Seconds after which a team's toast not shown yet is old news: dropped.
LATE = 5.0
#: Seconds the team's first toast waits for the others of its burst (real time).
BURST = 0.2
#: Lines of a summary toast; the rest are counted ("…and 2 more").
SUMMARY_LINES = 4
_LOUDNESS = {"information": 0, "warning": 1, "error": 2}


@dataclass(frozen=True)
class HeldToast:
    """A toast not shown yet: its words, and what makes it news."""

    message: str
    title: str
    severity: SeverityLevel
    timeout: float | None
    markup: bool
    answer: bool = True  # the answer to a key press (else what the team did)
    team: str | None = None  # the team shown when the team's toast was raised
    raised: float = 0.0  # ``toast_clock()`` when it was raised
    #: The requests it announces: it is news while they all wait (empty: see the title).
    requests: frozenset[str] = field(default_factory=frozenset)


@dataclass
class _Shown:
    notification: Notification
    toast: HeldToast
    since: float  # toast_clock
    until: float  # toast_clock


def reading_time(toast: HeldToast) -> float:
    """Seconds ``toast`` keeps its place: ``GIVE_WAY`` for eight words, 0.2 s a word more."""
    words = len(toast.title.split()) + len(toast.message.split())
    return min(READ_MAX, GIVE_WAY + 0.2 * max(0, words - 8))


def summary(toasts: Sequence[HeldToast]) -> HeldToast:
    """One toast telling ``toasts`` (the team's, waiting together), a line each."""
    lines = [  # a request's words name it ("writer asks you to approve a plan")
        (f"{escape(t.title)}: " if t.title and not t.requests else "")
        + t.message.replace("\n", "; ")
        for t in toasts[:SUMMARY_LINES]
    ]
    if len(toasts) > SUMMARY_LINES:
        lines.append(f"…and {len(toasts) - SUMMARY_LINES} more")
    timeouts = [t.timeout for t in toasts if t.timeout is not None]
    return HeldToast(
        "\n".join(lines),
        f"{len(toasts)} requests" if all(t.requests for t in toasts) else f"{len(toasts)} updates",
        max((t.severity for t in toasts), key=lambda s: _LOUDNESS.get(s, 0)),
        max(timeouts) if timeouts else None,
        True,
        answer=False,
        team=toasts[0].team,
        raised=min(t.raised for t in toasts),
        requests=frozenset().union(*(t.requests for t in toasts)),
    )


class HoldsToasts(App[None]):
    """An App whose toasts wait, make room and merge (see the module docstring)."""

    toast_clock: Callable[[], float] = staticmethod(time.monotonic)
    _waiting: deque[HeldToast] | None = None
    _shown: list[_Shown] | None = None  # the toasts shown by ``release_toasts``, oldest first
    _release: Timer | None = None  # the next ``release_toasts`` while toasts wait
    _burst: Timer | None = None  # the end of the team's burst of toasts

    def toast_still_news(self, toast: HeldToast) -> bool:
        """Whether a toast of the team's is still true (the app's rule)."""
        return True

    def drop_stale_toasts(self) -> None:
        """Take off the screen the team's toasts that are no longer true (their request was
        answered, another team is shown)."""
        shown = self._shown or []
        keep = [s for s in shown if s.toast.answer or self.toast_still_news(s.toast)]
        if len(keep) == len(shown):
            return
        self._shown = keep
        for gone in shown:
            if gone not in keep:
                self._take_off(gone.notification)
        self._refresh_notifications()

    def _take_off(self, notification: Notification) -> None:
        """Forget ``notification`` and take its toast off every view. Textual's rack removes
        the toast of a notification forgotten early but not its holder (only a toast that
        times out removes both): the empty holders piled up in the rack, and after a few
        toasts had given way the next ones were drawn outside it, cut to one row, then not
        at all (by hand, 80x24, ``teamdeck --claude``)."""
        self._unnotify(notification, refresh=False)
        self._shown = [s for s in self._shown or [] if s.notification is not notification]
        toast_id = ToastRack._toast_id(notification)
        for screen in self.screen_stack:
            try:
                screen.get_child_by_type(ToastRack).get_child_by_id(toast_id).remove()
            except NoMatches:
                continue

    @property
    def waiting_toasts(self) -> list[HeldToast]:
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
        self._hold(HeldToast(message, title, severity, timeout, markup, raised=self.toast_clock()))

    def notify_background(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        team: str | None = None,
        timeout: float | None = None,
        requests: frozenset[str] = frozenset(),
    ) -> None:
        """A toast of something the team did (``team``, shown then; ``requests``: the requests
        it announces): shown now, or soon in a summary, or not at all (see the module
        docstring)."""
        raised = self.toast_clock()
        toast = HeldToast(message, title, severity, timeout, True, False, team, raised, requests)
        self._hold(toast)

    def _hold(self, toast: HeldToast) -> None:
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
            if self._burst is None:  # the first of a burst: the others come with it
                self._burst = self.set_timer(BURST, self._burst_ended)
            return
        self.release_toasts()

    def _burst_ended(self) -> None:
        self._burst = None
        self.release_toasts()

    def _still_waiting(self, now: float) -> tuple[list[HeldToast], list[list[HeldToast]]]:
        """The toasts waiting that are still worth showing: the answers, and the team's in
        groups shown as one toast each (the requests, the rest; a request's toast that names
        no request goes alone: it goes when no request of its kind waits)."""
        answers: list[HeldToast] = []
        requests: list[HeldToast] = []
        others: list[HeldToast] = []
        alone: list[list[HeldToast]] = []
        for toast in self._waiting or ():
            if toast.answer:
                answers.append(toast)
            elif not self.toast_still_news(toast):
                continue  # e.g. a request's toast, its request answered while it waited
            elif now - toast.raised > LATE and toast.severity != "error":
                continue  # old news: the feed, the board, the needs-you line have it
            elif toast.requests:
                requests.append(toast)
            elif request_kind(toast.title) is None:
                others.append(toast)
            else:
                alone.append([toast])
        return answers, [requests, others, *alone]

    def release_toasts(self) -> None:
        """Show the toasts waiting, as far as there is room; called again when a dialog closes
        (the views' ``ScreenResume``) and when a shown toast may give way."""
        if not self._waiting or self.modal_open:
            return
        now = self.toast_clock()
        shown = [
            s
            for s in self._shown or []
            if s.until > now and not s.notification.has_expired  # not timed out
        ]
        room = AT_ONCE if self.size.height >= TALL else 1
        answers, groups = self._still_waiting(now)
        while answers or any(groups):
            if len(shown) >= room:
                ready = [s for s in shown if now - s.since >= reading_time(s.toast)]
                if answers:  # the team's toasts give way to a key's answer at once
                    ready += [s for s in shown if not s.toast.answer]
                if not ready:
                    break
                gone = min(ready, key=lambda s: s.since)
                shown.remove(gone)
                self._take_off(gone.notification)
            if answers:
                toast = answers.pop(0)
            else:  # the team's: the oldest group, in one toast
                group = min((g for g in groups if g), key=lambda g: g[0].raised)
                toast = summary(group) if len(group) > 1 else group[0]
                group.clear()
            timeout = self.NOTIFICATION_TIMEOUT if toast.timeout is None else toast.timeout
            notification = Notification(
                toast.message, toast.title, toast.severity, timeout, markup=toast.markup
            )
            shown.append(_Shown(notification, toast, now, now + timeout))
            self.post_message(Notify(notification))
        self._shown = shown
        rest = sorted((t for group in groups for t in group), key=lambda t: t.raised)
        self._waiting = deque(answers + rest)
        if self._waiting:  # once the oldest shown may give way (or times out)
            due = min(min(s.since + reading_time(s.toast), s.until) for s in shown)
            if self._release is not None:
                self._release.stop()
            self._release = self.set_timer(max(0.05, due - now + 0.02), self.release_toasts)

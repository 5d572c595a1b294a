"""What the team asks of the person and tells them: the pending requests and the team's toasts.

Requests come from three places: the runtime's queue (a team this process runs), the team's
files (a viewer), and Claude Code's hooks held by the bridge (``claude_bridge``: a viewer of a
Claude Code team). :class:`TeamNews` keeps ``approvals`` equal to them and announces each new
one in a toast that names the keys answering it (the view's ``request_hint``).

The team's toasts (tasks completed, requests, the run's end, failures) go through
``notify_background`` (``toast_hold``): each is tagged with the team shown when it was raised,
and is news only while it is still true (:meth:`TeamNews.toast_still_news`).

``TeamDeckApp`` (``app.dashboard.app``) derives from :class:`TeamNews`; what is here is the
part of its state that answers "what needs you, and what happened".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from app.dashboard.claude_bridge import BridgeChanged, BridgeEventArrived, BridgeLink
from app.dashboard.event_burst import Notice, request_notice, task_notice
from app.dashboard.screens.deck import DeckScreen
from app.dashboard.state import DeckState
from app.dashboard.store import StoreDelta
from app.dashboard.team_source import TeamSource
from app.dashboard.toast_hold import HeldToast
from app.dashboard.toasts import Severity, ToastBatch, request_kind
from app.display.values import TeamFiles
from app.runtime.api import Approval
from widgets.agent_text import agent_markup


class TeamNews(DeckState):
    """The requests pending and the team's toasts (see the module docstring). The subclass
    sets ``source``, ``bridge``, ``clock`` and ``toasts``."""

    source: TeamSource
    #: a viewer's end of the hook bridge (``claude_bridge``): its hooks' requests join the queue
    bridge: BridgeLink | None
    #: Completed tasks come in bursts: one toast per burst ("3 tasks completed").
    toasts: ToastBatch
    _file_pending: tuple[Approval, ...] = ()  # a viewer: the requests in the files

    clock: Callable[[], float]

    def _dated(self, files: TeamFiles, *, fresh: bool = False) -> TeamFiles:
        """``files`` with ``stale`` as of now (a viewer: only it knows the last activity), and
        what Claude Code's hooks say of the statuses (``fresh``: the store's new word)."""
        if self.bridge is not None:
            files = self.bridge.overlay(files, fresh=fresh)
        return self.source.dated(files, self.clock)

    # ------------------------------------------------------------------ requests

    def store_requests(self, delta: StoreDelta) -> tuple[Approval, ...] | None:
        """The requests pending after ``delta`` (``None``: the files do not hold them: the
        runtime's queue does)."""
        pending = self.source.file_approvals(delta)  # a viewer's requests are in the files
        if pending is None:
            return None
        self._file_pending = pending
        return self._viewer_approvals()

    def _viewer_approvals(self) -> tuple[Approval, ...]:
        held = self.bridge.pending() if self.bridge is not None else ()
        return held + self._file_pending

    def _runtime_approvals(self) -> None:
        """Take the runtime's pending requests (a viewer's come with the files)."""
        approvals = self.source.approvals()
        if approvals is not None:
            self.approvals = approvals

    def _announce(self, known: set[str]) -> None:
        """A notice for each request not in ``known`` (the ids pending before)."""
        new = [a for a in self.approvals if a.request_id not in known]
        hint = self.request_hint
        self._show(n for a in new if (n := request_notice(a.agent, a.kind, hint, a.request_id)))

    def request_hint(self, agent: str, kind: str) -> str:
        """The keys that answer ``agent``'s request of ``kind`` from where the person is now."""
        views = [s for s in self.screen_stack if isinstance(s, DeckScreen)]
        # Over a dialog the toast waits for it to close (``toast_hold``): the view's keys.
        return views[-1].request_hint(agent, kind) if views else ""

    # ------------------------------------------------------------------ hooks -> views

    def on_bridge_changed(self, _: BridgeChanged) -> None:
        known = {a.request_id for a in self.approvals}
        self.approvals = self._viewer_approvals()
        self._announce(known)
        self.files = self._dated(self.files)  # who awaits approval

    def on_bridge_event_arrived(self, message: BridgeEventArrived) -> None:
        if self.bridge is not None:
            self.files = self._dated(self.files)  # the statuses the event implies
            self.bridge.arrived(self, message.event)

    # ------------------------------------------------------------------ toasts

    def store_news(self, delta: StoreDelta) -> None:
        """The toasts of what the store found: tasks completed, files it could not read."""
        for notice in map(task_notice, delta.completed):
            self.toasts.add(agent_markup(notice.message), notice.title)
        self._show(Notice(e, "Unreadable file", "error", 10) for e in delta.new_errors)

    def toast_still_news(self, toast: HeldToast) -> bool:
        """A toast of the team's is dropped once another team is shown; a request's, once its
        request was answered (one of them, for a toast of several; a toast naming no request:
        once no request of its kind is pending)."""
        if toast.team != self.files.team:
            return False
        if toast.requests:
            return toast.requests <= {a.request_id for a in self.approvals}
        kind = request_kind(toast.title)
        return kind is None or any(a.kind == kind for a in self.approvals)

    def _toast_team(self) -> str | None:
        return self.files.team

    def _toast(self, message: str, title: str, severity: Severity, team: str | None) -> None:
        """A burst of the ``ToastBatch``'s: of the team shown when its first toast came."""
        self.notify_background(message, title=title, severity=severity, team=team)

    def _show(self, notices: Iterable[Notice]) -> None:
        """What the team did, as toasts of the team shown: a request's goes once it was
        answered, any once another team is shown (``toast_still_news``). They were shown as a
        key's answers, which nothing takes back: "writer asks you to approve a plan" stayed
        its five seconds after ``a`` approved it."""
        for n in notices:
            self.notify_background(
                agent_markup(n.message),
                title=n.title,
                severity=n.severity,
                team=self.files.team,
                timeout=n.timeout,
                requests=frozenset({n.request_id} if n.request_id else ()),
            )

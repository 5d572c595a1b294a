"""What a burst of runtime events asks of the dashboard, as plain values (no Textual).

- :class:`EventBuffer`: runtime events in arrival order, streamed text merged per agent.
- :func:`digest`: what a flush of runtime events asks of the views and the app's state
  (:class:`Digest`).
- :class:`Notice`: a notification's words; :func:`request_notice`, :func:`timeout_notice` and
  :func:`task_notice` build the ones for requests (new, or timed out) and completed tasks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from app.core import Task
from app.runtime.events import (
    ApprovalChanged,
    HookRan,
    MessageSent,
    RunFinished,
    RuntimeEvent,
    StatusChanged,
    TeamLifecycle,
    TextDelta,
    TranscriptEntry,
    WorktreeReleased,
)

# ============================================================================ runtime events


class EventBuffer:
    """Runtime events in arrival order, streamed text merged per agent.

    ``push`` may be called from any thread; ``drain`` returns what arrived since the last call.
    Consecutive ``TextDelta`` of one agent (with no other event of that agent in between) are
    joined, so a 50 ms flush renders a burst of tokens once.
    """

    def __init__(self) -> None:
        self._events: list[RuntimeEvent] = []
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def push(self, event: RuntimeEvent) -> bool:
        """Queue ``event``; True if it should be flushed promptly (anything but text)."""
        with self._lock:
            if isinstance(event, TextDelta):
                index = self._open.get(event.agent)
                if index is not None:
                    previous = self._events[index]
                    assert isinstance(previous, TextDelta)
                    self._events[index] = TextDelta(event.agent, previous.text + event.text)
                else:
                    self._open[event.agent] = len(self._events)
                    self._events.append(event)
                return False
            agent = getattr(event, "agent", None)
            if agent is None:
                self._open.clear()
            else:
                self._open.pop(agent, None)
            self._events.append(event)
            return True

    def drain(self) -> list[RuntimeEvent]:
        with self._lock:
            events, self._events = self._events, []
            self._open.clear()
        return events

    def __len__(self) -> int:
        return len(self._events)


# ============================================================================ notices


@dataclass(frozen=True)
class Notice:
    """A notification: plain words (the app escapes them before they are shown)."""

    message: str
    title: str = ""
    severity: Literal["information", "warning", "error"] = "information"
    timeout: float | None = None
    request_id: str = ""  # the request it announces (its toast goes once it is answered)


#: The keys that answer ``agent``'s request of a kind from where the person is (the screen knows).
KeyHint = Callable[[str, str], str]


def answer_keys(kind: str) -> str:
    """The answer keys' words for a request of ``kind``: one wording in the needs-you line and
    the toasts (a permission is allowed once or denied, a plan approved or rejected)."""
    if kind == "permission":
        return "a allow once · r deny · v review"
    return "a approve · r reject · v review"


def _default_hint(agent: str, kind: str) -> str:
    return f"select {agent}, then {answer_keys(kind)}"


def request_notice(
    agent: str, kind: str, keys: KeyHint | None = None, request_id: str = ""
) -> Notice | None:
    """A new plan or permission request for the person (shutdowns are not theirs), naming
    the keys that answer it (``keys``)."""
    hint = (keys or _default_hint)(agent, kind)
    if kind == "plan":
        return Notice(f"{agent} asks you to approve a plan: {hint}", "Plan", request_id=request_id)
    if kind == "permission":
        words = f"{agent} asks for a permission: {hint}"
        return Notice(words, "Permission", request_id=request_id)
    return None


def clock_text(seconds: float) -> str:
    """A wait in words: ``5:00`` from a minute on, else ``30s``."""
    if seconds >= 60:
        minutes, rest = divmod(round(seconds), 60)
        return f"{minutes}:{rest:02d}"
    return f"{seconds:g}s"


def timeout_notice(agent: str, limit: float | None = None) -> Notice:
    """A permission request nobody answered in time: it was denied (``limit``: the seconds it
    waited, the run's ``--permission-timeout``, when known)."""
    after = f" after {clock_text(limit)}" if limit else ""
    return Notice(  # not "Permission": that toast goes once no permission request waits
        f"{agent}'s permission request timed out{after}: denied",
        "Permission timed out",
        "warning",
    )


def task_notice(task: Task) -> Notice:
    by = f" by {task.owner}" if task.owner else ""
    return Notice(f"#{task.id} {task.subject}{by}", "Task completed")


@dataclass
class Digest:
    """What one flush of runtime events asks of the app (see :func:`digest`)."""

    stream: list[TextDelta | TranscriptEntry] = field(default_factory=list)  # in order
    agents_changed: bool = False  # re-read the runtime's snapshots
    approvals_changed: bool = False  # re-read the runtime's approvals
    new_team: str | None = None  # the runtime created this team: show it
    run_ended: bool = False  # a goal's run ended (the lead's counts start again after it)
    notices: list[Notice] = field(default_factory=list)
    hooks: list[HookRan] = field(default_factory=list)  # blocked or warned: the feed shows them
    sent: list[MessageSent] = field(default_factory=list)  # for the feed (see ``Store.apply``)


def digest(
    events: Iterable[RuntimeEvent], keys: KeyHint | None = None, limit: float | None = None
) -> Digest:
    """Sort runtime events by what they change: streamed text and transcript entries go to
    the views in order; any other event about an agent (status, usage, mode, activity, and
    event types added later) means its panel must be redrawn. ``limit``: the run's permission
    timeout (named in the notice of a request that timed out)."""
    out = Digest()
    for event in events:
        match event:
            case TextDelta() | TranscriptEntry():
                out.stream.append(event)
            case ApprovalChanged(resolved=resolved, kind=kind, agent=agent, outcome=outcome):
                out.approvals_changed = True
                notice = None
                if not resolved:
                    notice = request_notice(agent, kind, keys, event.request_id)
                if resolved and kind == "permission" and outcome == "timed out":
                    notice = timeout_notice(agent, limit)
                if notice is not None:
                    out.notices.append(notice)
            case MessageSent():
                out.sent.append(event)
            case TeamLifecycle(team=team, event=what):
                if what == "created":
                    out.new_team = team
            case HookRan(outcome=outcome):
                if outcome != "ok":
                    out.hooks.append(event)
                if outcome == "warning":
                    out.notices.append(Notice(event.message, f"{event.hook_event} hook", "warning"))
            case WorktreeReleased(removed=removed, agent=agent, summary=summary):
                if not removed:
                    out.notices.append(Notice(f"{agent}: {summary}", "Worktree kept"))
            case RunFinished(ok=ok, reason=reason):
                out.run_ended = True
                out.notices.append(Notice(reason, "Run finished", "information" if ok else "error"))
            case _:
                out.agents_changed = True
                if isinstance(event, StatusChanged) and event.status == "failed":
                    why = f": {event.detail}" if event.detail else ""
                    out.notices.append(Notice(f"{event.agent} failed{why}", "", "error", 10))
    return out

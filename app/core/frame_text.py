"""The one frame vocabulary: inbox messages and protocol frames as words (no Textual).

``describe(sender, recipient, text, summary)`` turns one inbox entry into a :class:`FeedLine`:
who acted, towards whom, and what happened, e.g. ``engineer -> team-lead: plan approval
requested``, ``researcher is idle: available`` or ``researcher approved shutdown``. The feed, the
CLI (``ids=True`` adds the request id a person types into ``teamdeck approve``) and headless output
all use it, so a frame reads the same everywhere. ``describe_hook`` does the same for a team
hook's outcome (``hook blocked: TaskCompleted #3 — tests fail``).

A line with a target (``actor -> target``) says who wrote the message (the envelope's ``from``)
into whose inbox (its owner): the frame's own names do not override them, so a request can
never read as sent by its recipient. The one exception is a request its recipient wrote into
its own inbox on someone's behalf (a lead relaying a teammate's permission request): then the
requester the frame names is the actor. A line without a target (``researcher approved
shutdown``, ``tester is idle``) names who did it, as the frame says.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.paths import parse_agent_id
from app.core.protocol import (
    Frame,
    IdleNotification,
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ShutdownApproved,
    ShutdownRejected,
    ShutdownRequest,
    TaskCompleted,
    parse_frame,
)

BODY_LIMIT = 240
"""Longest body kept for a line (the feed shows one line per message)."""


@dataclass(frozen=True, slots=True)
class FeedLine:
    """One message in words: ``actor -> target: text`` or ``actor text``."""

    actor: str
    target: str | None
    text: str
    kind: str = "message"  # "message" or the frame's type

    def plain(self) -> str:
        if self.target:
            return f"{self.actor} -> {self.target}: {self.text}"
        return f"{self.actor} {self.text}"


def one_line(text: str | None, limit: int = BODY_LIMIT) -> str:
    """Whitespace collapsed to single spaces, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def agent_name(value: str) -> str:
    """``researcher@my-team`` -> ``researcher``."""
    parsed = parse_agent_id(value)
    return parsed[0] if parsed else value


def frame_of(text: str, *, plain: bool | None = False) -> Frame | None:
    """The frame ``text`` carries, ``None`` for text: a message an agent wrote (``plain``:
    the entry's ``plainText``) is text whatever it looks like."""
    return None if plain else parse_frame(text)


def describe(
    sender: str,
    recipient: str,
    text: str,
    summary: str | None = None,
    *,
    ids: bool = False,
    frame: Frame | None = None,
    plain: bool | None = False,
) -> FeedLine:
    """The words for one inbox entry (``recipient`` is the inbox's owner).

    ``frame``: the already parsed frame of ``text`` (a caller that built it passes it, so it is
    not parsed again). ``ids``: append ``(id ...)`` to request and response lines. ``plain``:
    an agent's message (``plainText``): its words are its text, never a frame's."""
    frame = None if plain else frame if frame is not None else parse_frame(text)
    if frame is None:
        body = one_line(text)
        if summary:
            body = f"{one_line(summary, 80)} — {body}" if body else one_line(summary, 80)
        return FeedLine(sender, recipient, body)
    line = _frame_line(frame, sender, recipient)
    request_id = getattr(frame, "request_id", None)
    if ids and request_id:
        return FeedLine(line.actor, line.target, f"{line.text} (id {request_id})", line.kind)
    return line


def _requester(sender: str, recipient: str, named: str | None) -> str:
    """The actor of a request line (see the module docstring)."""
    return named if named and sender == recipient else sender


def _frame_line(frame: Frame, sender: str, recipient: str) -> FeedLine:
    kind = frame.type
    match frame:
        case ShutdownRequest():
            reason = f" ({one_line(frame.reason, 120)})" if frame.reason else ""
            actor = _requester(sender, recipient, frame.sender)
            return FeedLine(actor, recipient, f"shutdown requested{reason}", kind)
        case ShutdownApproved():
            return FeedLine(frame.sender or sender, None, "approved shutdown", kind)
        case ShutdownRejected():
            reason = f": {one_line(frame.reason, 160)}" if frame.reason else ""
            return FeedLine(frame.sender or sender, None, f"rejected shutdown{reason}", kind)
        case PlanApprovalRequest():
            actor = _requester(sender, recipient, frame.sender)
            return FeedLine(actor, recipient, "plan approval requested", kind)
        case PlanApprovalResponse():
            if frame.approved:
                return FeedLine(sender, recipient, "plan approved", kind)
            feedback = f": {one_line(frame.feedback, 160)}" if frame.feedback else ""
            return FeedLine(sender, recipient, f"plan rejected{feedback}", kind)
        case IdleNotification():
            return FeedLine(frame.sender or sender, None, _idle_text(frame), kind)
        case TaskCompleted():
            subject = f" {one_line(frame.task_subject, 120)}" if frame.task_subject else ""
            return FeedLine(
                frame.sender or sender, None, f"completed #{frame.task_id}{subject}", kind
            )
        case PermissionRequest():
            what = frame.tool_name
            if frame.description:
                what += f" ({one_line(frame.description, 120)})"
            named = agent_name(frame.agent_id) if frame.agent_id else None
            actor = _requester(sender, recipient, named)
            return FeedLine(actor, recipient, f"permission requested: {what}", kind)
        case PermissionResponse():
            if frame.allowed:
                return FeedLine(sender, recipient, "permission allowed", kind)
            reason = f": {one_line(frame.reason, 160)}" if frame.reason else ""
            return FeedLine(sender, recipient, f"permission denied{reason}", kind)
    return FeedLine(sender, recipient, kind, kind)  # pragma: no cover - exhaustive


def _idle_text(frame: IdleNotification) -> str:
    detail = one_line(frame.summary or frame.idle_reason or "", 160)
    text = f"is idle: {detail}" if detail else "is idle"
    if frame.completed_task_id:
        status = f" ({frame.completed_status})" if frame.completed_status else ""
        text += f" · task #{frame.completed_task_id}{status}"
    if frame.failure_reason:
        text += f" · failed: {one_line(frame.failure_reason, 120)}"
    return text


def describe_hook(
    agent: str, hook_event: str, outcome: str, message: str = "", task_id: str | None = None
) -> FeedLine:
    """The words for a team hook's outcome (not a message: no inbox holds it), e.g.
    ``researcher hook blocked: TaskCompleted #3 — tests fail`` or ``team-lead hook warning:
    TaskCreated — hook 'lint' failed (exit 1): ...``."""
    what = f"{hook_event} #{task_id}" if task_id else hook_event
    verb = {"ok": "passed", "blocked": "blocked", "warning": "warning"}.get(outcome, outcome)
    text = f"hook {verb}: {what}"
    if message:
        text += f" — {one_line(message, 200)}"
    return FeedLine(agent, None, text, "hook")

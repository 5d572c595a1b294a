"""Readable one-line renderings of inbox messages and protocol frames (no Textual).

``describe(sender, recipient, text, summary)`` turns one inbox entry into a :class:`FeedLine`:
who acted, towards whom, and what happened, e.g. ``engineer -> team-lead: plan approval
requested``, ``researcher is idle: available`` or ``researcher approved shutdown``. The feed
widget colours the names; everything else (tests, headless output) can use ``plain()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.core.paths import parse_agent_id
from app.core.protocol import (
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
"""Longest body kept for a feed line (the feed shows one line per message)."""

#: Claude Code's teammate colour names -> Rich colour names.
RICH_COLORS: dict[str, str] = {
    "blue": "dodger_blue2",
    "green": "green3",
    "yellow": "yellow3",
    "magenta": "magenta",
    "cyan": "dark_cyan",
    "red": "red3",
    "orange": "dark_orange",
    "purple": "medium_purple",
    "pink": "hot_pink",
}


@dataclass(frozen=True, slots=True)
class FeedLine:
    """One message as the feed shows it: ``actor -> target: text`` or ``actor text``."""

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


def describe(sender: str, recipient: str, text: str, summary: str | None = None) -> FeedLine:
    """The readable line for one inbox entry (``recipient`` is the inbox's owner)."""
    frame = parse_frame(text)
    if frame is None:
        body = one_line(text)
        if summary:
            body = f"{one_line(summary, 80)} — {body}" if body else one_line(summary, 80)
        return FeedLine(sender, recipient, body)
    kind = frame.type
    match frame:
        case ShutdownRequest():
            reason = f" ({one_line(frame.reason, 120)})" if frame.reason else ""
            return FeedLine(frame.sender or sender, recipient, f"shutdown requested{reason}", kind)
        case ShutdownApproved():
            return FeedLine(frame.sender or sender, None, "approved shutdown", kind)
        case ShutdownRejected():
            reason = f": {one_line(frame.reason, 160)}" if frame.reason else ""
            return FeedLine(frame.sender or sender, None, f"rejected shutdown{reason}", kind)
        case PlanApprovalRequest():
            return FeedLine(frame.sender or sender, recipient, "plan approval requested", kind)
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
            actor = agent_name(frame.agent_id) if frame.agent_id else sender
            return FeedLine(actor, recipient, f"permission requested: {what}", kind)
        case PermissionResponse():
            if frame.allowed:
                return FeedLine(sender, recipient, "permission allowed", kind)
            reason = f": {one_line(frame.reason, 160)}" if frame.reason else ""
            return FeedLine(sender, recipient, f"permission denied{reason}", kind)
    return FeedLine(sender, recipient, one_line(text), kind)  # pragma: no cover - exhaustive


def _idle_text(frame: IdleNotification) -> str:
    detail = one_line(frame.summary or frame.idle_reason or "", 160)
    text = f"is idle: {detail}" if detail else "is idle"
    if frame.completed_task_id:
        status = f" ({frame.completed_status})" if frame.completed_status else ""
        text += f" · task #{frame.completed_task_id}{status}"
    if frame.failure_reason:
        text += f" · failed: {one_line(frame.failure_reason, 120)}"
    return text


def rich_color(name: str | None, default: str = "default") -> str:
    """A Rich colour for a teammate colour name (unknown names pass through if Rich knows them)."""
    if not name:
        return default
    return RICH_COLORS.get(name.lower(), name.lower())


def short_time(timestamp: str) -> str:
    """``2026-01-02T03:04:05.678Z`` -> ``03:04:05`` in local time; the raw text if unparseable."""
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return timestamp[:8]
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%H:%M:%S")


def format_count(n: int) -> str:
    """``950`` -> ``950``, ``12345`` -> ``12.3k``, ``2500000`` -> ``2.5M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def format_elapsed(seconds: float) -> str:
    """``75`` -> ``1:15``, ``3725`` -> ``1:02:05``."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"

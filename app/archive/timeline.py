"""One readable line per archived event (``teamdeck history show``, the replay feed, search).

Messages use the one frame vocabulary (``app.core.frame_text.describe``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.archive.query import Event, RunSummary
from app.core.frame_text import describe, one_line
from app.runtime.model.pricing import cost_label, format_usd


def event_line(event: Event) -> str:
    """``[agent] what happened`` for one event (no time)."""
    agent = event.agent or ""
    data = event.data or {}
    match event.kind:
        case "status":
            detail = f" ({one_line(event.text)})" if event.text else ""
            return f"[{agent}] {event.frame}{detail}"
        case "message":
            summary = data.get("summary")
            # an answer the person gave is sent as team-lead and credited to them
            sender = data.get("answered_by") or agent
            # recorded as a plain message: text, whatever it looks like (``plainText``)
            plain = event.frame == "message"
            return describe(sender, event.target or "", event.text, summary, plain=plain).plain()
        case "task":
            old = data.get("old")
            change = f"{old} -> {event.frame}" if old else f"created ({event.frame})"
            owner = f" owner {data.get('owner')}" if data.get("owner") else ""
            return f"task #{event.target} {one_line(event.text, 80)}: {change}{owner}"
        case "approval":
            if data.get("resolved"):
                return f"[{agent}] {event.frame} request {event.target}: {event.text}"
            return f"[{agent}] {event.frame} approval asked: {one_line(event.text, 120)}"
        case "transcript":
            cut = f" [{event.size} chars]" if event.size and event.size > len(event.text) else ""
            kind = event.frame
            if kind == "tool_call":
                args = one_line(str(data.get("input", "")), 100)
                return f"[{agent}] calls {event.target}({args})"
            if kind == "tool_result":
                failed = " (error)" if data.get("is_error") else ""
                return f"[{agent}] {event.target} result{failed}: {one_line(event.text, 120)}{cut}"
            return f"[{agent}] {kind}: {one_line(event.text, 160)}{cut}"
        case "usage":
            tokens = f"in {data.get('input', 0)} out {data.get('output', 0)}"
            cache = f" cache r {data.get('cache_read', 0)} w {data.get('cache_write', 0)}"
            cost = format_usd(data.get("cost_usd"))
            return f"[{agent}] model call {event.frame}: {tokens}{cache} {cost}"
        case "mode":
            return f"[{agent}] mode {event.frame}"
        case _:
            return one_line(event.text or f"{event.kind} {event.frame or ''}", 200)


def when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def run_length(run: RunSummary, last_at: float | None = None) -> float | None:
    """How long ``run`` took: its start to its end; a run not ended (being recorded, or cut
    off), its start to ``last_at`` (its last event so far), else unknown. The one number
    ``teamdeck history`` lists and the replay plays to."""
    end = run.ended_at if run.ended_at is not None else last_at
    return None if end is None else max(0.0, end - run.started_at)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def run_cost(run: RunSummary) -> str:
    return cost_label(run.cost_usd, offline=run.offline)


def search_text(event: Event) -> str:
    """What feed search matches against: the line, the sender, the frame type (lower case)."""
    return f"{event_line(event)}\n{event.agent or ''}\n{event.frame or ''}\n{event.text}".lower()

"""Plain-text rendering for the ``teamdeck`` CLI: tables, team/task details, inbox lines, frames.

Pure functions from core models to strings; no I/O. Text that comes from files (agents and
other programs write it) is passed through :func:`clean` so it cannot emit terminal escapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from app.core.models import InboxMessage, Task, TeamConfig
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

NONE = "-"
CELL_WIDTH = 60

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(value: object) -> str:
    """``value`` as text with control characters (ESC included) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def one_line(value: object, width: int = CELL_WIDTH) -> str:
    """A table cell: first line only, cleaned, cut to ``width`` with an ellipsis."""
    text = clean(value).strip()
    first, _, rest = text.partition("\n")
    if rest:
        first += " …"
    return first if len(first) <= width else first[: width - 1] + "…"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Left-aligned columns separated by two spaces (no trailing blanks)."""
    cells = [[str(h) for h in headers], *([one_line(c) for c in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines)


def timestamp_ms(value: int) -> str:
    if not value:
        return NONE
    moment = datetime.fromtimestamp(value / 1000, UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


# ----------------------------------------------------------------------------- teams


def team_table(teams: Sequence[TeamConfig]) -> str:
    rows = [(t.name, len(t.members), t.description or "") for t in teams]
    return table(("NAME", "MEMBERS", "DESCRIPTION"), rows)


def team_detail(config: TeamConfig) -> str:
    lines = [f"team {clean(config.name)}"]
    if config.description:
        lines.append(f"  description: {clean(config.description)}")
    lines.append(f"  created:     {timestamp_ms(config.created_at)}")
    lines.append(f"  lead:        {clean(config.lead_agent_id) or NONE}")
    lines.append(f"  members ({len(config.members)}):")
    rows = [
        (
            m.name,
            m.agent_type or NONE,
            m.color or NONE,
            m.model or NONE,
            m.mode or NONE,
        )
        for m in config.members
    ]
    body = table(("NAME", "TYPE", "COLOR", "MODEL", "MODE"), rows)
    lines.extend("    " + line for line in body.splitlines())
    return "\n".join(lines)


# ----------------------------------------------------------------------------- tasks


def task_table(tasks: Sequence[Task]) -> str:
    """Tasks as rows; "blocked by" lists only blockers that are still open."""
    resolved = {t.id for t in tasks if t.is_resolved}
    rows = []
    for t in tasks:
        open_blockers = [b for b in t.blocked_by if b not in resolved]
        rows.append(
            (
                f"#{t.id}",
                t.status,
                t.owner or NONE,
                t.subject,
                ", ".join(f"#{b}" for b in open_blockers) or NONE,
            )
        )
    return table(("ID", "STATUS", "OWNER", "SUBJECT", "BLOCKED BY"), rows)


def task_detail(task: Task) -> str:
    def ids(values: list[str]) -> str:
        return ", ".join(f"#{clean(v)}" for v in values) or NONE

    lines = [
        f"#{clean(task.id)} {clean(task.subject)}",
        f"  status:     {clean(task.status)}",
        f"  owner:      {clean(task.owner) if task.owner else NONE}",
        f"  blocks:     {ids(task.blocks)}",
        f"  blocked by: {ids(task.blocked_by)}",
    ]
    if task.active_form:
        lines.append(f"  active:     {clean(task.active_form)}")
    if task.metadata:
        meta = ", ".join(f"{clean(k)}={clean(v)}" for k, v in task.metadata.items())
        lines.append(f"  metadata:   {meta}")
    if task.description:
        lines.append("  description:")
        lines.extend("    " + line for line in clean(task.description).splitlines())
    return "\n".join(lines)


# ----------------------------------------------------------------------------- messages


def _rid(request_id: str) -> str:
    return f"(id {clean(request_id)})"


def render_frame(frame: Any) -> str:
    """One readable line for a protocol frame (``parse_frame``'s result)."""
    if isinstance(frame, ShutdownRequest):
        text = f"{clean(frame.sender)}: shutdown request {_rid(frame.request_id)}"
        return text + (f": {clean(frame.reason)}" if frame.reason else "")
    if isinstance(frame, ShutdownApproved):
        return f"{clean(frame.sender)}: shutdown approved {_rid(frame.request_id)}"
    if isinstance(frame, ShutdownRejected):
        text = f"{clean(frame.sender)}: shutdown rejected {_rid(frame.request_id)}"
        return text + (f": {clean(frame.reason)}" if frame.reason else "")
    if isinstance(frame, PlanApprovalRequest):
        text = f"{clean(frame.sender)}: plan approval requested {_rid(frame.request_id)}"
        plan = frame.plan_content.strip()
        return text + (f": {one_line(plan)}" if plan else "")
    if isinstance(frame, PlanApprovalResponse):
        verdict = "plan approved" if frame.approved else "plan rejected"
        text = f"{verdict} {_rid(frame.request_id)}"
        if frame.approved and frame.permission_mode:
            text += f", mode {clean(frame.permission_mode)}"
        return text + (f": {clean(frame.feedback)}" if frame.feedback else "")
    if isinstance(frame, IdleNotification):
        text = f"{clean(frame.sender)} is idle"
        if frame.summary:
            text += f": {clean(frame.summary)}"
        elif frame.idle_reason:
            text += f" ({clean(frame.idle_reason)})"
        if frame.completed_task_id:
            status = clean(frame.completed_status or "completed")
            text += f" [task #{clean(frame.completed_task_id)} {status}]"
        if frame.failure_reason:
            text += f" [failed: {clean(frame.failure_reason)}]"
        return text
    if isinstance(frame, TaskCompleted):
        subject = f": {clean(frame.task_subject)}" if frame.task_subject else ""
        return f"{clean(frame.sender)} completed task #{clean(frame.task_id)}{subject}"
    if isinstance(frame, PermissionRequest):
        text = (
            f"{clean(frame.agent_id)}: permission requested for {clean(frame.tool_name)} "
            f"{_rid(frame.request_id)}"
        )
        return text + (f": {clean(frame.description)}" if frame.description else "")
    if isinstance(frame, PermissionResponse):
        verdict = "permission granted" if frame.allowed else "permission denied"
        text = f"{verdict} {_rid(frame.request_id)}"
        return text + (f": {clean(frame.reason)}" if frame.reason and not frame.allowed else "")
    return clean(getattr(frame, "type", "frame"))


def message_line(index: int, message: InboxMessage) -> str:
    """``[index] (unread) from -> summary: text``; frames rendered readably. Continuation lines
    of a multi-line text are indented under the first."""
    head = f"[{index}]" + ("" if message.read else " (unread)") + f" {clean(message.sender)} -> "
    frame = parse_frame(message.text)
    if frame is not None:
        return head + render_frame(frame)
    body = clean(message.text).rstrip()
    if message.summary:
        body = f"{clean(message.summary)}: {body}"
    return head + body.replace("\n", "\n    ")


def message_json(index: int, message: InboxMessage) -> dict[str, Any]:
    """The message as stored, plus its ``index`` and parsed ``frameType`` (``None`` if plain)."""
    frame = parse_frame(message.text)
    return {
        "index": index,
        **message.to_json_dict(),
        "frameType": frame.type if frame is not None else None,
    }

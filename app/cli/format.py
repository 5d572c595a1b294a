"""Plain-text rendering for the ``teamdeck`` CLI: tables, team/task details, inbox lines.

Pure functions from core models to strings; no I/O. Text that comes from files (agents and
other programs write it) is passed through :func:`clean` so it cannot emit terminal escapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.display.agent_text import shown

if TYPE_CHECKING:  # the models load with the command that reads them, not with --help
    from app.core.models import InboxMessage, Task, TeamConfig

NONE = "-"
CELL_WIDTH = 60


def clean(value: object) -> str:
    """``value`` as the dashboard shows it (:func:`app.display.agent_text.shown`, the one
    display path): control characters (ESC included) as ``\\xNN``; bidi controls, zero-width
    characters and lone surrogates (a ``"\\ud800"`` escape in a JSON file) as ``\\uXXXX``."""
    return shown(value)


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


def message_line(index: int, message: InboxMessage, recipient: str = "") -> str:
    """A frame: ``[index] (unread) actor -> target: what happened``, in the words of
    :func:`app.core.frame_text.describe` with its request id (a person types it into
    ``teamdeck approve``). A plain message: ``[index] (unread) from -> summary: text``,
    continuation lines indented under the first."""
    from app.core.frame_text import FeedLine, describe, frame_of
    from app.core.protocol import PermissionRequest
    from app.display.request_text import asked_words

    head = f"[{index}]" + ("" if message.read else " (unread)") + " "
    frame = frame_of(message.text, plain=message.plain_text)
    if frame is not None:
        line = describe(message.sender, recipient, message.text, frame=frame, ids=True)
        if isinstance(frame, PermissionRequest):  # the command, not its description alone
            words = asked_words(frame)
            if words is not None:
                text = f"{words} (id {frame.request_id})"
                line = FeedLine(line.actor, line.target, text, line.kind)
        return head + clean(line.plain())
    body = clean(message.text).rstrip()
    if message.summary:
        body = f"{clean(message.summary)}: {body}"
    return head + f"{clean(message.sender)} -> " + body.replace("\n", "\n    ")


def message_json(index: int, message: InboxMessage) -> dict[str, Any]:
    """The message as stored, plus its ``index`` and parsed ``frameType`` (``None`` if plain)."""
    from app.core.frame_text import frame_of

    frame = frame_of(message.text, plain=message.plain_text)
    return {
        "index": index,
        **message.to_json_dict(),
        "frameType": frame.type if frame is not None else None,
    }

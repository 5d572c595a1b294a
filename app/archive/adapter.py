"""The thin layer between the runtime's objects and the archive.

Everything the recorder knows about runtime events, snapshots and approvals is read here, by
class name and attribute, so a renamed event field or a new event class is a change in this
file only (the runtime's classes are never imported: the archive works for any object with
the same shape, e.g. a test double or a runner in another process).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.display.request_text import request_words, subject

#: The longest request title the archive keeps (its start and its end past that).
TITLE_CELLS = 240

Fields = dict[str, Any]


def _get(obj: Any, *names: str, default: Any = None) -> Any:
    """The first attribute of ``names`` that ``obj`` has (old and new spellings of a field)."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


def runtime_event(event: Any) -> tuple[str, Fields] | None:
    """``(kind, fields)`` for a runtime event worth keeping; ``None`` for the rest (streamed
    text deltas: the whole entry arrives as a transcript entry)."""
    convert = _RUNTIME.get(type(event).__name__)
    return None if convert is None else convert(event)


# One function per event class (called for every event of a busy run: plain ``getattr``
# where a field has one spelling).


def _status(event: Any) -> tuple[str, Fields]:
    return "status", {
        "agent": getattr(event, "agent", None),
        "status": str(getattr(event, "status", "")),
        "detail": str(getattr(event, "detail", "") or ""),
    }


def _transcript(event: Any) -> tuple[str, Fields]:
    return "transcript", {
        "agent": getattr(event, "agent", None),
        "kind": str(getattr(event, "kind", "notice")),
        "text": str(getattr(event, "text", "") or ""),
        "data": dict(getattr(event, "data", None) or {}),
    }


def _usage(event: Any) -> tuple[str, Fields]:
    return "usage", {
        "agent": getattr(event, "agent", None),
        "input": int(getattr(event, "input_tokens", 0) or 0),
        "output": int(getattr(event, "output_tokens", 0) or 0),
        "cache_read": int(getattr(event, "cache_read_tokens", 0) or 0),
        "cache_write": int(
            _get(event, "cache_creation_tokens", "cache_write_tokens", default=0) or 0
        ),
        "calls": int(getattr(event, "model_calls", 0) or 0),
    }


def _message(event: Any) -> tuple[str, Fields]:
    return "message", {
        "team": getattr(event, "team", None),
        "sender": getattr(event, "sender", None),
        "recipient": getattr(event, "recipient", None),
        "text": str(getattr(event, "text", "") or ""),
        "summary": getattr(event, "summary", None),
        "frame": _get(event, "frame_type", "frame"),
        "timestamp": str(getattr(event, "timestamp", "") or ""),
        "answered_by": getattr(event, "answered_by", None),
    }


def _approval(event: Any) -> tuple[str, Fields]:
    return "approval", {
        "request_id": getattr(event, "request_id", None),
        "kind": str(getattr(event, "kind", "")),
        "agent": getattr(event, "agent", None),
        "resolved": bool(getattr(event, "resolved", False)),
        "outcome": str(getattr(event, "outcome", "") or ""),
        "by": str(getattr(event, "by", "") or ""),
    }


def _team(event: Any) -> tuple[str, Fields]:
    return "team", {
        "team": getattr(event, "team", None),
        "event": str(getattr(event, "event", None)),
    }


def _finished(event: Any) -> tuple[str, Fields]:
    return "finished", {
        "ok": bool(getattr(event, "ok", False)),
        "reason": str(getattr(event, "reason", "") or ""),
    }


def _mode(event: Any) -> tuple[str, Fields]:
    return "mode", {
        "agent": getattr(event, "agent", None),
        "mode": str(getattr(event, "mode", None)),
    }


_RUNTIME: dict[str, Callable[[Any], tuple[str, Fields]]] = {
    "StatusChanged": _status,
    "TranscriptEntry": _transcript,
    "UsageChanged": _usage,
    "MessageSent": _message,
    "ApprovalChanged": _approval,
    "TeamLifecycle": _team,
    "RunFinished": _finished,
    "ModeChanged": _mode,
}


def change_event(event: Any) -> tuple[str, Fields] | None:
    """``(kind, fields)`` for a core ChangeEvent (files changed, this process's or another's)."""
    name = type(event).__name__
    if name == "InboxChanged":
        return "inbox", {"team": event.team, "agent": event.agent}
    if name == "TaskChanged":
        local = getattr(event, "task", None) is not None or bool(getattr(event, "deleted", False))
        return "task", {"team": event.team, "task_id": event.task_id, "local": local}
    if name == "TeamChanged":
        return "config", {"team": event.team}
    if name == "TeamRemoved":
        return "removed", {"team": event.team}
    return None


def written_task(event: Any) -> tuple[bool, Fields | None]:
    """What a task write of this process put in the file, from its ``TaskChanged``: whether
    the event says, and then ``status``, ``owner``, ``subject``, ``internal`` (``None``: the
    task was deleted)."""
    if getattr(event, "deleted", False):
        return True, None
    task = getattr(event, "task", None)
    if task is None:
        return False, None
    return True, {
        "status": str(_get(task, "status", default="pending")),
        "owner": _get(task, "owner"),
        "subject": str(_get(task, "subject", default="") or ""),
        "internal": bool(_get(task, "internal", default=False)),
    }


def runtime_model(runtime: Any) -> tuple[str, bool]:
    """The run's model id and whether it is the offline model."""
    model = str(_get(runtime, "model", default="") or "")
    client = _get(runtime, "client")
    offline = False
    if client is not None:
        from app.runtime.model.client import is_offline

        try:
            offline = is_offline(client)
        except Exception:  # not an SDK client (a test double)
            offline = False
    description = str(_get(runtime, "model_description", default="") or "")
    return model, offline or description.startswith("offline")


def agent_info(runtime: Any, name: str) -> Fields:
    """What the runtime knows of an agent now: model, mode, color, whether it is the lead."""
    try:
        snapshots = runtime.snapshot()
    except Exception:
        return {}
    for snap in snapshots:
        if _get(snap, "name") == name:
            return {
                "model": _get(snap, "model"),
                "mode": _get(snap, "mode"),
                "color": _get(snap, "color"),
                "agent_type": _get(snap, "agent_type")
                or ("team-lead" if _get(snap, "is_lead", default=False) else None),
            }
    return {}


def approval_info(runtime: Any, request_id: str) -> tuple[str | None, str | None]:
    """The title and body of a pending approval (the plan, the tool input, the reason)."""
    try:
        approvals = runtime.approvals()
    except Exception:
        return None, None
    for approval in approvals:
        if _get(approval, "request_id") == request_id:
            return _title(approval), _get(approval, "body")
    return None, None


def _title(approval: Any) -> str | None:
    """A request's title as the person saw it: a permission request by what it runs (its
    own title is its asker's description, ``team-lead: run installer``)."""
    title = _get(approval, "title")
    tool_input = _get(approval, "tool_input")
    if _get(approval, "kind") != "permission" or not isinstance(tool_input, dict):
        return title
    if not subject(tool_input) or not isinstance(title, str):
        return title
    return f"{_get(approval, 'agent')}: {request_words(approval, TITLE_CELLS)}"

"""The thin layer between the runtime's objects and the archive.

Everything the recorder knows about runtime events, snapshots and approvals is read here, by
class name and attribute, so a renamed event field or a new event class is a change in this
file only (the runtime's classes are never imported: the archive works for any object with
the same shape, e.g. a test double or a runner in another process).
"""

from __future__ import annotations

from typing import Any

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
    name = type(event).__name__
    if name == "StatusChanged":
        return "status", {
            "agent": _get(event, "agent"),
            "status": str(_get(event, "status", default="")),
            "detail": str(_get(event, "detail", default="") or ""),
        }
    if name == "TranscriptEntry":
        return "transcript", {
            "agent": _get(event, "agent"),
            "kind": str(_get(event, "kind", default="notice")),
            "text": str(_get(event, "text", default="") or ""),
            "data": dict(_get(event, "data", default=None) or {}),
        }
    if name == "UsageChanged":
        return "usage", {
            "agent": _get(event, "agent"),
            "input": int(_get(event, "input_tokens", default=0) or 0),
            "output": int(_get(event, "output_tokens", default=0) or 0),
            "cache_read": int(_get(event, "cache_read_tokens", default=0) or 0),
            "cache_write": int(
                _get(event, "cache_creation_tokens", "cache_write_tokens", default=0) or 0
            ),
            "calls": int(_get(event, "model_calls", default=0) or 0),
        }
    if name == "MessageSent":
        return "message", {
            "team": _get(event, "team"),
            "sender": _get(event, "sender"),
            "recipient": _get(event, "recipient"),
            "text": str(_get(event, "text", default="") or ""),
            "summary": _get(event, "summary"),
            "frame": _get(event, "frame_type", "frame"),
            "timestamp": str(_get(event, "timestamp", default="") or ""),
        }
    if name == "ApprovalChanged":
        return "approval", {
            "request_id": _get(event, "request_id"),
            "kind": str(_get(event, "kind", default="")),
            "agent": _get(event, "agent"),
            "resolved": bool(_get(event, "resolved", default=False)),
            "outcome": str(_get(event, "outcome", default="") or ""),
        }
    if name == "TeamLifecycle":
        return "team", {"team": _get(event, "team"), "event": str(_get(event, "event"))}
    if name == "RunFinished":
        return "finished", {
            "ok": bool(_get(event, "ok", default=False)),
            "reason": str(_get(event, "reason", default="") or ""),
        }
    if name == "ModeChanged":
        return "mode", {"agent": _get(event, "agent"), "mode": str(_get(event, "mode"))}
    return None


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
            return _get(approval, "title"), _get(approval, "body")
    return None, None

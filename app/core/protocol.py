"""Protocol frames: JSON objects carried as strings in an inbox message's ``text``.

``parse_frame(text)`` returns a typed frame or ``None`` and never raises: a text that is not a
known frame (including unknown ``type`` values) stays a plain message. Builders produce the
seeds' shapes exactly; frames are serialised compactly, like ``JSON.stringify(frame)``.

``permission_request``/``permission_response`` use snake_case keys; the others camelCase. The
seeds give two shapes for ``permission_response``: the blueprint (000) has
``subtype``/``response``/``error``, the reference (001) ``decision``/``resolvedBy``. We write the
blueprint's shape (it is the more specific about the wire format) and read both.
"""

from __future__ import annotations

import html
import json
import re
import secrets
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from app.core.models import now_iso


class _Frame(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")

    def to_text(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)


class ShutdownRequest(_Frame):
    type: Literal["shutdown_request"] = "shutdown_request"
    request_id: str
    sender: str = Field(alias="from")
    reason: str | None = None
    timestamp: str = Field(default_factory=now_iso)


class ShutdownApproved(_Frame):
    type: Literal["shutdown_approved"] = "shutdown_approved"
    request_id: str
    sender: str = Field(alias="from")
    timestamp: str = Field(default_factory=now_iso)
    pane_id: str | None = None
    backend_type: str | None = None


class ShutdownRejected(_Frame):
    type: Literal["shutdown_rejected"] = "shutdown_rejected"
    request_id: str
    sender: str = Field(alias="from")
    reason: str = ""
    timestamp: str = Field(default_factory=now_iso)


class PlanApprovalRequest(_Frame):
    type: Literal["plan_approval_request"] = "plan_approval_request"
    sender: str = Field(alias="from")
    timestamp: str = Field(default_factory=now_iso)
    plan_file_path: str = ""
    plan_content: str = ""
    request_id: str


class PlanApprovalResponse(_Frame):
    type: Literal["plan_approval_response"] = "plan_approval_response"
    request_id: str
    approved: bool
    feedback: str | None = None
    timestamp: str = Field(default_factory=now_iso)
    permission_mode: str | None = None


class IdleNotification(_Frame):
    type: Literal["idle_notification"] = "idle_notification"
    sender: str = Field(alias="from")
    timestamp: str = Field(default_factory=now_iso)
    idle_reason: str | None = None
    summary: str | None = None
    completed_task_id: str | None = None
    completed_status: str | None = None
    failure_reason: str | None = None


class TaskCompleted(_Frame):
    type: Literal["task_completed"] = "task_completed"
    sender: str = Field(alias="from")
    task_id: str
    task_subject: str = ""
    timestamp: str = Field(default_factory=now_iso)


class _SnakeFrame(_Frame):
    model_config = ConfigDict(alias_generator=None, populate_by_name=True, extra="allow")


class PermissionRequest(_SnakeFrame):
    type: Literal["permission_request"] = "permission_request"
    request_id: str
    agent_id: str
    tool_name: str
    tool_use_id: str = ""
    description: str = ""
    input: Any = None
    permission_suggestions: list[Any] = Field(default_factory=list)
    timestamp: str = Field(default_factory=now_iso)


class PermissionResponse(_SnakeFrame):
    type: Literal["permission_response"] = "permission_response"
    request_id: str
    subtype: Literal["success", "error"] | None = None
    response: dict[str, Any] | None = None
    error: str | None = None
    # The reference's (001) alternative shape, read for compatibility.
    decision: Literal["approved", "rejected"] | None = None
    feedback: str | None = None
    timestamp: str = Field(default_factory=now_iso)

    @property
    def allowed(self) -> bool:
        if self.subtype is not None:
            return self.subtype == "success"
        return self.decision == "approved"

    @property
    def reason(self) -> str | None:
        return self.error or self.feedback

    @property
    def permission_updates(self) -> Any:
        if self.response:
            return self.response.get("permission_updates")
        return (self.model_extra or {}).get("permissionUpdates")


Frame = Annotated[
    ShutdownRequest
    | ShutdownApproved
    | ShutdownRejected
    | PlanApprovalRequest
    | PlanApprovalResponse
    | IdleNotification
    | TaskCompleted
    | PermissionRequest
    | PermissionResponse,
    Field(discriminator="type"),
]
FRAME_TYPES = frozenset(
    {
        "shutdown_request",
        "shutdown_approved",
        "shutdown_rejected",
        "plan_approval_request",
        "plan_approval_response",
        "idle_notification",
        "task_completed",
        "permission_request",
        "permission_response",
    }
)
_FRAME_ADAPTER: TypeAdapter[Frame] = TypeAdapter(Frame)


def parse_frame(text: str | None) -> Frame | None:
    """The typed frame in ``text``, or ``None`` for a plain (or unknown, or malformed) message."""
    if not isinstance(text, str) or text.lstrip()[:1] != "{":
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return None
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in FRAME_TYPES:  # a list "type" is unhashable
        return None
    try:
        return _FRAME_ADAPTER.validate_python(data)
    except (ValidationError, ValueError, RecursionError):
        return None


def make_request_id(kind: str, target: str) -> str:
    """``{kind}-{random}@{target}``: the seeds' outer shape (``shutdown-1234@researcher``),
    with 96 random bits where the seeds put the time in ms, so an agent cannot guess the id of
    a request it did not see (an id alone never answers anything: see ``app.core.authority``)."""
    return f"{kind}-{secrets.token_hex(12)}@{target}"


# ----------------------------------------------------------------------------- builders

_F = TypeVar("_F", bound=_Frame)


def _build(cls: type[_F], sender: str, **fields: Any) -> _F:
    """``cls(from=sender, **fields)`` -- ``from`` is a keyword, so it goes in by its alias."""
    return cls.model_validate({"from": sender, **fields})


def shutdown_request(request_id: str, sender: str, reason: str | None = None) -> ShutdownRequest:
    return _build(ShutdownRequest, sender, request_id=request_id, reason=reason)


def shutdown_approved(
    request_id: str, sender: str, pane_id: str | None = None, backend_type: str | None = None
) -> ShutdownApproved:
    return _build(
        ShutdownApproved, sender, request_id=request_id, pane_id=pane_id, backend_type=backend_type
    )


def shutdown_rejected(request_id: str, sender: str, reason: str) -> ShutdownRejected:
    return _build(ShutdownRejected, sender, request_id=request_id, reason=reason)


def plan_approval_request(
    request_id: str, sender: str, plan_content: str, plan_file_path: str = ""
) -> PlanApprovalRequest:
    return _build(
        PlanApprovalRequest,
        sender,
        request_id=request_id,
        plan_content=plan_content,
        plan_file_path=plan_file_path,
    )


def plan_approval_response(
    request_id: str,
    approved: bool,
    feedback: str | None = None,
    permission_mode: str | None = None,
) -> PlanApprovalResponse:
    return PlanApprovalResponse(
        request_id=request_id,
        approved=approved,
        feedback=None if approved else feedback,
        permission_mode=permission_mode if approved else None,
    )


def idle_notification(
    sender: str,
    idle_reason: str | None = "available",
    summary: str | None = None,
    completed_task_id: str | None = None,
    completed_status: str | None = None,
    failure_reason: str | None = None,
) -> IdleNotification:
    return _build(
        IdleNotification,
        sender,
        idle_reason=idle_reason,
        summary=summary,
        completed_task_id=completed_task_id,
        completed_status=completed_status,
        failure_reason=failure_reason,
    )


def task_completed(sender: str, task_id: str, task_subject: str) -> TaskCompleted:
    return _build(TaskCompleted, sender, task_id=task_id, task_subject=task_subject)


def permission_request(
    request_id: str,
    agent_id: str,
    tool_name: str,
    tool_use_id: str,
    description: str,
    input: Any,
    permission_suggestions: list[Any] | None = None,
) -> PermissionRequest:
    return PermissionRequest(
        request_id=request_id,
        agent_id=agent_id,
        tool_name=tool_name,
        tool_use_id=tool_use_id,
        description=description,
        input=input,
        permission_suggestions=permission_suggestions or [],
    )


def permission_response(
    request_id: str,
    allow: bool,
    updated_input: Any = None,
    permission_updates: Any = None,
    error: str | None = None,
) -> PermissionResponse:
    if allow:
        return PermissionResponse(
            request_id=request_id,
            subtype="success",
            response={"updated_input": updated_input, "permission_updates": permission_updates},
        )
    return PermissionResponse(
        request_id=request_id, subtype="error", error=error or "Permission denied"
    )


# ----------------------------------------------------------------------------- model-facing text

# "<teammate_message", "</teammate_message", "< / TEAMMATE_MESSAGE"...: anything a reader could
# take for the wrapper's own tag.
_ATTR_BREAKS = str.maketrans({"\n": "&#10;", "\r": "&#13;"})
_WRAPPER_TAG = re.compile(r"<(\s*/?\s*)(teammate_message)", re.IGNORECASE)


def wrap_teammate_message(
    sender: str,
    text: str,
    color: str | None = None,
    summary: str | None = None,
    *,
    plain: bool = False,
) -> str:
    """``<teammate_message teammate_id=".." color=".." summary="..">`` around ``text``.

    ``plain``: an agent's text that imitates a frame (``plainText``); the wrapper says so
    (``type="text"``), for the model and for the transcript, which words it as text.

    Attribute values are entity-escaped and any wrapper tag inside the body is neutralised, so a
    message cannot close the wrapper early or forge a message from someone else.
    """

    def attr(value: str) -> str:
        # Line breaks as character references too: the opening tag stays on one line.
        return html.escape(value, quote=True).translate(_ATTR_BREAKS)

    color_attr = f' color="{attr(color)}"' if color else ""
    summary_attr = f' summary="{attr(summary)}"' if summary else ""
    summary_attr += ' type="text"' if plain else ""
    body = _WRAPPER_TAG.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)
    return (
        f'<teammate_message teammate_id="{attr(sender)}"{color_attr}{summary_attr}>\n'
        f"{body}\n</teammate_message>"
    )

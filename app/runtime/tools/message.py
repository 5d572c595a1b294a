"""SendMessage: DMs, broadcasts, the shutdown protocol and plan/permission answers.

The five message types of the seeds, plus ``permission_response`` so that a lead model that is
asked to decide permission requests (headless runs) can answer them with a tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from app.core.errors import TeamdeckError
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME, parse_agent_id, strip_team_suffix
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult

#: The lead's colour (its messages' ``color``; seed 000 ``assignColor(leadAgentId)``).
LEAD_COLOR = "blue"
TYPES = (
    "message",
    "broadcast",
    "shutdown_request",
    "shutdown_response",
    "plan_approval_response",
    "permission_response",
)


class SendMessage(Tool):
    name = "SendMessage"
    description = (
        "Send a message to teammates. Your plain text output is NOT seen by anyone: use this "
        "tool to communicate. Types: `message` (DM: recipient, content, summary), `broadcast` "
        "(everyone: content, summary; use sparingly), `shutdown_request` (recipient, "
        "content=reason), `shutdown_response` (answer a shutdown request: request_id, approve, "
        "content=reason, required when rejecting), `plan_approval_response` (lead only: "
        "request_id, approve, recipient, content=feedback), `permission_response` (lead only: "
        "request_id, approve, recipient, content=reason)."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": list(TYPES)},
            "recipient": {"type": "string", "description": "Teammate name"},
            "content": {"type": "string"},
            "summary": {"type": "string", "description": "5-10 word preview for UI"},
            "request_id": {"type": "string"},
            "approve": {"type": "boolean"},
        },
        "required": ["type"],
        "additionalProperties": False,
    }
    coordination = True

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        return None

    def describe(self, tool_input: dict[str, Any]) -> str:
        kind = tool_input.get("type", "message")
        to = tool_input.get("recipient")
        return f"SendMessage {kind}" + (f" to {to}" if to else "")

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        kind = tool_input.get("type")
        if kind not in TYPES:
            raise ToolError(f"type must be one of: {', '.join(TYPES)}")
        services = ctx.require_services()
        ctx.require_team()
        try:
            handler: Callable[..., Awaitable[ToolResult]] = getattr(self, f"_{kind}")
            return await handler(tool_input, ctx, services)
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None

    @staticmethod
    def _recipient(tool_input: dict[str, Any], ctx: ToolContext) -> str:
        """The recipient's member name; ``name@other-team`` is refused, never rerouted."""
        raw = SendMessage._field(tool_input, "recipient").strip()
        parsed = parse_agent_id(raw)
        if parsed is not None and parsed[1] != ctx.require_team():
            raise ToolError(f"{raw!r} is not in your team ({ctx.require_team()})")
        return strip_team_suffix(raw)

    @staticmethod
    def _field(tool_input: dict[str, Any], key: str) -> str:
        value = tool_input.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ToolError(f"{key} must not be empty")
        return value

    async def _message(
        self, tool_input: dict[str, Any], ctx: ToolContext, services: Any
    ) -> ToolResult:
        recipient = self._recipient(tool_input, ctx)
        content = self._field(tool_input, "content")
        summary = tool_input.get("summary") or content[:60]
        name = await ctx.blocking(services.send, ctx.agent, recipient, content, summary)
        if name != LEAD_NAME and not ctx.agent.is_lead:
            services.note_peer_dm(ctx.agent, name, summary)
        return ToolResult.json(
            {
                "success": True,
                "message": f"Message sent to {name}'s inbox",
                "routing": {
                    "sender": ctx.agent.name,
                    "senderColor": ctx.agent.color,
                    "target": f"@{name}",
                    "targetColor": _color_of(ctx, name),
                    "summary": summary,
                    "content": content,
                },
            }
        )

    async def _broadcast(
        self, tool_input: dict[str, Any], ctx: ToolContext, services: Any
    ) -> ToolResult:
        content = self._field(tool_input, "content")
        summary = tool_input.get("summary") or content[:60]
        team = ctx.require_team()
        message = InboxMessage(
            sender=ctx.agent.name, text=content, summary=summary, color=ctx.agent.color
        )
        recipients = await ctx.blocking(services.broadcast, ctx.agent, team, message)
        if not recipients:
            return ToolResult.json(
                {"success": True, "message": "No teammates to broadcast to", "recipients": []}
            )
        return ToolResult.json(
            {
                "success": True,
                "message": f"Message broadcast to {len(recipients)} teammate(s): "
                + ", ".join(recipients),
                "recipients": recipients,
            }
        )

    async def _shutdown_request(
        self, tool_input: dict[str, Any], ctx: ToolContext, services: Any
    ) -> ToolResult:
        # Seed 002: "Team lead or another teammate requested shutdown" -- any member may ask.
        recipient = self._recipient(tool_input, ctx)
        request_id = services.request_shutdown_from(ctx.agent, recipient, tool_input.get("content"))
        return ToolResult.json(
            {
                "success": True,
                "message": f"Shutdown request sent to {recipient}. Request ID: {request_id}",
                "request_id": request_id,
                "target": recipient,
            }
        )

    async def _shutdown_response(
        self, tool_input: dict[str, Any], ctx: ToolContext, services: Any
    ) -> ToolResult:
        request_id = self._field(tool_input, "request_id")
        approve = self._approve(tool_input)
        reason = tool_input.get("content")
        if not approve and not (isinstance(reason, str) and reason.strip()):
            raise ToolError("Rejecting a shutdown request needs a reason in `content`.")
        line = services.answer_shutdown(ctx.agent, request_id, approve, reason)
        return ToolResult.json({"success": True, "message": line, "request_id": request_id})

    async def _plan_approval_response(
        self, tool_input: dict[str, Any], ctx: ToolContext, services: Any
    ) -> ToolResult:
        return self._lead_answer(tool_input, ctx, "approve or reject plans", services.answer_plan)

    async def _permission_response(
        self, tool_input: dict[str, Any], ctx: ToolContext, services: Any
    ) -> ToolResult:
        return self._lead_answer(
            tool_input, ctx, "answer permission requests", services.answer_permission_from_lead
        )

    def _lead_answer(
        self, tool_input: dict[str, Any], ctx: ToolContext, what: str, answer: Any
    ) -> ToolResult:
        """A decision only the lead may send: answer(caller, request_id, approve, content)."""
        if not ctx.agent.is_lead:
            raise ToolError(f"Only the team lead can {what}.")
        request_id = self._field(tool_input, "request_id")
        line = answer(ctx.agent, request_id, self._approve(tool_input), tool_input.get("content"))
        return ToolResult.json({"success": True, "message": line, "request_id": request_id})

    @staticmethod
    def _approve(tool_input: dict[str, Any]) -> bool:
        approve = tool_input.get("approve")
        if not isinstance(approve, bool):
            raise ToolError("approve must be true or false")
        return approve


def _color_of(ctx: ToolContext, name: str) -> str | None:
    """The recipient's colour from the team config (``None`` if it has none or is unknown)."""
    try:
        config = ctx.home.teams.get(ctx.require_team())
    except TeamdeckError:
        return None
    member = config.member(name) if config is not None else None
    if member is not None and member.color:
        return member.color
    # Seed 000's TeamCreate writes the lead's entry without a colour; its colour is the one
    # the lead's own messages carry.
    return LEAD_COLOR if name == LEAD_NAME else None

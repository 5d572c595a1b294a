"""ExitPlanMode: a teammate in plan mode submits its plan to the lead and waits for approval."""

from __future__ import annotations

from typing import Any

from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult


class ExitPlanMode(Tool):
    name = "ExitPlanMode"
    description = (
        "Submit your implementation plan for approval when you are in plan mode. The team lead "
        "reviews it; do not change anything until you are told it was approved. Only use this "
        "when the task requires planning the implementation steps of a change."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "plan": {"type": "string", "description": "The plan, in Markdown"},
        },
        "required": ["plan"],
        "additionalProperties": False,
    }
    coordination = True
    read_only = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        plan = tool_input.get("plan")
        if not isinstance(plan, str) or not plan.strip():
            raise ToolError("plan must not be empty")
        if ctx.agent.is_lead:
            raise ToolError("ExitPlanMode is for teammates in plan mode.")
        services = ctx.require_services()
        request_id = await services.request_plan_approval(ctx.agent, plan)
        return ToolResult.json(
            {
                "success": True,
                "message": "Your plan was sent to the team lead for approval. Stop here and "
                "wait: you will be told when it is approved or what to change.",
                "request_id": request_id,
            }
        )

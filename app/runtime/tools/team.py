"""TeamCreate, TeamDelete and the Task tool (which spawns a teammate when given a name)."""

from __future__ import annotations

from typing import Any

from app.core.errors import TeamdeckError, TeamNotEmptyError
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult


class TeamCreate(Tool):
    name = "TeamCreate"
    description = (
        "Create a new team (and its shared task list) that you will lead. You can lead one team "
        "at a time. Then create tasks, spawn teammates with the Task tool (name + team_name) and "
        "assign tasks with TaskUpdate."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "team_name": {"type": "string", "description": "Name for the new team to create."},
            "description": {"type": "string", "description": "Team description/purpose."},
            "agent_type": {
                "type": "string",
                "description": 'Type/role of the team lead (e.g., "researcher", "test-runner").',
            },
        },
        "required": ["team_name"],
        "additionalProperties": False,
    }
    coordination = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        services = ctx.require_services()
        existing = services.current_team()
        if existing:
            raise ToolError(f'Already leading team "{existing}". Use TeamDelete first.')
        team_name = str(tool_input.get("team_name") or "").strip()
        if not team_name:
            raise ToolError("team_name must not be empty")
        team_name = services.team_name_for(team_name)  # across machines: the engine's team
        try:
            config = ctx.home.teams.create(
                team_name,
                description=tool_input.get("description"),
                agent_type=tool_input.get("agent_type"),
                model=ctx.agent.model or None,
                cwd=str(ctx.agent.cwd),
            )
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None
        services.team_created(config.name)
        return ToolResult.json(
            {
                "team_name": config.name,
                "team_file_path": str(ctx.home.layout.config_path(config.name)),
                "lead_agent_id": config.lead_agent_id,
            }
        )


class TeamDelete(Tool):
    name = "TeamDelete"
    description = (
        "Clean up the team you lead: its directories, worktrees and task list. Refused while "
        "teammates remain: ask each to shut down (SendMessage shutdown_request) and wait for "
        "their approvals first."
    )
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}
    coordination = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        services = ctx.require_services()
        team = services.current_team()
        if not team:
            return ToolResult.json(
                {"success": True, "message": "No team name found, nothing to clean up"}
            )
        try:
            ctx.home.teams.delete(team)
        except TeamNotEmptyError as exc:
            return ToolResult.json(
                {"success": False, "message": str(exc), "team_name": team}, is_error=True
            )
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None
        services.team_deleted(team)
        return ToolResult.json(
            {
                "success": True,
                "message": f'Cleaned up directories and worktrees for team "{team}"',
                "team_name": team,
            }
        )


class TaskTool(Tool):
    """Claude Code's Task tool, extended: with ``name`` (+ a team) it spawns a teammate."""

    name = "Task"
    description = (
        "Spawn a teammate into your team: give `name`, `prompt` (its initial instructions) and "
        "optionally `team_name` (defaults to your team), `subagent_type` (its role), `model`, "
        '`mode` ("plan" makes it submit a plan for approval before changing anything) and, in a '
        "team across machines, `machine`."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 word) description"},
            "prompt": {"type": "string", "description": "The task for the agent to perform"},
            "subagent_type": {"type": "string", "description": "The agent's role/type"},
            "name": {"type": "string", "description": "Name for the spawned agent"},
            "team_name": {"type": "string", "description": "Team name for spawning"},
            "mode": {
                "type": "string",
                "enum": ["default", "plan", "acceptEdits", "dontAsk", "bypassPermissions"],
                "description": (
                    "Permission mode of the teammate (bypassPermissions only when the person "
                    "allowed it for this run)"
                ),
            },
            "model": {"type": "string", "description": "sonnet, opus, haiku or a model id"},
            "machine": {
                "type": "string",
                "description": (
                    "In a team across machines: the joined machine to run it on (default: "
                    "this one, or the joined machines in turn when the run spreads them)"
                ),
            },
        },
        "required": ["prompt"],
        "additionalProperties": False,
    }
    coordination = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        services = ctx.require_services()
        if not ctx.agent.is_lead:
            raise ToolError("In-process teammates cannot spawn other teammates.")
        team = tool_input.get("team_name") or services.current_team()
        if not tool_input.get("name") or not team:
            raise ToolError(
                "teamdeck's Task tool spawns teammates: give `name` and create a team first "
                "(TeamCreate)."
            )
        if not str(tool_input.get("prompt") or "").strip():
            raise ToolError("prompt must not be empty")
        try:
            data = await services.spawn_teammate(ctx.agent, {**tool_input, "team_name": team})
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None
        return ToolResult.json(
            {"status": "teammate_spawned", "prompt": tool_input.get("prompt"), **data}
        )

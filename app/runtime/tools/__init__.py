"""Tool sets for the lead and for teammates (seed 000's registration, seed 002's injected tools).

Teammates get the workspace tools, the task tools, SendMessage and ExitPlanMode; they do not get
Task (in-process teammates cannot spawn) nor TeamCreate/TeamDelete (only the lead manages the
team; offering them to teammates only invites a teammate to delete the lead's team).
"""

from __future__ import annotations

from app.runtime.tools.base import AgentIdentity, Tool, ToolContext, ToolError, ToolResult
from app.runtime.tools.message import SendMessage
from app.runtime.tools.plan import ExitPlanMode
from app.runtime.tools.tasks import TaskCreate, TaskGet, TaskList, TaskUpdate
from app.runtime.tools.team import TaskTool, TeamCreate, TeamDelete
from app.runtime.tools.workspace import Bash, Edit, Glob, Grep, Read, Write


def workspace_tools() -> list[Tool]:
    return [Read(), Glob(), Grep(), Write(), Edit(), Bash()]


def task_tools() -> list[Tool]:
    return [TaskCreate(), TaskGet(), TaskList(), TaskUpdate()]


def lead_tools() -> list[Tool]:
    return [
        TeamCreate(),
        TeamDelete(),
        TaskTool(),
        SendMessage(),
        *task_tools(),
        *workspace_tools(),
    ]


def teammate_tools() -> list[Tool]:
    return [SendMessage(), *task_tools(), ExitPlanMode(), *workspace_tools()]


__all__ = [
    "AgentIdentity",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "lead_tools",
    "teammate_tools",
    "task_tools",
    "workspace_tools",
]

"""How the task tools read their input (task ids as Claude Code's models write them: ``"3"``,
``3`` or ``"#3"``), and what they share."""

from __future__ import annotations

from typing import Any

from app.core.paths import LEAD_NAME
from app.runtime.tools.base import Tool, ToolContext, ToolError


def str_arg(tool_input: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = tool_input.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing required parameter {key!r}")
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and key == "taskId":
        return str(int(value))
    if not isinstance(value, str):
        raise ToolError(f"parameter {key!r} must be a string")
    return value


def task_id_arg(tool_input: dict[str, Any]) -> str:
    task_id = str_arg(tool_input, "taskId", required=True)
    assert task_id is not None
    task_id = task_id.strip().lstrip("#")
    if not task_id.isdigit():
        raise ToolError(f"taskId must be a task number like '1', not {task_id!r}")
    return str(int(task_id))


def id_list_arg(tool_input: dict[str, Any], key: str) -> list[str]:
    value = tool_input.get(key)
    if value is None:
        return []
    if isinstance(value, str | int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise ToolError(f"parameter {key!r} must be a list of task ids")
    ids = []
    for item in value:
        text = str(item).strip().lstrip("#")
        if isinstance(item, bool) or not text.isdigit():
            raise ToolError(f"parameter {key!r} must be a list of task ids, not {item!r}")
        ids.append(str(int(text)))
    return ids


def metadata_arg(tool_input: dict[str, Any]) -> dict[str, Any] | None:
    value = tool_input.get("metadata")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ToolError("parameter 'metadata' must be an object")
    return value


def id_order(task_id: str) -> tuple[int, str]:
    """Sort key: numeric ids in number order (``"10"`` after ``"9"``), anything else last."""
    return (int(task_id), task_id) if task_id.isdigit() else (1 << 62, task_id)


def is_lead(ctx: ToolContext) -> bool:
    """Whether the caller is the lead (who assigns owners directly instead of claiming)."""
    return ctx.agent.is_lead or ctx.agent.name == LEAD_NAME


class TaskTool(Tool):
    """A task tool: a coordination tool (see ``Tool.coordination``)."""

    coordination = True

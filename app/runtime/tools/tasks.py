"""The shared task list tools: TaskCreate, TaskGet, TaskList, TaskUpdate (coordination tools).

They work on ``ctx.home.tasks(team)`` for the caller's team and return JSON:

- TaskCreate -> ``{"task": {"id", "subject"}}``
- TaskGet    -> ``{"task": {"id", "subject", "description", "status", "owner", "blocks",
  "blockedBy", "activeForm"?}}`` (an error if the task does not exist)
- TaskList   -> ``{"tasks": [{"id", "subject", "status", "owner", "blockedBy"}]}`` in id order,
  ``_internal`` tasks hidden, ``blockedBy`` listing only unresolved blockers
- TaskUpdate -> ``{"success": true, "taskId", "updatedFields": [...]}`` (owners, claims,
  completion and deletion: :mod:`app.runtime.tools.task_update`)

The file work (locks, a scan of every task file, fsyncs) runs off the event loop in the
calling agent's order (``ToolContext.blocking``); the hooks are awaited between those steps.

Hooks (``ctx.hooks``, see :mod:`app.runtime.agent.team_hooks`): a ``TaskCreated`` hook that blocks
means the task is not created (it is written hidden while its hooks run, so nobody claims it,
then shown or deleted) and the hook's feedback is the tool's error; a ``TaskCompleted`` hook
that blocks keeps the task open (nothing of the update is written) and its feedback is the
error the caller reads.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, ClassVar

from app.core.errors import TeamdeckError
from app.core.models import Task
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult
from app.runtime.tools.task_input import TaskTool, id_order, metadata_arg, str_arg, task_id_arg
from app.runtime.tools.task_update import TaskUpdate

if TYPE_CHECKING:
    from app.core.tasks import TaskList as TaskStore


#: The most tasks one agent may create in one team: every task is a file each reader lists and
#: a row the dashboard shows, and an agent in a loop (or a hostile one) would add them forever.
#: The person's own ``teamdeck task create`` is not capped.
MAX_TASKS_PER_AGENT = 1000


class TaskCreate(TaskTool):
    name = "TaskCreate"
    description = (
        "Create a task in the team's shared task list. subject is a short imperative title "
        "(e.g. 'Add login endpoint'), description says what done looks like, activeForm is the "
        "present-continuous form shown while it is in progress (e.g. 'Adding login endpoint'). "
        "New tasks are pending and unowned; assign them with TaskUpdate (owner) and add "
        "dependencies with TaskUpdate (addBlocks / addBlockedBy)."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "subject": {"type": "string", "description": "A brief title for the task"},
            "description": {"type": "string", "description": "What needs to be done"},
            "activeForm": {
                "type": "string",
                "description": "Present continuous form shown in the spinner (e.g. 'Running "
                "tests')",
            },
            "metadata": {"type": "object", "description": "Arbitrary metadata to attach"},
        },
        "required": ["subject", "description"],
        "additionalProperties": False,
    }

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        subject = (str_arg(tool_input, "subject", required=True) or "").strip()
        if not subject:
            raise ToolError("subject must not be empty")
        created = ctx.agent.tasks_created.get(team, 0)
        if created >= MAX_TASKS_PER_AGENT:
            raise ToolError(
                f"{ctx.agent.name} has created {created} tasks in team {team}, the most one "
                "agent may: work through them (or ask the person) instead of adding more"
            )
        description = str_arg(tool_input, "description") or ""
        metadata = metadata_arg(tool_input)
        hooked = ctx.hooks is not None and await ctx.hooks.has("TaskCreated")
        hide = hooked and not (metadata or {}).get("_internal")
        tasks = ctx.home.tasks(team)
        try:
            task = await ctx.blocking(
                tasks.create,
                subject,
                description,
                active_form=str_arg(tool_input, "activeForm"),
                metadata={**(metadata or {}), "_internal": True} if hide else metadata,
            )
        except (TeamdeckError, ValueError) as exc:
            raise ToolError(str(exc)) from None
        ctx.agent.tasks_created[team] = created + 1
        if hooked and ctx.hooks is not None:
            await _created_hooks(ctx, tasks, task, unhide=hide)
        return ToolResult.json({"task": {"id": task.id, "subject": task.subject}})


class TaskGet(TaskTool):
    name = "TaskGet"
    description = (
        "Get the full details of one task: subject, description, status, owner and its "
        "dependencies (blocks: tasks waiting for it; blockedBy: tasks it waits for)."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"taskId": {"type": "string", "description": "The id of the task"}},
        "required": ["taskId"],
        "additionalProperties": False,
    }
    read_only = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        task_id = task_id_arg(tool_input)
        try:
            task = await ctx.blocking(ctx.home.tasks(team).get, task_id)
        except (TeamdeckError, ValueError) as exc:
            raise ToolError(str(exc)) from None
        if task is None:
            raise ToolError(f"Task #{task_id} not found")
        data: dict[str, Any] = {
            "id": task.id,
            "subject": task.subject,
            "description": task.description,
            "status": task.status,
            "owner": task.owner,
            "blocks": list(task.blocks),
            "blockedBy": list(task.blocked_by),
        }
        if task.active_form:
            data["activeForm"] = task.active_form
        return ToolResult.json({"task": data})


class TaskList(TaskTool):
    name = "TaskList"
    description = (
        "List the tasks in the team's shared task list (id order) with status, owner and the "
        "unfinished tasks each one waits for (blockedBy). A pending task with no owner and an "
        "empty blockedBy is available to claim."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    read_only = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        try:
            return await ctx.blocking(_listing, ctx.home.tasks(team))
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None


def _listing(store: TaskStore) -> ToolResult:
    """TaskList's result, built and encoded off the event loop (a board of hundreds of tasks
    is milliseconds of Python per call, with every teammate calling it between tasks). One
    line of JSON: it is the model's to read (no file holds it), the C encoder makes it in a
    third of the time of an indented one and the conversation keeps it at two thirds the
    size."""
    every, errors = store.scan(include_internal=True)
    by_id: dict[str, Task] = {t.id: t for t in every}

    def unresolved(blocker: str) -> bool:
        if blocker in errors:
            return True  # unreadable: do not pretend it is done
        other = by_id.get(blocker)
        return other is not None and not other.is_resolved

    tasks = [
        {
            "id": t.id,
            "subject": t.subject,
            "status": t.status,
            "owner": t.owner,
            "blockedBy": [b for b in t.blocked_by if unresolved(b)],
        }
        for t in sorted(every, key=lambda t: id_order(t.id))
        if not t.is_internal
    ]
    result: dict[str, Any] = {"tasks": tasks}
    if errors:
        result["errors"] = [errors[k] for k in sorted(errors, key=id_order)]
    return ToolResult.compact_json(result)


async def _created_hooks(ctx: ToolContext, tasks: TaskStore, task: Task, *, unhide: bool) -> None:
    """Run the ``TaskCreated`` hooks of a task just written (hidden if ``unhide``): show it,
    or delete it and raise the hook's feedback (the task was not created)."""
    assert ctx.hooks is not None
    try:
        run = await ctx.hooks.fire("TaskCreated", task=task)
    except BaseException:
        _forget(tasks, task.id)  # cancelled (the turn was interrupted): no half-made task
        raise
    if run.blocked:
        await ctx.blocking(_forget, tasks, task.id)
        raise ToolError(
            f"A TaskCreated hook refused the task (not created). Its feedback:\n{run.feedback}"
        )
    if unhide:
        try:
            await ctx.blocking(tasks.update, task.id, metadata={"_internal": None})
        except (TeamdeckError, ValueError) as exc:
            raise ToolError(f"task #{task.id} was created but stays hidden: {exc}") from None


def _forget(tasks: TaskStore, task_id: str) -> None:
    with contextlib.suppress(TeamdeckError, OSError):  # already gone
        tasks.delete(task_id)


TASK_TOOLS: tuple[type[Tool], ...] = (TaskCreate, TaskGet, TaskList, TaskUpdate)

__all__ = ["TASK_TOOLS", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"]

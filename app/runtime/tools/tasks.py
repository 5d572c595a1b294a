"""The shared task list tools: TaskCreate, TaskGet, TaskList, TaskUpdate (coordination tools).

They work on ``ctx.home.tasks(team)`` for the caller's team and return JSON:

- TaskCreate -> ``{"task": {"id", "subject"}}``
- TaskGet    -> ``{"task": {"id", "subject", "description", "status", "owner", "blocks",
  "blockedBy", "activeForm"?}}`` (an error if the task does not exist)
- TaskList   -> ``{"tasks": [{"id", "subject", "status", "owner", "blockedBy"}]}`` in id order,
  ``_internal`` tasks hidden, ``blockedBy`` listing only unresolved blockers
- TaskUpdate -> ``{"success": true, "taskId", "updatedFields": [...]}``

Claiming: when a teammate (not the lead) makes itself the owner of a task it does not own yet
(``owner`` set to its own name, or ``status: "in_progress"`` on an unowned task, as Claude
Code does), the update goes through ``TaskList.claim``, so of several racing teammates exactly
one wins; the others get an error naming the reason (already_claimed, blocked,
already_resolved, task_not_found). The lead assigns owners directly.

Completion: when a teammate sets ``status: "completed"`` on a task that was not completed, a
``task_completed`` frame goes to the lead's inbox (through ``ctx.services.send``).

``status: "deleted"`` deletes the task (as Claude Code does); ids are never reused.
"""

from __future__ import annotations

from typing import Any, ClassVar

from app.core.errors import TeamdeckError
from app.core.models import TASK_STATUSES, Task
from app.core.paths import LEAD_NAME, strip_team_suffix
from app.core.protocol import task_completed
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult

_CLAIM_REASONS = {
    "task_not_found": "it does not exist",
    "already_claimed": "it is already owned by {owner}",
    "already_resolved": "it is already {status}",
    "blocked": "it is blocked by unfinished task(s) {blockers}",
    "agent_busy": "you already own unfinished task(s) {busy}",
}


def _str(tool_input: dict[str, Any], key: str, *, required: bool = False) -> str | None:
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


def _task_id(tool_input: dict[str, Any]) -> str:
    task_id = _str(tool_input, "taskId", required=True)
    assert task_id is not None
    task_id = task_id.strip().lstrip("#")
    if not task_id.isdigit():
        raise ToolError(f"taskId must be a task number like '1', not {task_id!r}")
    return str(int(task_id))


def _id_list(tool_input: dict[str, Any], key: str) -> list[str]:
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


def _metadata(tool_input: dict[str, Any]) -> dict[str, Any] | None:
    value = tool_input.get("metadata")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ToolError("parameter 'metadata' must be an object")
    return value


def _id_key(task_id: str) -> tuple[int, str]:
    return (int(task_id), task_id) if task_id.isdigit() else (1 << 62, task_id)


def _is_lead(ctx: ToolContext) -> bool:
    return ctx.agent.is_lead or ctx.agent.name == LEAD_NAME


class _TaskTool(Tool):
    coordination = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The work is blocking file I/O (locks, a scan of every task file, fsyncs): it runs
        off the event loop, in the agent's order (``ToolContext.blocking``)."""
        return await ctx.blocking(self.run, tool_input, ctx)

    def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


class TaskCreate(_TaskTool):
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

    def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        subject = (_str(tool_input, "subject", required=True) or "").strip()
        if not subject:
            raise ToolError("subject must not be empty")
        description = _str(tool_input, "description") or ""
        try:
            task = ctx.home.tasks(team).create(
                subject,
                description,
                active_form=_str(tool_input, "activeForm"),
                metadata=_metadata(tool_input),
            )
        except (TeamdeckError, ValueError) as exc:
            raise ToolError(str(exc)) from None
        return ToolResult.json({"task": {"id": task.id, "subject": task.subject}})


class TaskGet(_TaskTool):
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

    def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        task_id = _task_id(tool_input)
        try:
            task = ctx.home.tasks(team).get(task_id)
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


class TaskList(_TaskTool):
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

    def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        try:
            every, errors = ctx.home.tasks(team).scan(include_internal=True)
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None
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
            for t in sorted(every, key=lambda t: _id_key(t.id))
            if not t.is_internal
        ]
        result: dict[str, Any] = {"tasks": tasks}
        if errors:
            result["errors"] = [errors[k] for k in sorted(errors, key=_id_key)]
        return ToolResult.json(result)


class TaskUpdate(_TaskTool):
    name = "TaskUpdate"
    description = (
        "Update a task: status (pending, in_progress, completed; 'deleted' deletes the task), "
        "subject, description, activeForm, owner (an agent name; set your own name to claim an "
        "unowned task, empty string to unassign), addBlocks / addBlockedBy (task ids this task "
        "blocks / waits for) and metadata (merged; a null value removes a key). Claim a task "
        "before working on it and mark it completed when done."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "taskId": {"type": "string", "description": "The id of the task to update"},
            "status": {
                "type": "string",
                "enum": ["pending", "in_progress", "completed", "deleted"],
                "description": "The new status",
            },
            "subject": {"type": "string", "description": "A new title"},
            "description": {"type": "string", "description": "A new description"},
            "activeForm": {
                "type": "string",
                "description": "Present continuous form shown while in progress",
            },
            "owner": {"type": "string", "description": "The new owner (an agent name)"},
            "addBlocks": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Task ids that cannot start until this one is completed",
            },
            "addBlockedBy": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Task ids that must be completed before this one can start",
            },
            "metadata": {"type": "object", "description": "Metadata keys to merge"},
        },
        "required": ["taskId"],
        "additionalProperties": False,
    }

    def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        task_id = _task_id(tool_input)
        status = _str(tool_input, "status")
        if status is not None and status not in TASK_STATUSES:
            raise ToolError(f"unknown task status {status!r} (use {', '.join(TASK_STATUSES)})")
        subject = _str(tool_input, "subject")
        if subject is not None and not subject.strip():
            raise ToolError("subject must not be empty")
        description = _str(tool_input, "description")
        active_form = _str(tool_input, "activeForm")
        owner = _str(tool_input, "owner")
        add_blocks = _id_list(tool_input, "addBlocks")
        add_blocked_by = _id_list(tool_input, "addBlockedBy")
        metadata = _metadata(tool_input)
        tasks = ctx.home.tasks(team)
        me = ctx.agent.name
        try:
            before = tasks.get(task_id)
            if before is None:
                raise ToolError(f"Task #{task_id} not found")
            if status == "deleted":
                tasks.delete(task_id)
                return ToolResult.json(
                    {"success": True, "taskId": task_id, "updatedFields": ["deleted"]}
                )
            if owner is not None:
                owner = owner.strip()
                if owner == ctx.agent.agent_id:
                    owner = me
                if owner and owner != me:
                    owner = _current_member(ctx, team, owner)
            claims = not _is_lead(ctx) and (
                (owner == me and before.owner != me)
                or (owner is None and status == "in_progress" and not before.owner)
            )
            if claims:
                claim = tasks.claim(task_id, me)
                if not claim.success:
                    current = claim.task or before
                    reason = claim.reason or "failed"
                    detail = _CLAIM_REASONS.get(reason, reason).format(
                        owner=current.owner,
                        status=current.status,
                        blockers=", ".join(f"#{b}" for b in claim.blocked_by),
                        busy=", ".join(f"#{b}" for b in claim.busy_with),
                    )
                    raise ToolError(f"Cannot claim task #{task_id} ({reason}): {detail}")
                owner = None  # the claim set it
            updates: dict[str, Any] = {}
            if subject is not None:
                updates["subject"] = subject
            if description is not None:
                updates["description"] = description
            if active_form is not None:
                updates["active_form"] = active_form
            if status is not None:
                updates["status"] = status
            if owner is not None:
                updates["owner"] = owner or None
            if metadata is not None:
                updates["metadata"] = metadata
            after = tasks.update(
                task_id, add_blocks=add_blocks, add_blocked_by=add_blocked_by, **updates
            )
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None
        except ValueError as exc:
            raise ToolError(str(exc)) from None

        changed = _changed_fields(before, after)
        result: dict[str, Any] = {"success": True, "taskId": task_id, "updatedFields": changed}
        if status == "completed" and before.status != "completed" and not _is_lead(ctx):
            warning = self._notify_lead(ctx, after)
            if warning:
                result["warning"] = warning
        return ToolResult.json(result)

    @staticmethod
    def _notify_lead(ctx: ToolContext, task: Task) -> str | None:
        if ctx.services is None:
            return None
        frame = task_completed(ctx.agent.name, task.id, task.subject)
        try:
            ctx.services.send(ctx.agent, LEAD_NAME, frame.to_text())
        except (TeamdeckError, ToolError) as exc:
            return f"the task was updated but the lead could not be notified: {exc}"
        return None


def _changed_fields(before: Task, after: Task) -> list[str]:
    fields = [
        ("subject", before.subject, after.subject),
        ("description", before.description, after.description),
        ("activeForm", before.active_form, after.active_form),
        ("status", before.status, after.status),
        ("owner", before.owner, after.owner),
        ("blocks", before.blocks, after.blocks),
        ("blockedBy", before.blocked_by, after.blocked_by),
        ("metadata", before.metadata, after.metadata),
    ]
    return [name for name, old, new in fields if old != new]


TASK_TOOLS: tuple[type[Tool], ...] = (TaskCreate, TaskGet, TaskList, TaskUpdate)


def _current_member(ctx: ToolContext, team: str, owner: str) -> str:
    """``owner`` as a current member's name; ToolError for anyone else (a departed teammate
    would own the task forever, and nobody would ever claim it)."""
    name = strip_team_suffix(owner)
    config = ctx.home.teams.get(team)
    member = config.member(name) if config is not None else None
    if member is None:
        names = ", ".join(m.name for m in config.members) if config is not None else "none"
        raise ToolError(f"{owner!r} is not a member of team {team!r} (members: {names})")
    return member.name

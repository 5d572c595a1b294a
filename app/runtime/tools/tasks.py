"""The shared task list tools: TaskCreate, TaskGet, TaskList, TaskUpdate (coordination tools).

They work on ``ctx.home.tasks(team)`` for the caller's team and return JSON:

- TaskCreate -> ``{"task": {"id", "subject"}}``
- TaskGet    -> ``{"task": {"id", "subject", "description", "status", "owner", "blocks",
  "blockedBy", "activeForm"?}}`` (an error if the task does not exist)
- TaskList   -> ``{"tasks": [{"id", "subject", "status", "owner", "blockedBy"}]}`` in id order,
  ``_internal`` tasks hidden, ``blockedBy`` listing only unresolved blockers
- TaskUpdate -> ``{"success": true, "taskId", "updatedFields": [...]}``

Owners: an owner other than the caller must be a current member of the team (a departed one
would own the task forever); if the owner leaves while the assignment is being written, the
task goes straight back to the board and the caller is told.

Claiming: when a teammate (not the lead) makes itself the owner of a task it does not own yet
(``owner`` set to its own name, or ``status: "in_progress"`` on an unowned task, as Claude
Code does), the update goes through ``TaskList.claim``, so of several racing teammates exactly
one wins; the others get an error naming the reason (already_claimed, blocked,
already_resolved, task_not_found). The lead assigns owners directly.

Completion: when a teammate sets ``status: "completed"`` on a task that was not completed, a
``task_completed`` frame goes to the lead's inbox (through ``ctx.services.send``).

``status: "deleted"`` deletes the task (as Claude Code does); ids are never reused.

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
from app.core.models import TASK_STATUSES, Task
from app.core.paths import LEAD_NAME, strip_team_suffix
from app.core.protocol import task_completed
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from app.core.tasks import TaskList as TaskStore

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

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        subject = (_str(tool_input, "subject", required=True) or "").strip()
        if not subject:
            raise ToolError("subject must not be empty")
        description = _str(tool_input, "description") or ""
        metadata = _metadata(tool_input)
        hooked = ctx.hooks is not None and await ctx.hooks.has("TaskCreated")
        hide = hooked and not (metadata or {}).get("_internal")
        tasks = ctx.home.tasks(team)
        try:
            task = await ctx.blocking(
                tasks.create,
                subject,
                description,
                active_form=_str(tool_input, "activeForm"),
                metadata={**(metadata or {}), "_internal": True} if hide else metadata,
            )
        except (TeamdeckError, ValueError) as exc:
            raise ToolError(str(exc)) from None
        if hooked and ctx.hooks is not None:
            await _created_hooks(ctx, tasks, task, unhide=hide)
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

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        task_id = _task_id(tool_input)
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

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        team = ctx.require_team()
        try:
            every, errors = await ctx.blocking(ctx.home.tasks(team).scan, include_internal=True)
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

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
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
        try:
            before, owner, deleted = await ctx.blocking(
                self._claim_or_delete, ctx, tasks, team, task_id, status, owner
            )
            if deleted is not None:
                return deleted
            if status == "completed" and before.status != "completed" and ctx.hooks:
                run = await ctx.hooks.fire("TaskCompleted", task=before)
                if run.blocked:
                    raise ToolError(
                        f"A TaskCompleted hook kept task #{task_id} open (nothing was "
                        f"updated). Its feedback:\n{run.feedback}"
                    )
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
            after = await ctx.blocking(
                self._write, ctx, tasks, team, task_id, owner, add_blocks, add_blocked_by, updates
            )
        except TeamdeckError as exc:
            raise ToolError(str(exc)) from None
        except ValueError as exc:
            raise ToolError(str(exc)) from None

        changed = _changed_fields(before, after)
        result: dict[str, Any] = {"success": True, "taskId": task_id, "updatedFields": changed}
        if status == "completed" and before.status != "completed" and not _is_lead(ctx):
            warning = await ctx.blocking(self._notify_lead, ctx, after)  # an inbox append
            if warning:
                result["warning"] = warning
        return ToolResult.json(result)

    @staticmethod
    def _claim_or_delete(
        ctx: ToolContext,
        tasks: TaskStore,
        team: str,
        task_id: str,
        status: str | None,
        owner: str | None,
    ) -> tuple[Task, str | None, ToolResult | None]:
        """The file work before the hooks: (the task as it was, the owner still to write,
        the result if the task was deleted). A teammate making itself the owner claims it."""
        me = ctx.agent.name
        before = tasks.get(task_id)
        if before is None:
            raise ToolError(f"Task #{task_id} not found")
        if status == "deleted":
            tasks.delete(task_id)
            deleted = {"success": True, "taskId": task_id, "updatedFields": ["deleted"]}
            return before, owner, ToolResult.json(deleted)
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
        return before, owner, None

    @staticmethod
    def _write(
        ctx: ToolContext,
        tasks: TaskStore,
        team: str,
        task_id: str,
        owner: str | None,
        add_blocks: list[str],
        add_blocked_by: list[str],
        updates: dict[str, Any],
    ) -> Task:
        """The file work after the hooks: the update, and the owner's presence checked."""
        after = tasks.update(
            task_id, add_blocks=add_blocks, add_blocked_by=add_blocked_by, **updates
        )
        if owner and owner != ctx.agent.name and after.owner == owner:
            _owner_still_here(ctx, team, owner, task_id)
        return after

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


def _owner_still_here(ctx: ToolContext, team: str, owner: str, task_id: str) -> None:
    """After assigning ``owner``: if it left the team meanwhile (a kill or a crash racing the
    assignment, whose own return of its tasks may have come before this write), its tasks go
    back to the board now and ToolError says so. With the leaving teammate removed from the
    config *before* its tasks are returned, one of the two always sees the other's write."""
    try:
        config = ctx.home.teams.get(team)
    except TeamdeckError:
        return  # cannot tell: leave the assignment as it is
    if config is None or config.member(owner) is not None:
        return
    result = ctx.home.tasks(team).unassign(owner, f"{owner}@{team}", "terminated")
    raise ToolError(
        f"{owner} left the team while task #{task_id} was being assigned to it; "
        f"{result.notification_message}"
    )


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

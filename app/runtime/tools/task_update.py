"""TaskUpdate: changing, claiming, completing and deleting a task.

Owners: an owner other than the caller must be a current member of the team (a departed one
would own the task forever); if the owner leaves while the assignment is being written, the
task goes straight back to the board and the caller is told.

Claiming: when a teammate (not the lead) makes itself the owner of a task it does not own yet
(``owner`` set to its own name, or ``status: "in_progress"`` on an unowned task, as Claude
Code does), the update goes through ``TaskList.claim``, so of several racing teammates exactly
one wins; the others get an error naming the reason (already_claimed, blocked,
already_resolved, task_not_found). The lead assigns owners directly. Starting a task
(``status: "in_progress"``) is refused for anyone, owner or not, lead or teammate, while a task
it is blocked by is unfinished: one rule (``TaskList.open_blockers``) in every teammate mode.

Completion: when a teammate sets ``status: "completed"`` on a task that was not completed, a
``task_completed`` frame goes to the lead's inbox (through ``ctx.services.send``).

``status: "deleted"`` deletes the task (as Claude Code does); ids are never reused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from app.core.errors import TeamdeckError
from app.core.models import TASK_STATUSES, Task
from app.core.paths import LEAD_NAME, strip_team_suffix
from app.core.protocol import task_completed
from app.runtime.tools.base import ToolContext, ToolError, ToolResult
from app.runtime.tools.task_input import (
    TaskTool,
    id_list_arg,
    is_lead,
    metadata_arg,
    str_arg,
    task_id_arg,
)

if TYPE_CHECKING:
    from app.core.tasks import TaskList as TaskStore

_CLAIM_REASONS = {
    "task_not_found": "it does not exist",
    "already_claimed": "it is already owned by {owner}",
    "already_resolved": "it is already {status}",
    "blocked": "it is blocked by unfinished task(s) {blockers}",
    "agent_busy": "you already own unfinished task(s) {busy}",
}


class TaskUpdate(TaskTool):
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
        task_id = task_id_arg(tool_input)
        status = str_arg(tool_input, "status")
        if status is not None and status not in TASK_STATUSES:
            raise ToolError(f"unknown task status {status!r} (use {', '.join(TASK_STATUSES)})")
        subject = str_arg(tool_input, "subject")
        if subject is not None and not subject.strip():
            raise ToolError("subject must not be empty")
        description = str_arg(tool_input, "description")
        active_form = str_arg(tool_input, "activeForm")
        owner = str_arg(tool_input, "owner")
        add_blocks = id_list_arg(tool_input, "addBlocks")
        add_blocked_by = id_list_arg(tool_input, "addBlockedBy")
        metadata = metadata_arg(tool_input)
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
        if status == "completed" and before.status != "completed" and not is_lead(ctx):
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
        claims = not is_lead(ctx) and (
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

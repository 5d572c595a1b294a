"""``teamdeck task create|list|show|update|claim|delete``: a team's task list.

An owner given on the command line must be a member of the team (``worker@team`` accepted): a
task owned by anyone else would never be worked nor claimed. Registered in ``app.cli.main`` by
``register``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli import format as fmt
from app.cli.home import resolve_team
from app.cli.output import emit_json, warning_line
from app.core.errors import NotFoundError, TeamdeckError
from app.core.paths import check_raw_name, strip_team_suffix

if TYPE_CHECKING:
    from app.core.home import Home
    from app.core.tasks import ClaimResult, TaskList

#: ``app.core.models.TASK_STATUSES`` (for ``--help``, which does not load the models; a test
#: keeps the two equal).
TASK_STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "deleted")

Handler = Callable[["Home", argparse.Namespace], int]


class ClaimFailedError(TeamdeckError):
    """``task claim`` lost: the task is owned, resolved, blocked, or the agent is busy."""


def _tasks(home: Home, args: argparse.Namespace) -> TaskList:
    return home.tasks(resolve_team(home, args.team))


def cmd_task_create(home: Home, args: argparse.Namespace) -> int:
    task = _tasks(home, args).create(args.subject, description=args.description)
    if args.json:
        emit_json(task.to_json_dict())
    else:
        print(f"created task #{task.id}: {fmt.one_line(task.subject)}")
    return 0


def cmd_task_list(home: Home, args: argparse.Namespace) -> int:
    tasks, errors = _tasks(home, args).scan(include_internal=args.all)
    if args.json:
        emit_json([t.to_json_dict() for t in tasks])
    elif tasks:
        print(fmt.task_table(tasks))
    else:
        print("no tasks")
    for message in errors.values():
        warning_line(message)
    return 0


def cmd_task_show(home: Home, args: argparse.Namespace) -> int:
    task = _tasks(home, args).require(args.id)
    if args.json:
        emit_json(task.to_json_dict())
    else:
        print(fmt.task_detail(task))
    return 0


def cmd_task_update(home: Home, args: argparse.Namespace) -> int:
    changes: dict[str, Any] = {
        key: getattr(args, key)
        for key in ("status", "subject", "description")
        if getattr(args, key) is not None
    }
    if args.owner is not None:  # '' unassigns; anyone else must be on the team
        owner = args.owner.strip()
        changes["owner"] = (
            _member_name(home, resolve_team(home, args.team), owner) if owner else None
        )
    if args.blocked_by:
        changes["add_blocked_by"] = list(dict.fromkeys(args.blocked_by))
    if not changes:
        args.parser.error(
            "nothing to update (give --status, --owner, --blocked-by, --subject or --description)"
        )
    task = _tasks(home, args).update(args.id, **changes)
    if args.json:
        emit_json(task.to_json_dict())
    else:
        print(f"updated task #{task.id}")
        print(fmt.task_detail(task))
    return 0


def _member_name(home: Home, team: str, owner: str) -> str:
    """``owner`` as a current member's name (``worker@team`` accepted); NotFoundError for
    anyone else: a task owned by a non-member is never worked nor claimed by anyone."""
    name = strip_team_suffix(owner.strip())
    check_raw_name(name, "owner")
    config = home.teams.get(team)
    member = config.member(name) if config is not None else None
    if member is None:
        known = ", ".join(m.name for m in config.members) if config is not None else "none"
        raise NotFoundError(f"{name!r} is not a member of team {team!r} (members: {known})")
    return member.name


def claim_failure(result: ClaimResult, task_id: str, team: str, owner: str) -> str:
    task = result.task
    if result.reason == "already_claimed" and task is not None:
        return f"task #{task_id} is already claimed by {task.owner}"
    if result.reason == "already_resolved" and task is not None:
        return f"task #{task_id} is already {task.status}"
    if result.reason == "blocked":
        return f"task #{task_id} is blocked by " + ", ".join(f"#{b}" for b in result.blocked_by)
    if result.reason == "agent_busy":
        return f"{owner} is busy with task " + ", ".join(f"#{b}" for b in result.busy_with)
    if result.reason == "task_not_found":
        return f"task #{task_id} does not exist in team {team!r}"
    return f"task #{task_id} could not be claimed ({result.reason})"


def cmd_task_claim(home: Home, args: argparse.Namespace) -> int:
    tasks = _tasks(home, args)
    owner = _member_name(home, tasks.team, args.owner)
    result = tasks.claim(args.id, owner, check_busy=args.check_busy)
    if args.json:
        emit_json(
            {
                "success": result.success,
                "reason": result.reason,
                "task": result.task.to_json_dict() if result.task else None,
                "busyWith": result.busy_with,
                "blockedBy": result.blocked_by,
            }
        )
    if not result.success:
        raise ClaimFailedError(claim_failure(result, args.id, tasks.team, owner))
    if not args.json:
        print(f"{fmt.clean(owner)} claimed task #{args.id}")
    return 0


def cmd_task_delete(home: Home, args: argparse.Namespace) -> int:
    task = _tasks(home, args).delete(args.id)
    print(f"deleted task #{task.id}: {fmt.one_line(task.subject)}")
    return 0


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``task`` and its actions to the ``teamdeck`` parser; returns the read-only handlers."""
    task = command(commands, "task", "create, list, update, claim and delete tasks")
    actions = task.add_subparsers(dest="task_command", metavar="ACTION", required=True)

    def task_command(name: str, help_text: str, handler: Handler) -> argparse.ArgumentParser:
        sub = command(actions, name, help_text, handler)
        sub.add_argument("--team", metavar="T", required=True, help="the team")
        return sub

    sub = task_command("create", "create a task", cmd_task_create)
    sub.add_argument("subject", metavar="SUBJECT")
    sub.add_argument("--description", metavar="D", default="")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = task_command("list", "list the tasks", cmd_task_list)
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub.add_argument("--all", action="store_true", help="include internal tasks")
    sub = task_command("show", "show one task", cmd_task_show)
    sub.add_argument("id", metavar="ID")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = task_command("update", "change a task", cmd_task_update)
    sub.add_argument("id", metavar="ID")
    sub.add_argument("--status", metavar="S", help="one of " + ", ".join(TASK_STATUSES))
    sub.add_argument("--owner", metavar="O", help="the owner ('' unassigns)")
    sub.add_argument(
        "--blocked-by",
        metavar="ID",
        nargs="+",
        action="extend",
        default=[],
        help="add tasks that block this one",
    )
    sub.add_argument("--subject", metavar="S")
    sub.add_argument("--description", metavar="D")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = task_command("claim", "claim a task for an agent", cmd_task_claim)
    sub.add_argument("id", metavar="ID")
    sub.add_argument("--owner", metavar="NAME", required=True, help="the claiming agent")
    sub.add_argument(
        "--check-busy", action="store_true", help="fail if the agent owns another open task"
    )
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = task_command("delete", "delete a task", cmd_task_delete)
    sub.add_argument("id", metavar="ID")
    return {cmd_task_list, cmd_task_show}

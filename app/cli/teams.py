"""``teamdeck team create|list|show|delete``: the teams of a home.

Registered in ``app.cli.main`` by ``register``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli import format as fmt
from app.cli.home import resolve_team
from app.cli.output import emit_json, warning_line
from app.core.errors import TeamNotEmptyError

if TYPE_CHECKING:
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


def cmd_team_create(home: Home, args: argparse.Namespace) -> int:
    # From the CLI an existing name is an error; the lead's TeamCreate keeps the seeds' "-2".
    config = home.teams.create(args.name, description=args.description, dedupe=False)
    if not args.name.isascii():  # never a silent change: say what the name became
        warning_line(f"team name {args.name!r} was written as {config.name!r}")
    if args.json:
        emit_json(config.to_json_dict())
    else:
        print(f"created team {config.name}")
    return 0


def cmd_team_list(home: Home, args: argparse.Namespace) -> int:
    listing = home.teams.scan()
    if args.json:
        emit_json([c.to_json_dict() for c in listing.teams])
    elif listing.teams:
        print(fmt.team_table(listing.teams))
    else:
        print("no teams")
    for message in listing.errors.values():
        warning_line(message)
    return 0


def cmd_team_show(home: Home, args: argparse.Namespace) -> int:
    config = home.teams.require(resolve_team(home, args.name))
    if args.json:
        emit_json(config.to_json_dict())
    else:
        print(fmt.team_detail(config))
    return 0


def cmd_team_delete(home: Home, args: argparse.Namespace) -> int:
    name = resolve_team(home, args.name)
    try:
        removed = home.teams.delete(name, force=args.force)
    except TeamNotEmptyError as exc:
        raise TeamNotEmptyError(f"{exc} Pass --force to delete it anyway.") from None
    print(f"deleted team {name}")
    for path in removed:
        print(f"removed worktree {fmt.clean(path)}")
    return 0


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``team`` and its actions to the ``teamdeck`` parser; returns the read-only handlers."""
    team = command(commands, "team", "create, list, show and delete teams")
    actions = team.add_subparsers(dest="team_command", metavar="ACTION", required=True)
    sub = command(actions, "create", "create a team", cmd_team_create)
    sub.add_argument("name", metavar="NAME")
    sub.add_argument("--description", metavar="D")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command(actions, "list", "list the teams", cmd_team_list)
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command(actions, "show", "show a team and its members", cmd_team_show)
    sub.add_argument("name", metavar="NAME")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command(actions, "delete", "delete a team and its task list", cmd_team_delete)
    sub.add_argument("name", metavar="NAME")
    sub.add_argument("--force", action="store_true", help="delete even while teammates are members")
    return {cmd_team_list, cmd_team_show}

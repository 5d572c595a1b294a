"""``teamdeck diff AGENT [--team T]``: what an agent changed so far, file by file, as the
dashboard's ``d`` shows it: its worktree's changes (``--worktrees``), else the project's
changes since it joined (the last commit made before it joined is the base), untracked files
included; binary and large files in one line. ``--json`` prints the files as objects.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli import format as fmt
from app.cli.home import resolve_team
from app.cli.output import emit_json
from app.core.errors import NotFoundError, TeamdeckError

if TYPE_CHECKING:
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


def _team(home: Home, given: str | None) -> str:
    if given:
        return resolve_team(home, given)
    names = home.teams.names()
    if len(names) == 1:
        return names[0]
    if not names:
        raise NotFoundError("no team here: nothing to diff")
    raise TeamdeckError(f"{len(names)} teams here: name one with --team ({', '.join(names)})")


def cmd_diff(home: Home, args: argparse.Namespace) -> int:
    from app.runtime.review.diffs import work_diff

    team = _team(home, args.team)
    config = home.teams.require(team)
    member = config.member(args.agent)
    if member is None:
        raise NotFoundError(f"no member {args.agent!r} in team {team!r}")
    # The project is the lead's folder: a worktree teammate's own cwd is its worktree, whose
    # .git file is the teammate's to write (``work_diff`` checks it against the project's).
    lead = next((m for m in config.members if m.agent_id == config.lead_agent_id), None)
    where = (lead.cwd if lead is not None else None) if member.worktree_path else member.cwd
    project = Path(where) if where else Path.cwd()
    since = member.joined_at / 1000 if member.joined_at else None
    if member.worktree_path:
        files = work_diff(Path(member.worktree_path), since, project)
    else:
        files = work_diff(project, since)
    if args.json:
        emit_json([_file_json(f) for f in files])
        return 0
    if not files:
        print(f"{member.name} changed no file.")
    out = sys.stdout
    for diff in files:
        out.write(f"=== {fmt.clean(diff.summary)}\n")
        for line in diff.text.splitlines():
            out.write(fmt.clean(line) + "\n")  # a file's bytes never reach the terminal raw
    return 0


def _file_json(diff: Any) -> dict[str, Any]:
    return {
        "path": diff.path,
        "new": diff.new,
        "deleted": diff.deleted,
        "added": diff.added,
        "removed": diff.removed,
        "note": diff.note or None,
        "diff": diff.text,
    }


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``diff``; it only looks."""
    sub = command(commands, "diff", "what an agent changed so far, file by file", cmd_diff)
    sub.add_argument("agent", metavar="AGENT", help="the agent's name")
    sub.add_argument("--team", metavar="T", help="its team (default: the only team)")
    sub.add_argument("--json", action="store_true", help="print JSON")
    return {cmd_diff}

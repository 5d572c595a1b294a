"""What ``teamdeck`` prints when it has no command and no terminal to draw the dashboard on: a
short status of the home (its teams, their members, open tasks and unread messages), then the
help. An unreadable file is reported on one line, never a failure.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli import format as fmt
from app.cli.home import home_location, open_home
from app.cli.output import describe
from app.core.errors import TeamdeckError

if TYPE_CHECKING:
    from app.core.home import Home


def show_home_status(args: argparse.Namespace) -> None:
    """A short status of the home; unreadable files are reported on one line each."""
    root, is_claude = home_location(args)
    kind = " (Claude Code home, mkdir locks)" if is_claude else ""
    if not root.is_dir():
        print(f"home: {root}{kind} (not created yet)")
        return
    home = open_home(args)
    print(f"home: {home.root}{kind}")
    listing = home.teams.scan()
    names = sorted({c.name for c in listing.teams} | set(listing.errors))
    print(f"teams: {len(names)}")
    configs = {c.name: c for c in listing.teams}
    for name in names:
        if name in listing.errors:
            print(f"  {fmt.clean(name)}: error: {fmt.clean(listing.errors[name])}")
            continue
        for line in _team_status(home, name, len(configs[name].members)):
            print("  " + line)


def _team_status(home: Home, team: str, members: int) -> list[str]:
    errors: list[str] = []
    try:
        tasks, task_errors = home.tasks(team).scan()
        errors.extend(task_errors.values())
        open_tasks = str(sum(not t.is_resolved for t in tasks))
    except (TeamdeckError, OSError) as exc:
        errors.append(describe(exc))
        open_tasks = "?"
    box = home.mailbox(team)
    unread: list[str] = []
    try:
        agents = box.agents()
    except (TeamdeckError, OSError) as exc:
        errors.append(describe(exc))
        agents = []
    for agent in agents:
        try:
            unread.append(f"{fmt.clean(agent)} {len(box.unread(agent))}")
        except (TeamdeckError, OSError) as exc:
            errors.append(describe(exc))
            unread.append(f"{fmt.clean(agent)} ?")
    head = f"{fmt.clean(team)}: {members} member(s), {open_tasks} open task(s)"
    head += f"; unread: {', '.join(unread)}" if unread else "; no inboxes"
    return [head, *(f"  error: {fmt.clean(e)}" for e in errors)]

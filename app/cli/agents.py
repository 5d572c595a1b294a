"""``teamdeck agent`` / ``attach`` / ``ps``: teammates in processes of their own.

- ``teamdeck agent --team T --name N``: run member N of team T as a process of its own (the
  runtime's :mod:`app.runtime.agent_main`, which ``--teammate-mode process|tmux`` starts for
  each teammate; a person may run it by hand in another terminal, as with a Claude Code
  teammate).
- ``teamdeck attach [TEAM]``: open the dashboard on a team left running (the lead resumes).
- ``teamdeck ps [--json]``: the running teams and agents with their pids.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli import format as fmt
from app.cli.home import resolve_team
from app.cli.modes import BACKENDS
from app.cli.output import warning_line
from app.core.errors import NotFoundError
from app.runtime import agent_main
from app.runtime.sandbox.options import add_sandbox_options

if TYPE_CHECKING:
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


def add_teammate_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--teammate-mode",
        metavar="MODE",
        choices=BACKENDS,
        help="how teammates run: in-process (default; or the settings' teammateMode), "
        "process (an OS process each; the team outlives the dashboard) or tmux (a tmux window "
        "each, in session teamdeck-<team>)",
    )


def cmd_agent(home: Home, args: argparse.Namespace) -> int:
    """``teamdeck agent``: the runtime's teammate entry point, as ``python -m
    app.runtime.agent_main`` runs it."""
    return agent_main.run(home, args)


def cmd_attach(home: Home, args: argparse.Namespace) -> int:
    from app.dashboard.first_frame import announce_start, clear_start

    announce_start()  # on a terminal, until the dashboard takes the screen
    try:
        return _attach(home, args)
    finally:
        clear_start()  # already gone unless the dashboard failed to start


def _attach(home: Home, args: argparse.Namespace) -> int:
    from app.cli.history import run_options
    from app.cli.modes import resolve_sandbox
    from app.dashboard.launch import run_dashboard  # Textual loads only for the dashboard
    from app.runtime.permissions.settings import load_settings
    from app.runtime.runners.table import running_teams, team_backend
    from app.runtime.team.lead_state import check_no_other_lead

    if args.team:
        team = _resolve(home, args.team)
    else:
        running = running_teams(home)
        if not running:
            raise NotFoundError("no team is running here (teamdeck ps lists the agents)")
        if len(running) > 1:
            raise NotFoundError(
                f"{len(running)} teams are running ({', '.join(running)}): name one"
            )
        team = running[0]
    home.teams.require(team)
    check_no_other_lead(home, team)
    sandbox, warning = resolve_sandbox(args, load_settings(Path.cwd()).sandbox)
    if warning:
        warning_line(warning)
    return run_dashboard(
        home,
        team=team,
        attach=team,
        teammate_backend=team_backend(home, team),
        sandbox=sandbox,
        **run_options(args),
    )


def cmd_ps(home: Home, args: argparse.Namespace) -> int:
    from app.runtime.runners.table import agent_processes

    processes = agent_processes(home, _resolve(home, args.team) if args.team else None)
    if args.json:
        print(json.dumps([p.to_json() for p in processes], indent=2))
        return 0
    if not processes:
        print("no agent processes")
        return 0
    now = time.time()
    rows = [
        (
            p.team, p.name, p.backend, p.pid, "alive" if p.alive else "dead", p.status,
            f"{p.heartbeat_age:.0f}s ago", _uptime(now - p.started_at / 1000),
        )
        for p in processes
    ]  # fmt: skip
    print(fmt.table(("TEAM", "AGENT", "MODE", "PID", "STATE", "STATUS", "HEARTBEAT", "UP"), rows))
    return 0


def _uptime(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _resolve(home: Home, name: str) -> str:
    return resolve_team(home, name)


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add the three commands to the ``teamdeck`` parser; returns the read-only handlers."""
    from app.cli.history import add_run_options

    agent = command(commands, "agent", "run one teammate as a process of its own", cmd_agent)
    agent_main.add_options(agent)

    attach = command(commands, "attach", "open the dashboard on a team left running", cmd_attach)
    attach.add_argument("team", metavar="TEAM", nargs="?", help="default: the one running team")
    add_run_options(attach)
    add_sandbox_options(attach)

    ps = command(commands, "ps", "list running teams and agents with their pids", cmd_ps)
    ps.add_argument("--team", metavar="T", help="only this team")
    ps.add_argument("--json", action="store_true", help="print JSON")
    return {cmd_ps}

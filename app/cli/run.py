"""``teamdeck [tui]``, ``demo`` and ``run``: the commands that run a team, in the dashboard or
headless, and the options they share (approvals by the lead, permission and teammate modes,
history and budget, worktrees, the offline model's pace).

The dashboard (Textual) and the runtime load only when a command runs one, never to parse
arguments or print ``--help``. Registered in ``app.cli.main`` by ``register``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli import history as cli_history
from app.cli import modes as cli_modes
from app.cli.home import resolve_team
from app.cli.worktrees import add_worktrees_option, worktree_options

if TYPE_CHECKING:
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


def run_tui(
    home: Home,
    demo: bool,
    goal: str | None = None,
    *,
    lead_approves: bool = False,
    viewer: bool = False,
    modes: cli_modes.ModeOptions | None = None,
    team: str | None = None,
    **options: Any,
) -> int:
    """Run the dashboard (``demo``: the scripted team scenario; ``goal``: a first prompt for the
    lead; ``viewer``: watch the files only, e.g. a Claude Code home; ``team``: show this one)."""
    from app.dashboard.first_frame import announce_start, clear_start

    extra: dict[str, Any] = {"modes": modes} if modes is not None else {}
    if team:
        home.require_exists()
        extra["team"] = resolve_team(home, team)
        if not viewer and not demo and goal is None:
            extra.update(resume_options(home, extra["team"], modes))
    announce_start()  # on a terminal, until the dashboard takes the screen
    try:
        from app.dashboard.launch import run_dashboard  # Textual loads only for the dashboard

        result = run_dashboard(
            home,
            demo=demo,
            goal=goal,
            lead_approves=lead_approves,
            viewer=viewer,
            **extra,
            **options,
        )
    finally:
        clear_start()  # already gone unless the dashboard failed to start
    return int(result or 0)


def resume_options(home: Home, team: str, modes: cli_modes.ModeOptions | None) -> dict[str, Any]:
    """``teamdeck --team NAME`` on a team left on disk (or running): the dashboard's lead leads
    it again, as ``teamdeck attach`` does -- its tasks stay, its teammates that still run are
    adopted, the others leave it (their tasks back on the board, the lead told) -- so that a
    message to the lead carries on with this team instead of starting a new one. Teammates
    spawned from then on run as processes (tmux with ``--teammate-mode tmux``). Refused in one
    line while another dashboard leads the team."""
    from app.runtime.runners.table import team_backend
    from app.runtime.team.lead_state import check_no_other_lead

    check_no_other_lead(home, team)
    chosen = modes.teammate_backend if modes is not None else "in-process"
    backend = chosen if chosen != "in-process" else team_backend(home, team)
    return {"attach": team, "teammate_backend": backend}


def run_headless(
    home: Home,
    goal: str,
    json_output: bool,
    modes: cli_modes.ModeOptions | None = None,
    **options: Any,
) -> int:
    """Run a team on ``goal`` to completion without the UI (``options``: history, budget)."""
    from app.cli.headless import run_headless as run  # the SDK loads only to run a team

    extra = modes.runtime_kwargs() if modes is not None else {}
    result = run(home, goal, json_output=json_output, **extra, **options)
    import asyncio
    import inspect

    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    return int(result or 0)


def cmd_tui(home: Home, args: argparse.Namespace) -> int:
    modes = None if args.claude else cli_modes.options_for(args, headless=False)
    return run_tui(
        home,
        demo=False,
        lead_approves=args.lead_approves,
        viewer=bool(args.claude),
        modes=modes,
        team=getattr(args, "dashboard_team", None),
        notify=args.notify,
        **cli_history.run_options(args),
        **worktree_options(args),
    )


def cmd_demo(home: Home, args: argparse.Namespace) -> int:
    modes = cli_modes.options_for(args, headless=False, use_settings=False)
    return run_tui(
        home,
        demo=True,
        lead_approves=args.lead_approves,
        modes=modes,
        keep=args.keep,
        notify=args.notify,
        **cli_history.run_options(args),
        **worktree_options(args, demo=True),
    )


def cmd_run(home: Home, args: argparse.Namespace) -> int:
    if not args.goal.strip():
        raise ValueError("the goal must not be empty")
    if args.json and not args.headless:
        args.parser.error("--json needs --headless")
    args.goal = sized_goal(args.goal, args.teammates, args.tasks)
    modes = cli_modes.options_for(args, headless=args.headless)
    history = {**cli_history.run_options(args), **worktree_options(args)}
    if args.engine or args.spread:
        from app.cli.server import across_for

        history["across"] = across_for(home, args.engine, spread=args.spread)
        if args.headless and modes.teammate_backend == "in-process":
            modes.teammate_backend = "process"  # a remote teammate is seen through its log
    if args.headless:
        return run_headless(home, args.goal, args.json, modes, **history)
    return run_tui(
        home,
        demo=False,
        goal=args.goal,
        lead_approves=args.lead_approves,
        modes=modes,
        notify=args.notify,
        **history,
    )


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``tui``, ``demo`` and ``run`` to the ``teamdeck`` parser; none of them only looks."""
    tui = command(commands, "tui", "the dashboard (offline model when no API key)", cmd_tui)
    demo = command(commands, "demo", "the dashboard running a scripted team scenario", cmd_demo)
    run = command(commands, "run", "run a team on a goal", cmd_run)
    tui.add_argument(
        "--team",
        dest="dashboard_team",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="show this team (default: the newest; a picker when there are several)",
    )
    for sub in (tui, demo, run):
        sub.add_argument(
            "--lead-approves",
            action="store_true",
            help="the lead model decides plan and permission requests (default: you do)",
        )
        cli_modes.add_mode_options(sub)
        cli_history.add_run_options(sub)
        add_worktrees_option(sub)
        sub.add_argument(
            "--notify",
            metavar="URL",
            action="append",
            default=[],
            help="an apprise URL to call you on (a request waiting, the run's end, the budget "
            "at 80%%); repeatable; adds to the settings' notify.urls",
        )
        sub.add_argument(
            "--offline-pace",
            metavar="SPEC",
            type=_offline_pace,
            help="how fast the offline model answers: SECONDS per chunk (default 0.02), "
            "'realistic' (0.8 s to the first token, then 80 tokens/s) or TTFT,TPS",
        )
    demo.add_argument(
        "--keep",
        action="store_true",
        help="keep the demo's temporary home when it ends (and print where it is)",
    )
    run.add_argument("goal", metavar="GOAL", help="what the team should do")
    run.add_argument("--headless", action="store_true", help="run to completion without the UI")
    run.add_argument("--json", action="store_true", help="print JSON")
    run.add_argument(
        "--teammates", metavar="N", type=_size, help="how many teammates the lead makes"
    )
    run.add_argument("--tasks", metavar="M", type=_size, help="how many tasks the lead makes")
    run.add_argument(
        "--engine", metavar="URL", help="a team across machines: the PostgreSQL engine's URL"
    )
    run.add_argument(
        "--spread", action="store_true", help="spread the teammates over the joined machines"
    )
    return set()


#: The most teammates or tasks a run may be sized to (``--teammates``, ``--tasks``).
MAX_SIZE = 1000


def _size(value: str) -> int:
    """``--teammates``/``--tasks``: a whole number from 1 to ``MAX_SIZE`` (else usage)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if not 1 <= number <= MAX_SIZE:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_SIZE}, not {number}")
    return number


def sized_goal(goal: str, teammates: int | None, tasks: int | None) -> str:
    """The goal with the size asked for said in words, as a person would write it (the lead,
    offline or a real model, reads the size from the goal)."""
    parts = [f"{teammates} teammates" if teammates else "", f"{tasks} tasks" if tasks else ""]
    said = " and ".join(p for p in parts if p)
    return f"{goal.rstrip()} (use {said})" if said else goal


def _offline_pace(spec: str) -> str:
    """``--offline-pace``: checked at parse time (a bad spec is a usage error)."""
    from app.runtime.offline.pace import parse_pace

    try:
        parse_pace(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return spec


def export_pace(args: argparse.Namespace) -> None:
    """The ``--offline-pace`` given, for this run and the teammate processes it starts."""
    if getattr(args, "offline_pace", None):
        from app.runtime.offline.pace import export_pace as export

        export(args.offline_pace)  # read per request, and inherited by teammate processes

"""The ``teamdeck`` command: the dashboard, headless runs, and the team / task / inbox tools.

Every command works on one home: ``--home PATH`` (default ``$TEAMDECK_HOME``, else
``~/.teamdeck``) or ``--claude`` (Claude Code's own home, with its ``mkdir`` locks). Both are
accepted before or after the subcommand. Exit codes: 0 success, 1 a failed operation (one line
on stderr, ``teamdeck: error: ...``), 2 bad usage, 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from app import __version__
from app.cli import agents as cli_agents
from app.cli import approvals as cli_approvals
from app.cli import format as fmt
from app.cli import history as cli_history
from app.cli import modes as cli_modes
from app.cli.home import home_location, open_home, resolve_inbox_agent, resolve_team
from app.cli.worktrees import add_worktrees_option, worktree_options
from app.core.errors import NotFoundError, TeamdeckError, TeamNotEmptyError
from app.core.home import Home
from app.core.models import TASK_STATUSES, InboxMessage
from app.core.paths import USER_NAME, check_raw_name, strip_team_suffix
from app.core.tasks import ClaimResult, TaskList

PROG = "teamdeck"
SYNOPSIS = """commands:
  teamdeck [tui]                               the dashboard (offline model when no API key)
  teamdeck demo [--keep]                       the dashboard running a scripted team scenario
  teamdeck run GOAL --headless [--json]        run a team to completion without the UI
  teamdeck tui|demo|run --teammate-mode in-process|process|tmux
  teamdeck attach [TEAM] | ps [--json]         a team left running: open it again / list agents
  teamdeck agent --team T --name N             run one teammate as a process of its own
  teamdeck team create NAME [--description D] | list | show NAME | delete NAME [--force]
  teamdeck task create --team T SUBJECT [--description D] | list --team T [--all]
  teamdeck task show|delete --team T ID
  teamdeck task update --team T ID [--status S] [--owner O] [--blocked-by ID ...]
  teamdeck task claim --team T ID --owner NAME [--check-busy]
  teamdeck send --team T --to NAME [--from NAME] [--summary S] TEXT
  teamdeck inbox --team T --agent NAME [--unread] [--mark-read] | --clear
  teamdeck approvals [--team T] | approve ID [--always] [--feedback F] | reject ID [--feedback F]
  teamdeck history [--json] | show RUN | export RUN [-o FILE] | prune --older-than 30d

--home PATH / --claude may come before or after the command; --json prints JSON.
Exit status: 0 success, 1 failed operation, 2 bad usage."""
Handler = Callable[[Home, argparse.Namespace], int]


class ClaimFailedError(TeamdeckError):
    """``task claim`` lost: the task is owned, resolved, blocked, or the agent is busy."""


# ----------------------------------------------------------------------------- output


def emit_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def error_line(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def os_error_message(exc: OSError) -> str:
    text = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is not None:
        text += f": {exc.filename}"
    if exc.filename2 is not None:
        text += f" -> {exc.filename2}"
    return text


def describe(exc: Exception) -> str:
    """A failure as one line of text (an OSError as "strerror: filename")."""
    if isinstance(exc, OSError) and not isinstance(exc, TeamdeckError):
        return os_error_message(exc)
    return " ".join(str(exc).split()) or type(exc).__name__


# ----------------------------------------------------------------------------- dashboard, headless


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
    from app.dashboard.launch import run_dashboard  # Textual loads only for the dashboard

    extra: dict[str, Any] = {"modes": modes} if modes is not None else {}
    if team:
        home.require_exists()
        extra["team"] = resolve_team(home, team)
    return int(
        run_dashboard(
            home,
            demo=demo,
            goal=goal,
            lead_approves=lead_approves,
            viewer=viewer,
            **extra,
            **options,
        )
        or 0
    )


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
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    return int(result or 0)


# ----------------------------------------------------------------------------- status


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


# ----------------------------------------------------------------------------- commands


def cmd_tui(home: Home, args: argparse.Namespace) -> int:
    modes = None if args.claude else cli_modes.options_for(args, headless=False)
    return run_tui(
        home,
        demo=False,
        lead_approves=args.lead_approves,
        viewer=bool(args.claude),
        modes=modes,
        team=getattr(args, "dashboard_team", None),
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
        **cli_history.run_options(args),
        **worktree_options(args, demo=True),
    )


def cmd_run(home: Home, args: argparse.Namespace) -> int:
    if not args.goal.strip():
        raise ValueError("the goal must not be empty")
    if args.json and not args.headless:
        args.parser.error("--json needs --headless")
    modes = cli_modes.options_for(args, headless=args.headless)
    history = {**cli_history.run_options(args), **worktree_options(args)}
    if args.headless:
        return run_headless(home, args.goal, args.json, modes, **history)
    return run_tui(
        home,
        demo=False,
        goal=args.goal,
        lead_approves=args.lead_approves,
        modes=modes,
        **history,
    )


def cmd_team_create(home: Home, args: argparse.Namespace) -> int:
    # From the CLI an existing name is an error; the lead's TeamCreate keeps the seeds' "-2".
    config = home.teams.create(args.name, description=args.description, dedupe=False)
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
        print(f"{PROG}: warning: {fmt.clean(message)}", file=sys.stderr)
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
        print(f"{PROG}: warning: {fmt.clean(message)}", file=sys.stderr)
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


def cmd_send(home: Home, args: argparse.Namespace) -> int:
    team = resolve_team(home, args.team)
    text = sys.stdin.read().rstrip("\n") if args.text == "-" else args.text
    if not text.strip():
        raise ValueError("message text must not be empty")
    sender = args.sender.strip()
    check_raw_name(sender, "sender")
    config = home.teams.get(team)
    member = config.member(sender) if config else None
    fields: dict[str, Any] = {"from": member.name if member else sender, "text": text}
    if args.summary is not None:
        fields["summary"] = args.summary
    if member is not None and member.color:
        fields["color"] = member.color
    message = InboxMessage.model_validate(fields)
    delivered = home.mailbox(team).send(args.to, message)
    print(f"sent to {delivered} (team {team})")
    return 0


def cmd_inbox(home: Home, args: argparse.Namespace) -> int:
    box = home.mailbox(resolve_team(home, args.team))
    agent = resolve_inbox_agent(box, args.agent)
    if args.clear:  # the seeds' clearMailbox
        if args.unread or args.mark_read:
            args.parser.error("--clear cannot be combined with --unread or --mark-read")
        cleared = box.clear(agent)
        print(f"cleared the inbox of {agent}" if cleared else f"{agent} has no inbox")
        return 0
    shown = list(enumerate(box.read(agent)))
    if args.unread:
        shown = [(i, m) for i, m in shown if not m.read]
    if args.json:
        emit_json([fmt.message_json(i, m) for i, m in shown])
    elif shown:
        for index, message in shown:
            print(fmt.message_line(index, message, agent))
    else:
        print("no unread messages" if args.unread else "no messages")
    if args.mark_read:
        flipped = box.mark_read(agent, [i for i, m in shown if not m.read])
        if not args.json:
            print(f"marked {flipped} message(s) read")
    return 0


#: Commands that only look: on a home that does not exist they are an error, never a mkdir.
READ_ONLY: set[Handler] = {cmd_team_list, cmd_team_show, cmd_task_list, cmd_task_show, cmd_inbox}

# ----------------------------------------------------------------------------- parser


def _home_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``--home``/``--claude``; on subcommands they default to SUPPRESS so a value given before
    the subcommand is not overwritten."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--home",
        metavar="PATH",
        default=argparse.SUPPRESS if suppress else None,
        help="the home directory (default: $TEAMDECK_HOME, else ~/.teamdeck)",
    )
    group.add_argument(
        "--claude",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="use Claude Code's home ($CLAUDE_CONFIG_DIR, else ~/.claude)",
    )


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    _home_options(common, suppress=True)

    parser = argparse.ArgumentParser(
        prog=PROG,
        usage="%(prog)s [-h] [--version] [--home PATH | --claude] [COMMAND ...]",
        description="Run a team of Claude agents and steer it from a terminal dashboard.",
        epilog=SYNOPSIS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _home_options(parser, suppress=False)
    parser.add_argument(
        "--team", dest="dashboard_team", metavar="NAME", help="the dashboard shows this team"
    )
    parser.set_defaults(handler=None, parser=parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(
        group: argparse._SubParsersAction[argparse.ArgumentParser],
        name: str,
        help_text: str,
        handler: Handler | None = None,
    ) -> argparse.ArgumentParser:
        sub = group.add_parser(name, parents=[common], help=help_text, description=help_text)
        sub.set_defaults(handler=handler, parser=sub)
        return sub

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
    _json_option(run)

    team = command(commands, "team", "create, list, show and delete teams")
    team_commands = team.add_subparsers(dest="team_command", metavar="ACTION", required=True)
    sub = command(team_commands, "create", "create a team", cmd_team_create)
    sub.add_argument("name", metavar="NAME")
    sub.add_argument("--description", metavar="D")
    _json_option(sub)
    _json_option(command(team_commands, "list", "list the teams", cmd_team_list))
    sub = command(team_commands, "show", "show a team and its members", cmd_team_show)
    sub.add_argument("name", metavar="NAME")
    _json_option(sub)
    sub = command(team_commands, "delete", "delete a team and its task list", cmd_team_delete)
    sub.add_argument("name", metavar="NAME")
    sub.add_argument("--force", action="store_true", help="delete even while teammates are members")

    task = command(commands, "task", "create, list, update, claim and delete tasks")
    task_commands = task.add_subparsers(dest="task_command", metavar="ACTION", required=True)

    def task_command(name: str, help_text: str, handler: Handler) -> argparse.ArgumentParser:
        sub = command(task_commands, name, help_text, handler)
        sub.add_argument("--team", metavar="T", required=True, help="the team")
        return sub

    sub = task_command("create", "create a task", cmd_task_create)
    sub.add_argument("subject", metavar="SUBJECT")
    sub.add_argument("--description", metavar="D", default="")
    _json_option(sub)
    sub = task_command("list", "list the tasks", cmd_task_list)
    _json_option(sub)
    sub.add_argument("--all", action="store_true", help="include internal tasks")
    sub = task_command("show", "show one task", cmd_task_show)
    sub.add_argument("id", metavar="ID")
    _json_option(sub)
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
    _json_option(sub)
    sub = task_command("claim", "claim a task for an agent", cmd_task_claim)
    sub.add_argument("id", metavar="ID")
    sub.add_argument("--owner", metavar="NAME", required=True, help="the claiming agent")
    sub.add_argument(
        "--check-busy", action="store_true", help="fail if the agent owns another open task"
    )
    _json_option(sub)
    sub = task_command("delete", "delete a task", cmd_task_delete)
    sub.add_argument("id", metavar="ID")

    send = command(commands, "send", "send a message to a member's inbox", cmd_send)
    send.add_argument("--team", metavar="T", required=True)
    send.add_argument("--to", metavar="NAME", required=True, help="a member, team-lead or user")
    send.add_argument(
        "--from", dest="sender", metavar="NAME", default=USER_NAME, help="default: user"
    )
    send.add_argument("--summary", metavar="S")
    send.add_argument("text", metavar="TEXT", help="the message ('-' reads stdin)")

    cli_history.register(commands, command)

    inbox = command(commands, "inbox", "read an agent's inbox", cmd_inbox)
    inbox.add_argument("--team", metavar="T", required=True)
    inbox.add_argument("--agent", metavar="NAME", required=True)
    inbox.add_argument("--unread", action="store_true", help="only unread messages")
    inbox.add_argument("--mark-read", action="store_true", help="mark the shown messages read")
    inbox.add_argument("--clear", action="store_true", help="delete every message (clearMailbox)")
    _json_option(inbox)
    READ_ONLY.update(cli_approvals.register(commands, command))
    READ_ONLY.update(cli_agents.register(commands, command))
    return parser


def _offline_pace(spec: str) -> str:
    """``--offline-pace``: checked at parse time (a bad spec is a usage error)."""
    from app.runtime.offline.pace import parse_pace

    try:
        parse_pace(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return spec


# ----------------------------------------------------------------------------- entry point


def run_command(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser
    if args.claude and args.home is not None:
        parser.error("argument --claude: not allowed with argument --home")
    if args.home is not None and not args.home.strip():
        parser.error("argument --home: must not be empty")
    handler: Handler | None = args.handler
    if handler is None and sys.stdin.isatty() and sys.stdout.isatty():
        return run_tui(
            open_home(args),
            demo=False,
            viewer=bool(args.claude),
            team=getattr(args, "dashboard_team", None),
        )
    if handler is None:  # no terminal to draw on: a short status of the home and the help
        show_home_status(args)
        print()
        parser.print_help()
        return 0
    if getattr(args, "offline_pace", None):
        from app.runtime.offline.pace import export_pace

        export_pace(args.offline_pace)  # read per request, and inherited by teammate processes
    home = open_home(args)
    if handler in READ_ONLY:
        home.require_exists()  # looking never creates a home (nor folders at a mistyped path)
    return handler(home, args)


def main(argv: list[str] | None = None) -> int:
    """The ``teamdeck`` console script."""
    from app.runtime.model.credentials import hold_credentials  # light: no SDK import

    hold_credentials()  # the API key stays in this process, out of reach of child processes
    try:
        args = build_parser().parse_args(argv)
        return run_command(args)
    except SystemExit as exc:  # argparse: --help/--version (0) and bad usage (2)
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (TeamdeckError, ValueError, OSError) as exc:  # a failed operation: one line
        error_line(describe(exc))
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

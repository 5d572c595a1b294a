"""The ``teamdeck`` command: the dashboard, headless runs, and the team / task / inbox tools.

Every command works on one home: ``--home PATH`` (default ``$TEAMDECK_HOME``, else
``~/.teamdeck``) or ``--claude`` (Claude Code's own home, with its ``mkdir`` locks). Both are
accepted before or after the subcommand. Exit codes: 0 success, 1 a failed operation (one line
on stderr, ``teamdeck: error: ...``), 2 bad usage, 130 interrupted.

This module holds the parser, its global options, the dispatch and the exit codes; each family
of commands adds itself with a ``register(commands, command)`` of its own module (``run``,
``teams``, ``tasks``, ``inbox``, ``history``, ``approvals``, ``agents``, ``claude``), which
returns the handlers that only look. A command line that names its command imports and
registers only that command's family (``teamdeck team list`` never loads the runtime's
options); ``--help`` and a bare ``teamdeck`` register them all, so every output is the same
either way.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from app import __version__
from app.cli.home import open_home
from app.cli.output import MAX_ERROR_LINE, PROG, describe, error_line
from app.core.errors import TeamdeckError, clip

if TYPE_CHECKING:
    from app.core.home import Home

SYNOPSIS = """commands:
  teamdeck [tui]                               the dashboard (offline model when no API key)
  teamdeck demo [--keep]                       the dashboard running a scripted team scenario
  teamdeck run GOAL --headless [--json]        run a team to completion without the UI
  teamdeck tui|demo|run --teammate-mode in-process|process|tmux
  teamdeck tui|demo|run --permission-timeout SECONDS   deny unanswered ones (300; 0: wait)
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
  teamdeck claude setup [--project] [--remove | --status] | claude listen [--json]
  teamdeck hook EVENT                          what Claude Code's hooks run (see claude setup)
  teamdeck permissions check --tool NAME --input JSON [--mode M] [--allow R] [--deny R]
  teamdeck server init [--listen ADDRESS] | start | stop | status   a PostgreSQL engine
  teamdeck invite TEAM --name NAME [--machine M] | join URL   a teammate on another machine
  teamdeck run GOAL --engine URL [--spread]    lead a team across machines (the engine's desk)
  teamdeck sync --team T [--once]              keep this machine's files in step with the engine
  teamdeck diff AGENT [--team T] [--json]      what an agent changed so far, file by file
  teamdeck serve [--host H] [--port P] [COMMAND]   the dashboard in a browser, behind a token

--home PATH / --claude may come before or after the command; --json prints JSON.
Exit status: 0 success, 1 failed operation, 2 bad usage."""
Handler = Callable[["Home", argparse.Namespace], int]

#: Commands that only look: on a home that does not exist they are an error, never a mkdir.
READ_ONLY: set[Handler] = set()

#: The command families, in the order ``--help`` lists their commands: the module, its
#: register function, and the commands it adds (a test keeps these equal to what it adds).
FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("app.cli.run", "register", ("tui", "demo", "run")),
    ("app.cli.teams", "register", ("team",)),
    ("app.cli.tasks", "register", ("task",)),
    ("app.cli.inbox", "register_send", ("send",)),
    ("app.cli.history", "register", ("replay", "history")),
    ("app.cli.inbox", "register_inbox", ("inbox",)),
    ("app.cli.approvals", "register", ("approvals", "approve", "reject")),
    ("app.cli.agents", "register", ("agent", "attach", "ps")),
    ("app.cli.claude", "register", ("claude", "hook")),
    ("app.cli.permissions", "register", ("permissions",)),
    ("app.cli.server", "register", ("server", "invite", "join", "sync")),
    ("app.cli.diffs", "register", ("diff",)),
    ("app.cli.serve", "register", ("serve",)),
)
#: Global options that take a value (the command word comes after them).
_VALUE_OPTIONS = ("--home", "--team")

# ----------------------------------------------------------------------------- parser


class _Parser(argparse.ArgumentParser):
    """argparse's parser with usage errors as one line like every other error, named by the
    command that has them and cut (an unknown 5,000-character argument is echoed cut, with
    "…"): ``teamdeck task list: error: ... (teamdeck task list --help)``. An option no parser
    knows is reported as such before anything else (argparse would first complain that a
    required option is missing, or take ``--tema x``'s value for a command), with the closest
    known one suggested. The subcommands' parsers are of this class too (``add_subparsers``
    makes them of the parent's type)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False  # --headles is an error, never taken as --headless
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        typo = re.match(
            r"argument [A-Z]+: invalid choice: '([^']*)' \(choose from (.*)\)$", message
        )
        if typo is not None:  # a command word (an option's value keeps argparse's words)
            choices = re.findall(r"'([^']*)'", typo.group(2))
            close = difflib.get_close_matches(typo.group(1), choices, n=1)
            if close:
                message = f"unknown command {typo.group(1)!r}: did you mean {close[0]!r}?"
        line = clip(f"{self.prog}: error: {message}", MAX_ERROR_LINE)
        self.exit(2, f"{line} ({self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        tokens = list(sys.argv[1:] if args is None else args)
        unknown = unknown_option(self, tokens)
        if unknown is not None:
            self.error(unknown)
        return super().parse_known_args(tokens, namespace)


def unknown_option(parser: argparse.ArgumentParser, tokens: Sequence[str]) -> str | None:
    """The error for the first option in ``tokens`` that ``parser`` does not know (up to its
    command word, if it has commands: the command's own parser checks the rest), or None.
    A known option's value is skipped, whatever it looks like; ``--`` ends the options."""
    actions = parser._option_string_actions  # noqa: SLF001 - the options argparse matches
    commands = {
        name
        for action in parser._actions  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction)  # noqa: SLF001
        for name in action.choices
    }
    longs = [name for name in actions if name.startswith("--")]
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if token == "--" or token in commands:
            return None
        if not token.startswith("-") or token == "-" or token[1:2].isdigit():
            continue
        name, has_value = (token.split("=", 1)[0], "=" in token)
        if not name.startswith("--") and len(name) > 2:  # -oFILE
            name, has_value = name[:2], True
        action = actions.get(name)  # never a prefix: --headles is no --headless
        if action is None:
            close = difflib.get_close_matches(name, longs, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            return f"unknown option {name}{hint}"
        if not has_value and action.nargs != 0:
            position += 1  # its value, even one that starts with "-"
    return None


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


def command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (``team`` in ``--home H team list``), if it names a known one
    before anything else; None for ``--help``, ``--version``, no command, or anything unusual
    (then every family is registered, as argparse needs them to print help or an error)."""
    known = {name for _, _, names in FAMILIES for name in names}
    tokens = iter(argv)
    for token in tokens:
        if token in _VALUE_OPTIONS:
            next(tokens, None)
        elif token == "--claude" or token.startswith(tuple(f"{o}=" for o in _VALUE_OPTIONS)):
            continue
        else:
            return token if token in known else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``teamdeck`` parser: every command, or (``argv`` naming one) only its family's."""
    common = _Parser(add_help=False)
    _home_options(common, suppress=True)

    parser = _Parser(
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
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", prog=PROG)

    def command(
        group: argparse._SubParsersAction[argparse.ArgumentParser],
        name: str,
        help_text: str,
        handler: Handler | None = None,
    ) -> argparse.ArgumentParser:
        sub = group.add_parser(name, parents=[common], help=help_text, description=help_text)
        sub.set_defaults(handler=handler, parser=sub)
        return sub

    word = command_word(argv) if argv is not None else None
    for module, function, names in FAMILIES:
        if word is None or word in names:
            register = getattr(importlib.import_module(module), function)
            READ_ONLY.update(register(commands, command))
    return parser


# ----------------------------------------------------------------------------- entry point


def run_command(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser
    if args.claude and args.home is not None:
        parser.error("argument --claude: not allowed with argument --home")
    if args.home is not None and not args.home.strip():
        parser.error("argument --home: must not be empty")
    handler: Handler | None = args.handler
    if handler is None:  # no terminal to draw on: a short status of the home and the help
        from app.cli.status import show_home_status

        show_home_status(args)
        print()
        parser.print_help()
        return 0
    _team_before_the_command(args, parser)
    if getattr(args, "offline_pace", None):  # only the commands that run a team have it
        from app.cli.run import export_pace

        export_pace(args)
    home = open_home(args)
    if handler in READ_ONLY:
        home.require_exists()  # looking never creates a home (nor folders at a mistyped path)
    return handler(home, args)


def _team_before_the_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """``teamdeck --team T ps``: ``--team`` before a command that is not the dashboard's is
    that command's ``--team`` (it was dropped: ``--team nosuchteam ps`` listed every team and
    exited 0); a command with no team refuses it in one line."""
    team = getattr(args, "dashboard_team", None)
    if team is None or any(a.dest == "dashboard_team" for a in parser._actions):
        return  # none given, or the command is the dashboard's (it reads it)
    if not hasattr(args, "team"):
        parser.error(f"argument --team: {args.command} takes no team")
    if args.team is None:
        args.team = team
    elif args.team != team:
        parser.error(f"argument --team: given twice ({team}, {args.team})")


def main(argv: list[str] | None = None) -> int:
    """The ``teamdeck`` console script."""
    from app.runtime.model.credentials import hold_credentials  # light: no SDK import

    hold_credentials()  # the API key stays in this process, out of reach of child processes
    try:
        if argv is None:
            argv = sys.argv[1:]
        args = build_parser(argv).parse_args(argv)
        if args.handler is None and sys.stdin.isatty() and sys.stdout.isatty():
            # A bare ``teamdeck`` on a terminal is exactly ``teamdeck tui``: the same options'
            # defaults, sandbox, settings files' modes and rules.
            argv = [*argv, "tui"]
            args = build_parser(argv).parse_args(argv)
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

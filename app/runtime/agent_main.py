"""A teammate's entry point: ``python -P -m app.runtime.agent_main --team T --name N``.

This is what ``process`` and ``tmux`` mode start for each teammate (the fork server runs its
:func:`main` in a forked child), and what ``teamdeck agent`` runs: the CLI adds the same options
(:func:`add_options`) and hands them to the same :func:`run`, so both take the same options and
fail with the same one-line errors. What the process does once started is
:mod:`app.runtime.runners.teammate_process`.

Only light modules are imported here: the teammate lowers its priority (:func:`batch_priority`)
before it imports the model client and the runtime, a second of CPU that the dashboard should
not wait for.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import TeamdeckError
from app.core.paths import claude_home, default_home, existing_team
from app.runtime.sandbox.options import add_sandbox_options, sandbox_config

if TYPE_CHECKING:  # `teamdeck --help` adds this module's options without loading the files
    from app.core.home import Home

PROG = "teamdeck agent"
#: A folder: each teammate process writes its ``cProfile`` stats there (:func:`profiled`).
PROFILE_ENV = "TEAMDECK_PROFILE_DIR"


def add_options(parser: argparse.ArgumentParser) -> None:
    """A teammate's own options (``--home``/``--claude`` come from whoever builds ``parser``)."""
    parser.add_argument("--team", metavar="T", required=True)
    parser.add_argument("--name", metavar="N", required=True, help="a member of the team")
    parser.add_argument("--backend", choices=("process", "tmux"), default="process",
                        help=argparse.SUPPRESS)  # fmt: skip
    parser.add_argument("--offline", action="store_true", help="use the offline model")
    # The API credentials, handed over by the runtime (runners.handoff): never an env variable.
    parser.add_argument("--credentials-fd", metavar="N", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--credentials-socket", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--print", action="store_true", help="print the transcript as it goes")
    parser.add_argument("--permission-timeout", type=float, default=300.0,
                        help=argparse.SUPPRESS)  # fmt: skip
    parser.add_argument("--allow", metavar="RULE", action="append", default=[])
    parser.add_argument("--deny", metavar="RULE", action="append", default=[])
    add_sandbox_options(parser)


def run(home: Home, args: argparse.Namespace) -> int:
    """Run the teammate ``args`` name until it leaves; 0 after a shutdown, 1 otherwise."""
    import asyncio

    from app.runtime.runners.priority import batch_priority

    # first: the imports below are a second of CPU. A tmux window's session is the pane's,
    # which the person's tmux made: left at its weight.
    batch_priority(session=args.backend == "process")
    from app.core.authority import HANDOFF_ENTRY
    from app.runtime.model.credentials import hold, refuse_same_user_readers
    from app.runtime.runners.handoff import receive_fd, receive_socket
    from app.runtime.runners.teammate_process import find_member, run_agent

    # The credentials first: the channel is emptied and closed before anything else runs.
    received: dict[str, str] = {}
    if args.credentials_fd is not None:
        received = receive_fd(args.credentials_fd)
    elif args.credentials_socket:
        received = receive_socket(Path(args.credentials_socket))
    team_key = received.pop(HANDOFF_ENTRY, None)
    hold(received)
    if team_key:  # as private as the API key: no same-user reader of this process's memory
        refuse_same_user_readers()
    team = existing_team(home.layout, args.team)
    find_member(home, team, args.name)  # one line before anything is started
    with profiled(args.name):
        return asyncio.run(
            run_agent(
                home,
                team,
                args.name,
                backend=args.backend,
                offline=args.offline,
                allow=args.allow,
                deny=args.deny,
                permission_timeout=args.permission_timeout,
                print_to=sys.stdout if args.print else None,
                sandbox=sandbox_config(args),
                team_key=team_key,
            )
        )


@contextlib.contextmanager
def profiled(name: str) -> Iterator[None]:
    """With ``$TEAMDECK_PROFILE_DIR`` set, the run's main thread under ``cProfile``, its stats
    written to ``DIR/{name}.{pid}.prof`` at the end (set it for a ``bench/live.py --sizes`` run:
    where a teammate process spends its CPU; a sampling profiler does not follow the fork
    server's children). Unset, nothing is loaded."""
    folder = os.environ.get(PROFILE_ENV, "").strip()
    if not folder:
        yield
        return
    import cProfile
    import time

    profile = cProfile.Profile(time.process_time)  # CPU: a busy machine's waits are not work
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        with contextlib.suppress(OSError):
            profile.dump_stats(os.path.join(folder, f"{name}.{os.getpid()}.prof"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="run one teammate as a process of its own"
    )
    homes = parser.add_mutually_exclusive_group()
    homes.add_argument(
        "--home",
        metavar="PATH",
        help="the home directory (default: $TEAMDECK_HOME, else ~/.teamdeck)",
    )
    homes.add_argument(
        "--claude",
        action="store_true",
        help="use Claude Code's home ($CLAUDE_CONFIG_DIR, else ~/.claude)",
    )
    add_options(parser)
    return parser


def open_home(args: argparse.Namespace) -> Home:
    """The home ``--home``/``--claude`` select (as ``teamdeck`` opens it)."""
    from app.core.home import Home

    if args.claude:
        return Home(claude_home(), lock_style="mkdir")
    return Home(Path(args.home).expanduser() if args.home else default_home())


def describe(exc: Exception) -> str:
    """A failure as one line of text (an OSError as "strerror: filename")."""
    if isinstance(exc, OSError) and not isinstance(exc, TeamdeckError):
        text = exc.strerror or str(exc) or type(exc).__name__
        return f"{text}: {exc.filename}" if exc.filename is not None else text
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run one teammate; exit codes as ``teamdeck``'s: 0 after a shutdown, 1 a failure (one
    line on stderr, ``teamdeck: error: ...``), 2 bad usage, 130 interrupted."""
    from app.runtime.model.credentials import hold_credentials  # light: no SDK import

    hold_credentials()  # the API key stays in this process, out of reach of child processes
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.home is not None and not args.home.strip():
            parser.error("argument --home: must not be empty")
        return run(open_home(args), args)
    except SystemExit as exc:  # argparse: --help (0) and bad usage (2)
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        _error_line("interrupted")
        return 130
    except (TeamdeckError, ValueError, OSError) as exc:  # a failed operation: one line
        _error_line(describe(exc))
        return 1


def _error_line(message: str) -> None:
    with contextlib.suppress(OSError):
        print(f"teamdeck: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

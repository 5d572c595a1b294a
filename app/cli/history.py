"""``teamdeck history``: the runs kept in the archive, one run's timeline, export and prune.

    teamdeck history [--json]                 the runs, newest first
    teamdeck history show RUN [--json]        a run's agents, approvals and timeline
    teamdeck history export RUN [-o FILE]     the run as JSON Lines (stdout by default)
    teamdeck history prune --older-than 30d   delete finished runs older than that

RUN is a run id from the list, or ``last``. Registered in ``app.cli.main`` by ``register``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from app.cli import format as fmt
from app.core.errors import TeamdeckError

if TYPE_CHECKING:  # sqlite3 and the archive load when a history command runs, not for --help
    import sqlite3

    from app.archive import query
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


class HistoryError(TeamdeckError):
    """The archive cannot be read, or a run is unknown."""


def archive_path(home: Home, args: argparse.Namespace) -> Path:
    from app.archive.db import history_path

    return history_path(home.root, claude=bool(getattr(args, "claude", False)))


def _reader(home: Home, args: argparse.Namespace) -> sqlite3.Connection:
    from app.archive import query
    from app.archive.db import HistoryUnavailable

    try:
        return query.open_reader(archive_path(home, args))
    except HistoryUnavailable as exc:
        raise HistoryError(str(exc)) from None


def _run(conn: sqlite3.Connection, ref: str) -> query.RunSummary:
    from app.archive import query

    try:
        return query.resolve_run(conn, ref)
    except query.RunNotFound as exc:
        raise HistoryError(str(exc)) from None


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def cmd_history(home: Home, args: argparse.Namespace) -> int:
    import sqlite3

    from app.archive import query
    from app.archive.timeline import duration, run_cost, run_length, when

    if not archive_path(home, args).exists():
        if args.json:
            print("[]")
        else:
            print("no runs recorded yet")
        return 0
    conn = _reader(home, args)
    try:
        runs = query.list_runs(conn, limit=args.limit)
    except sqlite3.Error as exc:
        raise HistoryError(f"reading the history failed: {exc}") from None
    finally:
        conn.close()
    if args.json:
        print(json.dumps([r.to_json() for r in runs], indent=2, ensure_ascii=False))
        return 0
    if not runs:
        print("no runs recorded yet")
        return 0
    rows = [
        (
            r.id,
            r.team or "-",
            fmt.one_line(r.goal, 40) or "-",
            when(r.started_at)[:-4],
            duration(run_length(r)),
            r.outcome,
            r.agents,
            r.tasks_done,
            r.messages,
            _tokens(r.tokens),
            run_cost(r),
        )
        for r in runs
    ]
    headers = ("RUN", "TEAM", "GOAL", "STARTED (UTC)", "TIME", "OUTCOME", "AGENTS", "DONE")
    print(fmt.table((*headers, "MSGS", "TOKENS", "COST"), rows))
    return 0


def run_document(conn: sqlite3.Connection, run: query.RunSummary) -> dict[str, Any]:
    from app.archive import query
    from app.runtime.model.pricing import PRICES_DATE

    data = run.to_json()
    data["agents_detail"] = query.agents(conn, run.id)
    data["approvals"] = query.approvals(conn, run.id)
    data["prices"] = PRICES_DATE
    return data


def cmd_show(home: Home, args: argparse.Namespace) -> int:
    """The run, its events streamed from the archive as they are read (a run of any size
    prints in constant memory; the output is what building it whole would give)."""
    from app.archive import query
    from app.archive.timeline import event_line

    conn = _reader(home, args)
    try:
        run = _run(conn, args.run)
        document = run_document(conn, run)
        out = sys.stdout
        if args.json:
            _write_json(out, document, query.events(conn, run.id, by_time=True))
            return 0
        _write_head(out, run, document)
        total = query.count_events(conn, run.id)
        out.write(f"\ntimeline ({total} events):\n")
        for event in query.events(conn, run.id, by_time=True):
            offset = event.at - run.started_at
            out.write(f"  +{offset:8.2f}s  {fmt.clean(event_line(event))}\n")
    finally:
        conn.close()
    return 0


def _write_json(out: IO[str], document: dict[str, Any], events: Iterator[query.Event]) -> None:
    """``document`` with its ``events`` (the run's count) replaced by the list of events, as
    ``json.dumps(..., indent=2)`` writes it, the events written one at a time."""
    marker = "\x00the events\x00"
    text = json.dumps({**document, "events": marker}, indent=2, ensure_ascii=False)
    before, after = text.split(json.dumps(marker), 1)
    out.write(before + "[")
    first = True
    for event in events:
        item = json.dumps(event.to_json(), indent=2, ensure_ascii=False)
        out.write(("\n    " if first else ",\n    ") + item.replace("\n", "\n    "))
        first = False
    out.write(("]" if first else "\n  ]") + after + "\n")


def _write_head(out: IO[str], run: query.RunSummary, document: dict[str, Any]) -> None:
    """The run, its agents and approvals (``history show`` before the timeline)."""
    from app.archive.timeline import duration, run_cost, run_length, when
    from app.runtime.model.pricing import format_usd

    model = "offline model" if run.offline else (run.model or "-")
    out.write(
        f"run {run.id} · {run.source} · team {fmt.clean(run.team or '-')} · {run.outcome}"
        f" · {model} · {run_cost(run)}\n"
    )
    out.write(f"goal: {fmt.one_line(run.goal, 200) or '-'}\n")
    out.write(f"started {when(run.started_at)}, took {duration(run_length(run))}")
    if run.reason:
        out.write(f" ({fmt.one_line(run.reason, 120)})")
    out.write("\n")
    if run.budget_usd is not None:
        out.write(f"budget {format_usd(run.budget_usd)}\n")
    if document["agents_detail"]:
        out.write("\nagents:\n")
        agent_rows: list[tuple[object, ...]] = [
            (
                a["name"],
                a["agent_type"] or "-",
                a["mode"] or "-",
                when(a["spawned_at"])[11:19],
                when(a["exited_at"])[11:19] if a["exited_at"] else "-",
                a["exit_reason"] or "-",
                _tokens(a["input_tokens"] + a["output_tokens"]),
                "$0" if run.offline else format_usd(a["cost_usd"]),
            )
            for a in document["agents_detail"]
        ]
        headers = ("NAME", "TYPE", "MODE", "SPAWNED", "EXITED", "REASON", "TOKENS", "COST")
        out.write(_indent(fmt.table(headers, agent_rows)) + "\n")
    if document["approvals"]:
        out.write("\napprovals:\n")
        rows: list[tuple[object, ...]] = [
            (
                a["kind"],
                a["agent"],
                a["decision"] or "pending",
                a["decided_by"] or "-",
                fmt.one_line(a["feedback"] or "", 50) or "-",
            )
            for a in document["approvals"]
        ]
        table = fmt.table(("KIND", "AGENT", "DECISION", "BY", "FEEDBACK"), rows)
        out.write(_indent(table) + "\n")


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def write_export(conn: sqlite3.Connection, run: query.RunSummary, stream: IO[str]) -> int:
    """The run as JSON Lines: a ``run`` line, then one ``event`` line per event, in order."""
    from app.archive import query

    head = {"type": "run", **run_document(conn, run)}
    stream.write(json.dumps(head, ensure_ascii=False) + "\n")
    count = 0
    for event in query.events(conn, run.id, by_time=True):
        stream.write(json.dumps({"type": "event", **event.to_json()}, ensure_ascii=False) + "\n")
        count += 1
    return count


def cmd_export(home: Home, args: argparse.Namespace) -> int:
    conn = _reader(home, args)
    try:
        run = _run(conn, args.run)
        if args.output in (None, "-"):
            write_export(conn, run, sys.stdout)
            return 0
        target = Path(args.output).expanduser()
        # Written next to the target and renamed: an existing file is never left half-written.
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                count = write_export(conn, run, stream)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    finally:
        conn.close()
    print(f"exported run {run.id} ({count} events) to {fmt.clean(target)}", file=sys.stderr)
    return 0


def cmd_prune(home: Home, args: argparse.Namespace) -> int:
    from app.archive import query
    from app.archive.db import HistoryUnavailable

    age = query.parse_age(args.older_than)
    path = archive_path(home, args)
    if not path.exists():
        print("no runs recorded yet")
        return 0
    try:
        removed = query.prune(path, age)
    except HistoryUnavailable as exc:
        raise HistoryError(str(exc)) from None
    print(f"pruned {removed} run(s) older than {args.older_than}")
    return 0


def cmd_replay(home: Home, args: argparse.Namespace) -> int:
    """Open a finished run in the replay view (read-only)."""
    from app.archive import query
    from app.archive.replay import Replay

    path = archive_path(home, args)
    conn = _reader(home, args)
    try:
        try:
            replay = Replay.load(conn, args.run)
        except query.RunNotFound as exc:
            raise HistoryError(str(exc)) from None
    finally:
        conn.close()
    from app.dashboard.screens.replay import ReplayApp  # Textual loads only for the view

    ReplayApp(replay, history_path=path).run()
    return 0


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``history`` (and its actions) and ``replay`` to the CLI's subcommands; returns the
    read-only handlers (none)."""
    sub = command(commands, "replay", "play a recorded run back in the dashboard", cmd_replay)
    sub.add_argument("run", metavar="RUN", help="a run id from `teamdeck history`, or last")
    history = command(commands, "history", "the runs kept in the history", cmd_history)
    history.add_argument("--json", action="store_true", help="print JSON")
    history.add_argument("--limit", type=int, metavar="N", help="only the newest N runs")
    actions = history.add_subparsers(dest="history_command", metavar="ACTION")
    sub = command(actions, "show", "a run's agents, approvals and timeline", cmd_show)
    sub.add_argument("run", metavar="RUN", help="a run id from `teamdeck history`, or last")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub = command(actions, "export", "write a run as JSON Lines", cmd_export)
    sub.add_argument("run", metavar="RUN", help="a run id from `teamdeck history`, or last")
    sub.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    sub = command(actions, "prune", "delete finished runs older than an age", cmd_prune)
    sub.add_argument("--older-than", metavar="AGE", required=True, help="e.g. 30d, 12h, 2w")
    return set()


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """``--no-history`` and ``--budget`` on the commands that run a team."""
    parser.add_argument(
        "--no-history", action="store_true", help="do not record this run in the history"
    )
    parser.add_argument(
        "--budget",
        metavar="USD",
        type=_budget,
        help="stop starting model calls once the run has cost this many US dollars",
    )


def _budget(text: str) -> float:
    try:
        value = float(text.strip().lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount in US dollars") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: the budget must be more than $0")
    return value


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The history and budget options of a command that runs a team, for its runner."""
    options: dict[str, Any] = {"history": not getattr(args, "no_history", False)}
    if getattr(args, "budget", None) is not None:
        options["budget"] = args.budget
    if getattr(args, "claude", False):
        options["claude"] = True
    return options

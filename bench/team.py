"""An offline team working a big task list: wall time, runtime overhead, and bookkeeping checks.

    .venv/bin/python bench/team.py [--tasks 200] [--teammates 8] [--baseline-tasks N]
                                   [--lead policy|ack] [--time-limit S]

The team is built directly through the runtime API, with no goal for the lead: a
``TeamRuntime`` on the offline model (``TEAMDECK_OFFLINE_PACE=0``), ``home.teams.create`` +
``rt.team_created(team)``, ``--tasks`` tasks made with ``home.tasks(team).create`` (cycling
the offline teammate's actions: inventory, definitions, summarize over a small tmp dir of .py
files), then ``--teammates`` teammates spawned with ``rt.spawn_teammate(name, prompt)``. Idle
teammates claim the lowest available task themselves (busy-checked); the offline teammate
policy marks it in progress, checks the list, does its action with Glob/Grep/Read, marks it
completed and reports to team-lead with SendMessage.

Measured (clock starts just before the first spawn, stops when the last task is completed):

* wall time until every task is completed, and tasks/s;
* runtime overhead per model round, excluding the model: ``session.stats.overheads_ms()`` of
  every teammate (a round is one model response plus the tools it called; the overhead is
  tool execution plus the loop's bookkeeping) -- median and p95; target median <= 5 ms;
* model calls per completed task: the sum of ``snapshot.model_calls`` / tasks (teammates only,
  and with the lead).

Verified: no lost message (every ``Mailbox.append`` landed in its inbox, and every inbox entry
is ``read: true`` once the team is quiet), no task claimed twice (every successful claim is
recorded, through the two calls the runtime claims with: ``TaskList.claim_next``, an idle
teammate's, and ``TaskList.claim``, TaskUpdate's; a task must have exactly one claimant, who is
its final owner),
every task completed, and whether each task was worked with the action it asked for.

Baseline, in the same run: one teammate working sequentially on the same board. With today's
runtime the whole 200 would take ~3-4 minutes on their own, so by default it works the first
``--baseline-tasks`` (25) and the other tasks are created already completed (the board, and so
every scan of it and every TaskList result, is the same size as the team's). Reported: the
team's time to its first 25 completions against the baseline's, and a projected sequential
time for all tasks (a lower bound: a teammate's conversation, and so each of its model calls,
grows with every task). ``--baseline-tasks 200`` runs the full sequential baseline.

``--lead policy`` (default) answers the lead with the stock offline lead policy, which expects
to have created the team itself; ``--lead ack`` gives the lead a model that just acknowledges
its mail, to take the lead's behaviour out of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["TEAMDECK_OFFLINE_PACE"] = "0"

from app.core import Home  # noqa: E402
from app.core.mailbox import Mailbox  # noqa: E402
from app.core.paths import LEAD_NAME  # noqa: E402
from app.core.tasks import ClaimResult, TaskList  # noqa: E402
from app.runtime.agent.loop import TurnOutcome  # noqa: E402
from app.runtime.events import RuntimeEvent, TranscriptEntry  # noqa: E402
from app.runtime.model.client import make_client  # noqa: E402
from app.runtime.offline import (  # noqa: E402
    ModelRequest,
    ResponsePlan,
    estimate_tokens,
    reply,
    text,
)
from app.runtime.offline.policies import OfflineModel  # noqa: E402
from app.runtime.team.runtime import TeamRuntime  # noqa: E402

TEAM = "bench-team"
ACTIONS = ("inventory", "definitions", "summarize")
TARGET_OVERHEAD_MEDIAN_MS = 5.0
FILLER_OWNER = "earlier-team"  # owner of the tasks created completed (baseline board)
TICK = 0.010
QUIET_TIMEOUT = 15.0  # after the last completion: wait this long for idle agents + read inboxes
CLAIMED = re.compile(r"You claimed task #(\d+)")
ACTION_OF_TOOL = {"Grep": "definitions", "Read": "summarize"}


# ----------------------------------------------------------------------------- workspace


def make_workspace(root: Path, files: int = 12) -> Path:
    """A small tree of .py files with docstrings, functions and classes."""
    work = root / "work"
    for i in range(files):
        folder = work / ("pkg" if i % 2 else "tools")
        folder.mkdir(parents=True, exist_ok=True)
        body = [f'"""Module {i}: helpers for part {i} of the benchmark project."""', ""]
        for j in range(i % 4 + 1):
            body += [f"def func_{i}_{j}(x):", f"    return x + {j}", ""]
        body += [f"class Thing{i}:", "    pass", ""]
        (folder / f"mod{i}.py").write_text("\n".join(body), "utf-8")
    return work


# ----------------------------------------------------------------------------- instrumentation


class Ledger:
    """Every successful claim, every completion and every inbox append in this process, through
    class-level wrappers of the core API (installed for the duration of one run)."""

    def __init__(self, team: str) -> None:
        self.team = team
        self.claims: dict[str, set[str]] = collections.defaultdict(set)
        self.claim_attempts = 0
        self.claim_failures: collections.Counter[str] = collections.Counter()
        self.completed: dict[str, float] = {}
        self.appends: collections.Counter[str] = collections.Counter()
        self.on_complete: Callable[[int], None] = lambda n: None
        self._saved: list[tuple[type, str, Any]] = []

    def install(self) -> None:
        ledger = self
        claim, claim_next = TaskList.claim, TaskList.claim_next
        update, append = TaskList.update, Mailbox.append

        def record(tasks: TaskList, agent: str, result: ClaimResult | None) -> None:
            if tasks.team != ledger.team:
                return
            ledger.claim_attempts += 1
            if result is not None and result.success and result.task is not None:
                ledger.claims[str(result.task.id)].add(agent)
            else:
                reason = "none_available" if result is None else result.reason or "?"
                ledger.claim_failures[reason] += 1

        def claim_wrapper(tasks: TaskList, task_id: str, agent: str, **options: Any) -> ClaimResult:
            result = claim(tasks, task_id, agent, **options)
            record(tasks, agent, result)
            return result

        def claim_next_wrapper(tasks: TaskList, agent: str, **options: Any) -> ClaimResult | None:
            result = claim_next(tasks, agent, **options)  # an idle teammate's claim
            record(tasks, agent, result)
            return result

        def update_wrapper(tasks: TaskList, task_id: str, **fields: Any) -> Any:
            task = update(tasks, task_id, **fields)
            done = tasks.team == ledger.team and fields.get("status") == "completed"
            if done and str(task_id) not in ledger.completed:
                ledger.completed[str(task_id)] = time.perf_counter()
                ledger.on_complete(len(ledger.completed))
            return task

        def append_wrapper(box: Mailbox, agent: str, message: Any) -> None:
            append(box, agent, message)
            if box.team == ledger.team:
                ledger.appends[agent] += 1

        for owner, name, new in (
            (TaskList, "claim", claim_wrapper),
            (TaskList, "claim_next", claim_next_wrapper),
            (TaskList, "update", update_wrapper),
            (Mailbox, "append", append_wrapper),
        ):
            self._saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, new)

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()


class AckLead:
    """``--lead ack``: the lead's requests get a plain acknowledgement; teammates get the stock
    offline policy."""

    def __init__(self) -> None:
        self.stock = OfflineModel()

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        if "You are the team lead" in request.system_text:
            return reply(text("Noted."))
        return await self.stock.respond(request)


# ----------------------------------------------------------------------------- one run


@dataclass
class Result:
    label: str
    board: int  # tasks on the board
    work: int  # of which pending (the rest were created completed, as filler)
    teammates: int
    create_s: float = 0.0
    wall_s: float | None = None  # None: did not finish
    done_at: list[float] = field(default_factory=list)  # s from the first spawn, sorted
    completed: int = 0
    overheads: list[float] = field(default_factory=list)  # teammates, ms per model round
    rounds_total: int = 0  # model rounds run by teammates (stats keep at most 1,000 each)
    model_s: float = 0.0  # teammates' time in model calls (SDK + offline policy)
    overhead_s: float = 0.0
    stalls: list[float] = field(default_factory=list)  # ms a 10 ms ticker ran late
    biggest_conversation: int = 0  # chars of JSON
    lead_overheads: list[float] = field(default_factory=list)
    mate_calls: int = 0
    lead_calls: int = 0
    claimed_twice: list[str] = field(default_factory=list)
    owner_mismatch: list[str] = field(default_factory=list)
    claim_attempts: int = 0
    claim_failures: dict[str, int] = field(default_factory=dict)
    appended: int = 0
    in_files: int = 0
    unread: dict[str, int] = field(default_factory=dict)
    lost_appends: dict[str, int] = field(default_factory=dict)
    quiet: bool = False
    wrong_action: int = 0
    actions_checked: int = 0
    lead_turns_ended: int = 0
    lead_status: str = ""
    lead_errors: collections.Counter[str] = field(default_factory=collections.Counter)
    statuses: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def time_to(self, count: int) -> float | None:
        return self.done_at[count - 1] if 0 < count <= len(self.done_at) else None


def action_of(task_id: str) -> str:
    return ACTIONS[(int(task_id) - 1) % len(ACTIONS)]


def check_actions(transcripts: dict[str, list[TranscriptEntry]]) -> tuple[int, int]:
    """(episodes checked, episodes whose tools do not match the task's action): a teammate's
    transcript is cut at each "You claimed task #N" prompt."""
    episodes: list[tuple[str, set[str]]] = []
    for entries in transcripts.values():
        for entry in entries:
            if entry.kind == "user":
                found = CLAIMED.search(entry.text)
                if found:
                    episodes.append((found.group(1), set()))
            elif entry.kind == "tool_call" and episodes:
                episodes[-1][1].add(str(entry.data.get("tool", entry.text)))
    wrong = 0
    for task_id, tools in episodes:
        used = {ACTION_OF_TOOL[t] for t in tools if t in ACTION_OF_TOOL} or {"inventory"}
        if used != {action_of(task_id)}:
            wrong += 1
    return len(episodes), wrong


async def ticker(stalls: list[float], stop: asyncio.Event) -> None:
    """How late a 10 ms sleep wakes up: the time the event loop was blocked by synchronous
    work (file I/O, fsync, JSON) -- every agent, and the dashboard, wait that long."""
    while not stop.is_set():
        t0 = time.perf_counter()
        await asyncio.sleep(TICK)
        stalls.append(max(0.0, (time.perf_counter() - t0 - TICK) * 1000))


async def run_team(
    label: str,
    board: int,
    work: int,
    n_mates: int,
    lead: str,
    time_limit: float,
    *,
    ttft: float | None = None,
    tps: float | None = None,
    runtime_options: dict[str, Any] | None = None,
) -> Result:
    """Build the team through the runtime API and run it until ``work`` tasks are completed.

    ``ttft``/``tps``: the offline model's realistic pace (default pace 0); ``runtime_options``:
    more ``TeamRuntime`` arguments (e.g. how teammates run)."""
    result = Result(label, board, work, n_mates)
    root = Path(tempfile.mkdtemp(prefix="teamdeck-team-"))
    ledger = Ledger(TEAM)
    ledger.install()
    try:
        workdir = make_workspace(root)
        home = Home(root / "home")
        handler = AckLead() if lead == "ack" else OfflineModel()
        runtime = TeamRuntime(
            home,
            client=make_client(handler=handler, pace=0, ttft=ttft, tps=tps),
            cwd=workdir,
            decider="lead",
            headless=True,
            **(runtime_options or {}),
        )
        loop = asyncio.get_running_loop()
        all_done: asyncio.Future[float] = loop.create_future()

        def on_complete(count: int) -> None:
            if count >= work and not all_done.done():
                all_done.set_result(time.perf_counter())

        ledger.on_complete = on_complete
        transcripts: dict[str, list[TranscriptEntry]] = collections.defaultdict(list)

        def on_event(event: RuntimeEvent) -> None:
            if not isinstance(event, TranscriptEntry):
                return
            if event.agent == LEAD_NAME:
                if event.kind == "tool_result" and event.data.get("is_error"):
                    tool = str(event.data.get("tool"))
                    result.lead_errors[f"{tool}: {event.text[:60]}"] += 1
            elif event.kind in ("user", "tool_call"):
                transcripts[event.agent].append(event)

        def on_lead_turn(outcome: TurnOutcome) -> None:
            result.lead_turns_ended += 1

        runtime.subscribe(on_event)
        runtime.lead_turn_listeners.append(on_lead_turn)
        await runtime.start()
        try:
            config = home.teams.create(TEAM, description="team bench", cwd=str(workdir))
            runtime.team_created(config.name)
            tasks = home.tasks(config.name)
            t0 = time.perf_counter()
            for i in range(1, board + 1):
                action = ACTIONS[(i - 1) % len(ACTIONS)]
                tasks.create(
                    f"{action.capitalize()} batch {i}",
                    f"Batch {i} of the benchmark (action: {action}, files: **/*.py)",
                    active_form=f"Working on batch {i}",
                    **({} if i <= work else {"status": "completed", "owner": FILLER_OWNER}),
                )
            result.create_s = time.perf_counter() - t0
            await asyncio.sleep(0.5)  # let the creation events (in-process + inotify) pass

            stop = asyncio.Event()
            tick = asyncio.create_task(ticker(result.stalls, stop))
            start = time.perf_counter()
            for k in range(n_mates):
                await runtime.spawn_teammate(
                    f"worker-{k + 1}",
                    "You are a worker in the benchmark team. Take tasks from the shared task "
                    "list, do them, mark them completed and report to team-lead.",
                )
            try:
                finished = await asyncio.wait_for(asyncio.shield(all_done), time_limit)
                result.wall_s = finished - start
            except TimeoutError:
                result.notes.append(
                    f"timed out after {time_limit:g} s with {len(ledger.completed)}/{work} "
                    "tasks completed"
                )
            stop.set()
            await tick
            result.done_at = sorted(t - start for t in ledger.completed.values())
            result.quiet = await wait_quiet(runtime, config.name, QUIET_TIMEOUT)
            collect(result, runtime, home, config.name, ledger, transcripts)
        finally:
            await runtime.stop()
    finally:
        ledger.uninstall()
        shutil.rmtree(root, ignore_errors=True)
    return result


async def wait_quiet(runtime: TeamRuntime, team: str, within: float) -> bool:
    """Until every teammate is idle and no inbox holds an unread message (or ``within`` s)."""
    box = runtime.home.mailbox(team)
    deadline = time.perf_counter() + within
    while time.perf_counter() < deadline:
        idle = all(t.session.status == "idle" for t in runtime.teammates.values())
        if idle and not any(box.unread(agent) for agent in box.agents()):
            return True
        await asyncio.sleep(0.1)
    return False


def collect(
    result: Result,
    runtime: TeamRuntime,
    home: Home,
    team: str,
    ledger: Ledger,
    transcripts: dict[str, list[TranscriptEntry]],
) -> None:
    final = {t.id: t for t in home.tasks(team).list() if t.owner != FILLER_OWNER}
    result.completed = sum(1 for t in final.values() if t.status == "completed")
    for task_id, agents in ledger.claims.items():
        if len(agents) > 1:
            result.claimed_twice.append(f"#{task_id} by {', '.join(sorted(agents))}")
    for task_id, task in final.items():
        claimants = ledger.claims.get(task_id, set())
        if task.status == "completed" and (len(claimants) != 1 or task.owner not in claimants):
            result.owner_mismatch.append(f"#{task_id} owner {task.owner} claimants {claimants}")
    result.claim_attempts = ledger.claim_attempts
    result.claim_failures = dict(ledger.claim_failures)

    box = home.mailbox(team)
    for agent in sorted(set(box.agents()) | set(ledger.appends)):
        messages = box.read(agent)
        result.in_files += len(messages)
        unread = sum(1 for m in messages if not m.read)
        if unread:
            result.unread[agent] = unread
        if len(messages) != ledger.appends[agent]:
            result.lost_appends[agent] = ledger.appends[agent] - len(messages)
    result.appended = sum(ledger.appends.values())

    for teammate in runtime.teammates.values():
        session = teammate.session
        stats = session.stats
        result.overheads.extend(stats.overheads_ms())
        result.rounds_total += stats.turns
        result.model_s += sum(stats.model_seconds)
        result.overhead_s += sum(stats.overheads_ms()) / 1000
        result.mate_calls += session.snapshot.model_calls
        result.statuses[teammate.name] = session.status
        size = len(json.dumps(session.messages, ensure_ascii=False))
        result.biggest_conversation = max(result.biggest_conversation, size)
    for name, snapshot in runtime.departed.items():
        result.mate_calls += snapshot.model_calls
        result.statuses[name] = snapshot.status
    lead = runtime.lead_session
    result.lead_overheads = lead.stats.overheads_ms()
    result.lead_calls = lead.snapshot.model_calls
    result.lead_status = lead.status
    result.actions_checked, result.wrong_action = check_actions(transcripts)


# ----------------------------------------------------------------------------- report


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def verdict(flag: bool) -> str:
    return "PASS" if flag else "FAIL"


def secs(value: float | None) -> str:
    return "did not finish" if value is None else f"{value:.1f} s"


def report(team: Result, base: Result | None, lead: str) -> bool:
    w1, w2, w3 = 48, 20, 22
    runs = [r for r in (team, base) if r is not None]
    base_head = f"baseline: {base.teammates} teammate" if base else "baseline: skipped"
    head = f"{'measure':<{w1}} {f'team: {team.teammates} teammates':>{w2}} {base_head:>{w3}}"
    lead_text = "stock offline lead policy" if lead == "policy" else "lead only acknowledges"
    print()
    print(f"Offline team, {team.board} tasks on the board, pace 0, {lead_text}")
    print(f"{head}   {'target':<12} result")
    print("-" * (len(head) + 22))

    def row(name: str, a: str, b: str = "", target: str = "", result: str = "") -> None:
        print(f"{name:<{w1}} {a:>{w2}} {b:>{w3}}   {target:<12} {result}".rstrip())

    def both(fn: Callable[[Result], str]) -> tuple[str, str]:
        return fn(team), ("-" if base is None else fn(base))

    checks: dict[str, bool] = {}
    row("tasks on the board / to work", *both(lambda r: f"{r.board} / {r.work}"))
    row("create the tasks (s)", *both(lambda r: f"{r.create_s:.2f}"))
    row("wall time until the tasks to work are done", *both(lambda r: secs(r.wall_s)))
    row(
        "throughput (tasks/s)",
        *both(lambda r: f"{r.work / r.wall_s:.2f}" if r.wall_s else "-"),
    )
    if base is not None and base.wall_s and base.work < team.work:
        k = base.work
        team_k = team.time_to(k)
        row(f"time to the first {k} completions", secs(team_k), secs(base.wall_s))
        if team_k:
            row(f"team speed-up on the first {k}", f"{base.wall_s / team_k:.2f}x", "1.00x")
        projected = base.wall_s * team.work / k
        row(
            f"sequential time for all {team.work}, projected",
            "",
            f">= {projected:.0f} s",
        )
        if team.wall_s:
            row(
                f"team speed-up on all {team.work}, projected", f">= {projected / team.wall_s:.2f}x"
            )
    elif base is not None and base.wall_s and team.wall_s:
        row("team speed-up vs sequential", f"{base.wall_s / team.wall_s:.2f}x", "1.00x")
    med = pct(team.overheads, 0.5)
    checks["overhead"] = med <= TARGET_OVERHEAD_MEDIAN_MS
    row(
        "runtime overhead per model round, median (ms)",
        f"{med:.2f}",
        "-" if base is None else f"{pct(base.overheads, 0.5):.2f}",
        f"<= {TARGET_OVERHEAD_MEDIAN_MS:g} ms",
        verdict(checks["overhead"]),
    )
    row(
        "runtime overhead per model round, p95 (ms)",
        *both(lambda r: f"{pct(r.overheads, 0.95):.2f}"),
    )
    row("  model rounds sampled / run", *both(lambda r: f"{len(r.overheads)}/{r.rounds_total}"))
    row(
        "teammates' summed time: model calls / overhead (s)",
        *both(lambda r: f"{r.model_s:.1f} / {r.overhead_s:.1f}"),
    )
    row(
        "event loop lag: 10 ms tick late p50/p99 (ms)",
        *both(lambda r: f"{pct(r.stalls, 0.5):.1f} / {pct(r.stalls, 0.99):.0f}"),
    )
    row("  longest block (ms)", *both(lambda r: f"{max(r.stalls, default=0):.0f}"))
    row(
        "largest teammate conversation (~tokens)",
        *both(lambda r: f"{estimate_tokens(r.biggest_conversation):,}"),
    )
    row(
        "model calls per completed task (teammates)",
        *both(lambda r: f"{r.mate_calls / max(r.completed, 1):.2f}"),
    )
    row(
        "model calls per completed task (with lead)",
        *both(lambda r: f"{(r.mate_calls + r.lead_calls) / max(r.completed, 1):.2f}"),
    )
    row("lead model calls", *both(lambda r: str(r.lead_calls)))
    checks["completed"] = all(r.completed == r.work for r in runs)
    row(
        "tasks completed",
        *both(lambda r: f"{r.completed}/{r.work}"),
        "all",
        verdict(checks["completed"]),
    )
    checks["claims"] = all(not r.claimed_twice and not r.owner_mismatch for r in runs)
    row(
        "tasks claimed twice / owner != its claimant",
        *both(lambda r: f"{len(r.claimed_twice)} / {len(r.owner_mismatch)}"),
        "0 / 0",
        verdict(checks["claims"]),
    )
    row("claim attempts (failed)", *both(claim_text))
    checks["appends"] = all(not r.lost_appends for r in runs)
    row(
        "messages appended / found in inbox files",
        *both(lambda r: f"{r.appended} / {r.in_files}"),
        "equal",
        verdict(checks["appends"]),
    )
    checks["unread"] = all(not r.unread for r in runs)
    row(
        "messages still unread at the end",
        *both(lambda r: str(sum(r.unread.values()))),
        "0",
        verdict(checks["unread"]),
    )
    row("team quiet at the end (idle, all read)", *both(lambda r: "yes" if r.quiet else "NO"))
    row(
        "tasks worked with the action they ask for",
        *both(lambda r: f"{r.actions_checked - r.wrong_action}/{r.actions_checked}"),
    )
    row(
        "lead: turns ended / status at the end",
        *both(lambda r: f"{r.lead_turns_ended} / {r.lead_status}"),
    )
    print()
    for r in runs:
        details = list(r.notes)
        if r.claimed_twice:
            details.append("claimed twice: " + "; ".join(r.claimed_twice[:10]))
        if r.owner_mismatch:
            details.append("owner != claimant: " + "; ".join(r.owner_mismatch[:10]))
        if r.lost_appends:
            details.append(f"appends missing from inbox files: {r.lost_appends}")
        if r.unread:
            details.append(f"unread at the end: {r.unread}")
        not_idle = {n: s for n, s in r.statuses.items() if s != "idle"}
        if not_idle:
            details.append(f"teammates not idle at the end: {not_idle}")
        if r.wrong_action:
            details.append(
                f"{r.wrong_action} tasks were worked with another task's action (the offline "
                "teammate takes the action of the first task in its conversation)"
            )
        for error, count in r.lead_errors.most_common(3):
            details.append(f"lead tool error x{count}: {error}")
        if r.lead_turns_ended == 0 and r.lead_calls:
            details.append(
                f"the lead never ended a turn: {r.lead_calls} model calls in one turn, still "
                "running when the bench stopped"
            )
        if details:
            print(f"{r.label}:")
            for line in details:
                print(f"  - {line}")
    return all(checks.values())


def claim_text(r: Result) -> str:
    failed = sum(r.claim_failures.values())
    reasons = ",".join(f"{k}:{v}" for k, v in sorted(r.claim_failures.items()))
    return f"{r.claim_attempts} ({failed}{' ' + reasons if reasons else ''})"


# ----------------------------------------------------------------------------- main


async def run(args: argparse.Namespace) -> int:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load} (other work on the machine skews figures)")
    t0 = time.perf_counter()
    team = await run_team(
        "team", args.tasks, args.tasks, args.teammates, args.lead, args.time_limit
    )
    print(f"team run: {time.perf_counter() - t0:.1f} s", flush=True)
    base = None
    if args.baseline_tasks:
        t1 = time.perf_counter()
        base = await run_team(
            "baseline", args.tasks, args.baseline_tasks, 1, args.lead, args.time_limit
        )
        print(f"baseline run: {time.perf_counter() - t1:.1f} s", flush=True)
    passed = report(team, base, args.lead)
    return 0 if passed else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200, help="tasks on the board")
    parser.add_argument("--teammates", type=int, default=8)
    parser.add_argument(
        "--baseline-tasks",
        type=int,
        default=25,
        help="tasks the one-teammate baseline works, on the same board (the others are "
        "created completed); --tasks for the full sequential run, 0 skips it",
    )
    parser.add_argument("--lead", choices=("policy", "ack"), default="policy")
    parser.add_argument(
        "--time-limit", type=float, default=300.0, help="seconds per run before giving up"
    )
    args = parser.parse_args()
    if args.tasks < 1 or args.teammates < 1 or not 0 <= args.baseline_tasks <= args.tasks:
        parser.error("--tasks and --teammates must be >= 1, 0 <= --baseline-tasks <= --tasks")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())

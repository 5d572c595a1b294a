"""``teamdeck run GOAL --headless``: run the lead and its team to completion without the UI.

Exit 0 once the lead has ended a turn with the team shut down and deleted, or when the lead
answered the goal itself (no team created, nothing pending); 1 with a one-line reason otherwise
(an API error, a timeout, the budget reached: then the team is stopped first, as after SIGINT);
130 after SIGINT, once the team is stopped. The first line names
the model ("offline model" without credentials). Plain output is progress lines and then the
lead's final report; ``--json`` prints one JSON object per line: ``start`` (model), every
status change and message sent (with the parsed frame type), every team hook that ran
(``hook``: agent, hook_event_name, outcome ok | blocked | warning, command, message, task_id),
with ``--worktrees`` every teammate's worktree released (``worktree``: agent, path, branch,
removed, summary), ``report`` (the lead's final text, then the worktrees kept with changes) and
``done`` (exit code and reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from app.archive import start_run
from app.core import Home
from app.core.errors import TeamdeckError
from app.core.frame_text import describe, describe_hook
from app.core.paths import LEAD_NAME
from app.display.agent_text import shown
from app.runtime.events import (
    HookRan,
    MessageSent,
    RuntimeEvent,
    StatusChanged,
    TeamLifecycle,
    TurnOutcome,
    WorktreeReleased,
)
from app.runtime.model.budget import Budget, attach_budget, stop_line
from app.runtime.model.client import hold_credentials, is_offline
from app.runtime.team.runtime import TeamRuntime
from app.runtime.team.worktrees import kept_report

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT = 600.0
#: Seconds teammates get to answer a shutdown request after SIGINT before they are killed.
SHUTDOWN_GRACE = 3.0


def describe_message(event: MessageSent) -> str:
    """One readable line for a message: the dashboard feed's wording (frames by type)."""
    return describe(event.sender, event.recipient, event.text, event.summary).plain()


def event_json(event: RuntimeEvent) -> dict[str, Any] | None:
    if isinstance(event, StatusChanged):
        return {
            "event": "status",
            "agent": event.agent,
            "status": event.status,
            "detail": event.detail,
        }
    if isinstance(event, MessageSent):
        return {
            "event": "message",
            "team": event.team,
            "from": event.sender,
            "to": event.recipient,
            "type": event.frame_type or "message",
            "summary": event.summary,
            "text": event.text,
            "timestamp": event.timestamp,
        }
    if isinstance(event, TeamLifecycle):
        return {"event": f"team_{event.event}", "team": event.team}
    if isinstance(event, WorktreeReleased):
        return {
            "event": "worktree",
            "agent": event.agent,
            "path": event.path,
            "branch": event.branch,
            "removed": event.removed,
            "summary": event.summary,
        }
    if isinstance(event, HookRan):
        return {
            "event": "hook",
            "agent": event.agent,
            "hook_event_name": event.hook_event,
            "outcome": event.outcome,
            "command": event.command,
            "message": event.message,
            "task_id": event.task_id,
        }
    return None


def hook_line(event: HookRan) -> str | None:
    """The progress line for a hook that blocked or warned (one that passed prints nothing)."""
    if event.outcome == "ok":
        return None
    line = describe_hook(event.agent, event.hook_event, event.outcome, event.message, event.task_id)
    return f"  {line.plain()}"


async def run_team(
    home: Home,
    goal: str,
    *,
    json_output: bool = False,
    out: IO[str] | None = None,
    time_limit: float = DEFAULT_TIMEOUT,
    cwd: Path | None = None,
    shutdown_grace: float = SHUTDOWN_GRACE,
    history: bool = True,
    claude: bool = False,
    budget: float | Budget | None = None,
    **runtime_options: Any,
) -> tuple[int, str]:
    """Run ``goal`` to completion; returns (exit code, one-line reason).

    Success is either the team finished (shut down and deleted) or the lead answering the goal
    itself (a turn ending with no team ever created and nothing pending). SIGINT stops the
    team cleanly and returns 130.
    """
    stream = out or sys.stdout
    runtime = TeamRuntime(home, cwd=cwd, decider="lead", headless=True, **runtime_options)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[int, str]] = loop.create_future()
    team_deleted = False
    team_seen = False
    over_budget = False
    goal_team: str | None = None  # its kept worktrees are listed in the report

    def write(data: dict[str, Any] | None, line: str | None) -> None:
        if json_output:
            if data is not None:
                stream.write(json.dumps(data, ensure_ascii=False) + "\n")
        elif line is not None:  # agent text: escapes shown (the one display path)
            stream.write(shown(line) + "\n")
        stream.flush()

    def on_event(event: RuntimeEvent) -> None:
        nonlocal team_deleted, team_seen, goal_team
        if isinstance(event, TeamLifecycle):
            team_seen = True
            team_deleted = event.event == "deleted"
            goal_team = event.team
        line = None
        if isinstance(event, StatusChanged):
            detail = f" ({event.detail})" if event.detail else ""
            line = f"[{event.agent}] {event.status}{detail}"
        elif isinstance(event, MessageSent):
            line = f"  {describe_message(event)}"
        elif isinstance(event, TeamLifecycle):
            line = f"team {event.team} {event.event}"
        elif isinstance(event, HookRan):
            line = hook_line(event)
        elif isinstance(event, WorktreeReleased):
            line = f"  {event.agent}: {event.summary}"
        write(event_json(event), line)

    def finish(code: int, reason: str, report: str | None = None) -> None:
        if done.done():
            return
        if report:
            write({"event": "report", "agent": LEAD_NAME, "text": report}, report.rstrip())
        write({"event": "done", "code": code, "reason": reason}, None)
        done.set_result((code, reason))

    def on_turn(outcome: TurnOutcome) -> None:
        if outcome.error:
            finish(1, outcome.error, outcome.text or None)
        elif outcome.status == "interrupted":
            return
        elif team_deleted and not runtime.runners:
            pending.add(asyncio.ensure_future(finish_after_worktrees(outcome.text)))
        elif not team_seen and runtime.team is None and not runtime.lead.prompts:
            finish(0, "the lead answered without a team", outcome.text)
        elif (stranded := _stranded_work(runtime)) is not None:
            finish(1, stranded, outcome.text or None)

    pending: set[asyncio.Future[None]] = set()

    async def finish_after_worktrees(report: str) -> None:
        """The team finished: once its worktrees are released, report (kept ones listed)."""
        await runtime.worktrees.settle()
        kept = kept_report([k for k in runtime.worktrees.kept if k[0] == goal_team])
        finish(0, "team finished", "\n\n".join(p for p in (report, kept) if p) or None)

    def on_budget(gate: Budget, what: str) -> None:
        nonlocal over_budget
        if what == "warning":
            _warn(f"budget: {gate.describe()} spent")
        elif what == "stopped":
            over_budget = True
            finish(1, stop_line(gate))

    runtime.subscribe(on_event)
    runtime.lead_turn_listeners.append(on_turn)
    gate = attach_budget(budget, runtime)
    if gate is not None:
        gate.listeners.append(on_budget)
    interrupted = _on_sigint(loop, lambda: finish(130, "interrupted"))
    offline = is_offline(runtime.client)
    write(
        {"event": "start", "model": runtime.model_description, "offline": offline},
        f"teamdeck: {runtime.model_description}",
    )
    recorder = start_run(
        home,
        runtime,
        source="headless",
        goal=goal,
        enabled=history,
        claude=claude,
        warn=_warn,
        budget=gate.limit if gate else None,
    )
    code, reason = 1, "interrupted"
    try:
        await runtime.start()
        recorder.watch(runtime.watcher)
        runtime.submit(goal)
        try:
            async with asyncio.timeout(time_limit):
                code, reason = await asyncio.shield(done)
        except TimeoutError:
            code, reason = 1, f"timed out after {time_limit:g}s with the team still running"
        if code == 130:
            reason = await stop_team(runtime, shutdown_grace)
        elif over_budget and gate is not None:
            why = f"The run's budget was reached ({gate.describe()}): stop now."
            reason = await stop_team(runtime, shutdown_grace, why=why, headline=stop_line(gate))
    finally:
        interrupted()
        await runtime.stop()
        outcome = (
            "finished"
            if code == 0
            else "interrupted"
            if code == 130
            else "budget"
            if gate and gate.stopped
            else "failed"
        )
        await asyncio.to_thread(recorder.close, outcome, reason)
    return code, reason


def _stranded_work(runtime: TeamRuntime) -> str | None:
    """The lead ended a turn with its team's work pending and no teammate alive (all of them
    failed, say): nothing will ever wake it again, so the run ends (one line) instead of
    waiting forever. ``None`` while a teammate runs, a prompt waits, or nothing is pending."""
    team = runtime.team
    if team is None or runtime.runners or runtime.lead.prompts:
        return None
    try:
        tasks = runtime.home.tasks(team).list()
    except (TeamdeckError, OSError):
        return None
    open_ids = [f"#{t.id}" for t in tasks if not t.is_resolved]
    if not open_ids:
        return None
    shown = ", ".join(open_ids[:5]) + (", …" if len(open_ids) > 5 else "")
    return (
        f"no teammate is alive and {len(open_ids)} tasks are pending in team {team} ({shown}); "
        "the team's files are kept"
    )


async def stop_team(
    runtime: TeamRuntime,
    grace: float,
    *,
    why: str = "The run was interrupted (SIGINT): stop now.",
    headline: str = "interrupted",
) -> str:
    """After SIGINT (or the budget reached): interrupt the lead, ask every teammate to shut
    down (``why``), kill those still running after ``grace`` seconds (their unfinished tasks go
    back to pending). The team's files stay (nothing is lost); the line (``headline``, then what
    happened and where it is) says so. A teammate that cannot be asked or killed (gone
    meanwhile, its inbox unwritable) gets a warning line on stderr and the others go on."""
    runtime.interrupt(LEAD_NAME)
    team = runtime.team
    names = list(runtime.runners)
    for name in names:
        try:
            runtime.request_shutdown(name, why)
        except (TeamdeckError, OSError) as exc:
            _warn(f"could not ask {name} to shut down: {exc}")
    gone = asyncio.Event()

    def check(_event: object = None) -> None:
        if not runtime.runners:
            gone.set()

    unsubscribe = runtime.subscribe(check)
    check()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(grace):
            await gone.wait()
    unsubscribe()
    killed = list(runtime.runners)
    for name in killed:
        try:
            runtime.kill(name)
        except (TeamdeckError, OSError) as exc:
            _warn(f"could not kill {name}: {exc}")
    await asyncio.sleep(0)
    if not team:
        return f"{headline} (no team was created)"
    pending = 0
    with contextlib.suppress(TeamdeckError, OSError):
        pending = sum(1 for t in runtime.home.tasks(team).list() if t.status == "pending")
    stopped = f"{counted(len(names) - len(killed), 'teammate')} shut down, {len(killed)} killed"
    return (
        f"{headline}: {stopped}; team {team} kept with {counted(pending, 'pending task')} "
        f"(delete it with `teamdeck team delete {team}`)"
    )


def counted(number: int, noun: str) -> str:
    """``1 pending task``, ``3 pending tasks``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _on_sigint(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> Callable[[], None]:
    """Route the first SIGINT to ``callback`` (a second one interrupts as usual); returns the
    undo. Does nothing where signals cannot be handled (not the main thread, Windows)."""

    def remove() -> None:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (RuntimeError, ValueError) as exc:  # the loop is closing: Python's default stays
            log.debug("SIGINT handler not removed: %s", exc)

    def first() -> None:
        remove()
        callback()

    try:
        loop.add_signal_handler(signal.SIGINT, first)
    except (NotImplementedError, RuntimeError, ValueError):
        return lambda: None
    return remove


def _warn(line: str) -> None:
    print(f"teamdeck: warning: {line}", file=sys.stderr, flush=True)


def run_headless(home: Home, goal: str, json_output: bool = False, **options: Any) -> int:
    """Entry point for the CLI (``options``: history, claude, budget, and ``TeamRuntime``
    keywords, e.g. modes): exit 0 on success, 1 with one line on failure, 130 on SIGINT."""
    hold_credentials()
    code, reason = asyncio.run(run_team(home, goal, json_output=json_output, **options))
    if code == 130:
        print(f"teamdeck: {reason}", file=sys.stderr)
    elif code != 0:
        print(f"teamdeck: error: {reason}", file=sys.stderr)
    return code

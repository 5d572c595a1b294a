"""``teamdeck run GOAL --headless``: run the lead and its team to completion without the UI.

Exit 0 once the lead has ended a turn with the team shut down and deleted; non-zero with a
one-line reason otherwise (an API error, a timeout, a lead that stopped with the team alive).
Plain output is progress lines; ``--json`` prints one JSON object per line for every status
change and every message sent (with the parsed frame type).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import IO, Any

from app.archive import start_run
from app.core import Home
from app.core.frame_text import describe
from app.runtime.budget import Budget, attach_budget, stop_line
from app.runtime.events import MessageSent, RuntimeEvent, StatusChanged, TeamLifecycle
from app.runtime.loop import TurnOutcome
from app.runtime.team import TeamRuntime

DEFAULT_TIMEOUT = 600.0


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
    return None


async def run_team(
    home: Home,
    goal: str,
    *,
    json_output: bool = False,
    out: IO[str] | None = None,
    time_limit: float = DEFAULT_TIMEOUT,
    cwd: Path | None = None,
    history: bool = True,
    claude: bool = False,
    budget: float | Budget | None = None,
    **runtime_options: Any,
) -> tuple[int, str]:
    """Run ``goal`` to completion; returns (exit code, one-line reason)."""
    stream = out or sys.stdout
    runtime = TeamRuntime(home, cwd=cwd, decider="lead", headless=True, **runtime_options)
    done: asyncio.Future[tuple[int, str]] = asyncio.get_running_loop().create_future()
    team_deleted = False

    def on_event(event: RuntimeEvent) -> None:
        nonlocal team_deleted
        if isinstance(event, TeamLifecycle) and event.event == "deleted":
            team_deleted = True
        if json_output:
            data = event_json(event)
            if data is not None:
                stream.write(json.dumps(data, ensure_ascii=False) + "\n")
        elif isinstance(event, StatusChanged):
            detail = f" ({event.detail})" if event.detail else ""
            stream.write(f"[{event.agent}] {event.status}{detail}\n")
        elif isinstance(event, MessageSent):
            stream.write(f"  {describe_message(event)}\n")
        elif isinstance(event, TeamLifecycle):
            stream.write(f"team {event.team} {event.event}\n")
        stream.flush()

    def on_turn(outcome: TurnOutcome) -> None:
        if done.done():
            return
        if outcome.status == "error":
            done.set_result((1, outcome.error or "the lead's turn failed"))
        elif team_deleted and not runtime.teammates:
            if not json_output and outcome.text:
                stream.write(outcome.text.rstrip() + "\n")
            done.set_result((0, "team finished"))

    def on_budget(gate: Budget, what: str) -> None:
        if what == "warning":
            _warn(f"budget: {gate.describe()} spent")
        elif what == "stopped" and not done.done():
            done.set_result((1, stop_line(gate)))

    runtime.subscribe(on_event)
    runtime.lead_turn_listeners.append(on_turn)
    gate = attach_budget(budget, runtime)
    if gate is not None:
        gate.listeners.append(on_budget)
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
    await runtime.start()
    recorder.watch(runtime.watcher)
    runtime.submit(goal)
    code, reason = 1, "interrupted"
    try:
        code, reason = await asyncio.wait_for(done, time_limit)
    except TimeoutError:
        code, reason = 1, f"timed out after {time_limit:g}s with the team still running"
    finally:
        await runtime.stop()
        outcome = "finished" if code == 0 else "budget" if gate and gate.stopped else "failed"
        await asyncio.to_thread(recorder.close, outcome, reason)
    return code, reason


def _warn(line: str) -> None:
    print(f"teamdeck: warning: {line}", file=sys.stderr, flush=True)


def run_headless(home: Home, goal: str, json_output: bool = False, **options: Any) -> int:
    """Entry point for the CLI (``options``: history, claude, budget, and ``TeamRuntime``
    keywords, e.g. modes)."""
    code, reason = asyncio.run(run_team(home, goal, json_output=json_output, **options))
    if code != 0:
        print(f"teamdeck: error: {reason}", file=sys.stderr)
    return code

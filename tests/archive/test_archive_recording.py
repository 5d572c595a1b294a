"""Recording runs: a whole offline headless run, other processes' writes, truncation, usage."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from typing import Any

from app.archive import start_run
from app.archive.recorder import Recorder
from app.archive.rows import TEXT_LIMIT
from app.cli.headless import run_team
from app.core import Home, InboxMessage
from app.core.watch import Watcher
from app.runtime.events import RuntimeEvent, TranscriptEntry, UsageChanged
from tests.archive.conftest import rows
from tests.timing import scaled

GOAL = "Summarize what the Python files in this folder do"
GUARD = 60.0


async def test_a_whole_offline_run_ends_in_the_archive(home: Home, project: Path) -> None:
    seen: list[RuntimeEvent] = []
    out = io.StringIO()

    code, reason = await asyncio.wait_for(
        run_team(home, GOAL, cwd=project, time_limit=GUARD, out=out), GUARD + 5
    )
    assert (code, reason) == (0, "team finished")
    del seen

    [run] = rows(
        home,
        "SELECT id, team, goal, source, outcome, reason, ended_at, offline, agents, messages,"
        " tasks_done, events, input_tokens + output_tokens + cache_read_tokens"
        " + cache_write_tokens, cost_usd FROM runs",
    )
    run_id, team, goal, source, outcome, why, ended, offline, agents, messages, done, events = run[
        :12
    ]
    tokens, cost = run[12:]
    assert (goal, source, outcome, why, offline) == (GOAL, "headless", "finished", reason, 1)
    assert team and ended is not None
    assert (agents, done) == (4, 3)
    assert cost == 0 and tokens > 0

    kinds = {k for (k,) in rows(home, "SELECT DISTINCT kind FROM events")}
    assert {"status", "message", "task", "approval", "transcript", "usage", "team"} <= kinds
    assert events == rows(home, "SELECT count(*) FROM events")[0][0]

    # Every agent with its spawn and exit; teammates left through a shutdown.
    members = rows(
        home,
        "SELECT name, agent_type, color, spawned_at, exited_at, exit_status, exit_reason"
        " FROM agents WHERE run_id = ? ORDER BY spawned_at",
        run_id,
    )
    assert members[0][:2] == ("team-lead", "team-lead")
    for name, agent_type, color, spawned, exited, status, exit_reason in members[1:]:
        assert agent_type and color and spawned is not None, name
        assert exited is not None and exited >= spawned
        assert (status, exit_reason) == ("completed", "shut down")

    # Every message, with its frame type, once (the runtime's event and the inbox file agree).
    frames = [f for (f,) in rows(home, "SELECT frame FROM events WHERE kind = 'message'")]
    assert len(frames) == messages
    for frame in ("plan_approval_request", "plan_approval_response", "shutdown_request"):
        assert frame in frames
    assert frames.count("shutdown_approved") == 3
    assert "idle_notification" in frames
    keys = rows(home, "SELECT count(DISTINCT key), count(*) FROM events WHERE kind = 'message'")
    assert keys[0][0] == keys[0][1]

    # Every task change: pending -> in_progress -> completed, with the owner.
    changes: dict[str, list[str]] = {}
    for task_id, status, data in rows(
        home, "SELECT target, frame, data FROM events WHERE kind = 'task' ORDER BY id"
    ):
        changes.setdefault(str(task_id), []).append(str(status))
        assert json.loads(str(data))["new"] == status
    assert set(changes) == {"1", "2", "3"}
    for history in changes.values():
        assert history[0] == "pending" and history[-1] == "completed"
        assert "in_progress" in history

    # Approvals asked and answered: who, when, decision.
    approvals = rows(
        home,
        "SELECT kind, agent, asked_at, answered_at, decision, decided_by FROM approvals",
    )
    kinds_asked = sorted(a[0] for a in approvals)
    assert kinds_asked == ["plan", "shutdown", "shutdown", "shutdown"]
    for kind, agent, asked, answered, decision, by in approvals:
        assert asked is not None and answered is not None and answered >= asked
        assert decision == "approved"
        assert by == ("team-lead" if kind == "plan" else agent)

    # Transcript entries of every kind, tool calls with their input.
    entry_kinds = {k for (k,) in rows(home, "SELECT frame FROM events WHERE kind='transcript'")}
    assert {"user", "assistant", "tool_call", "tool_result"} <= entry_kinds
    [(data,)] = rows(
        home,
        "SELECT data FROM events WHERE kind = 'transcript' AND frame = 'tool_call'"
        " AND target = 'TeamCreate'",
    )
    assert json.loads(str(data))["input"]["team_name"]

    # One usage row per model call; the sums match the run's totals.
    calls = rows(
        home,
        "SELECT count(*), sum(input_tokens + output_tokens + cache_read_tokens"
        " + cache_write_tokens), sum(cost_usd) FROM model_calls WHERE run_id = ?",
        run_id,
    )
    assert calls[0][0] > 4 and calls[0][1] == tokens and calls[0][2] == 0
    # The offline model's calls name no Claude model (``history show`` said "model call
    # claude-sonnet-5-5" for the offline model, issue 30).
    assert {m for (m,) in rows(home, "SELECT DISTINCT model FROM model_calls")} == {"offline"}
    assert {f for (f,) in rows(home, "SELECT DISTINCT frame FROM events WHERE kind='usage'")} == {
        "offline"
    }


async def test_usage_is_recorded_per_call_from_cumulative_counts(home: Home) -> None:
    recorder = start_run(home, None, source="headless", goal="g")
    assert isinstance(recorder, Recorder)
    recorder.model = "claude-sonnet-5-5"
    recorder.on_event(UsageChanged("team-lead", 100, 10, 0, 1000, 0, 1))
    recorder.on_event(UsageChanged("team-lead", 150, 30, 1000, 1200, 2, 2))
    recorder.on_event(UsageChanged("team-lead", 150, 30, 1000, 1200, 3, 2))  # tools only
    recorder.close("finished")
    calls = rows(
        home,
        "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd"
        " FROM model_calls ORDER BY event_id",
    )
    assert [c[:4] for c in calls] == [(100, 10, 0, 1000), (50, 20, 1000, 200)]
    first = (100 * 2 + 10 * 10 + 1000 * 2.5) / 1e6
    second = (50 * 2 + 20 * 10 + 1000 * 0.10 + 200 * 2.5) / 1e6
    assert calls[0][4] == __import__("pytest").approx(first)
    assert calls[1][4] == __import__("pytest").approx(second)
    [(cost,)] = rows(home, "SELECT cost_usd FROM runs")
    assert cost == __import__("pytest").approx(first + second)


async def test_long_texts_are_truncated_with_their_size(home: Home) -> None:
    recorder = start_run(home, None, source="headless")
    big = "x" * (TEXT_LIMIT * 3)
    recorder.on_event(TranscriptEntry("worker", "tool_result", big, {"tool": "Read"}))
    recorder.close("finished")
    [(text, size, tool)] = rows(home, "SELECT text, size, target FROM events")
    assert len(str(text)) == TEXT_LIMIT and size == len(big) and tool == "Read"


async def test_other_processes_messages_and_task_changes_are_recorded(
    home: Home, tmp_path: Path
) -> None:
    team = home.teams.create("Outside", description="").name
    home.tasks(team).create("Write the report")
    recorder = start_run(home, None, source="attach")
    assert isinstance(recorder, Recorder)
    recorder.set_team(team)
    watcher = Watcher(home)
    recorder.watch(watcher)
    await watcher.start()
    try:
        other = Home(home.root)  # another process: its writes reach us only through the disk
        other.mailbox(team).append("team-lead", InboxMessage(sender="user", text="hello there"))
        other.tasks(team).update("1", status="in_progress", owner="team-lead")

        def recorded() -> bool:
            recorder.flush()
            kinds = [k for (k,) in rows(home, "SELECT kind FROM events")]
            return "message" in kinds and "task" in kinds

        deadline = time.monotonic() + scaled(20)
        while not recorded():
            assert time.monotonic() < deadline, "other process's writes never recorded"
            await asyncio.sleep(0.1)
    finally:
        await watcher.stop()
        recorder.close("stopped")
    [(sender, recipient, text)] = rows(
        home, "SELECT agent, target, text FROM events WHERE kind = 'message'"
    )
    assert (sender, recipient, text) == ("user", "team-lead", "hello there")
    tasks = rows(home, "SELECT target, frame, agent FROM events WHERE kind = 'task'")
    assert tasks[-1] == ("1", "in_progress", "team-lead")


def _kinds(items: list[Any]) -> list[str]:
    return [type(i).__name__ for i in items]

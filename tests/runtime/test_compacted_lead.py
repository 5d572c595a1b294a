"""A lead whose conversation was compacted still ends its team.

A long run (100 teammates, 300 tasks) compacts the lead's conversation, and the turns that
spawned the team go with it. The offline lead then knew no teammate: with every task done it
asked nobody to shut down and waited for ever (the run never ended). It now takes the board's
owners and the mail's senders as its team once it reads the compaction's note."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli.headless import run_team
from app.core import Home
from app.runtime.agent import compaction, loop
from app.runtime.offline import roll_call
from tests.runtime.conftest import HANG_GUARD


def test_the_offline_lead_reads_the_compaction_note_by_its_words() -> None:
    messages = [{"role": "user", "content": "x" * 50}, {"role": "assistant", "content": "y"}]
    messages += [{"role": "user", "content": "z" * 50}]
    original = compaction.COMPACT_AT, compaction.KEEP
    compaction.COMPACT_AT, compaction.KEEP = 10, 10
    try:
        assert compaction.compact(messages) == 2
    finally:
        compaction.COMPACT_AT, compaction.KEEP = original
    assert roll_call.DROPPED in messages[0]["content"][0]["text"]


async def test_a_compacted_lead_asks_its_whole_team_to_shut_down(
    home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lead's conversation is compacted after a few turns: its spawns are dropped early.
    monkeypatch.setattr(compaction, "COMPACT_AT", 12_000)
    monkeypatch.setattr(compaction, "KEEP", 6_000)
    dropped_spawns: list[str] = []

    def compact(messages: list[dict[str, Any]], *measure: compaction.MessageSizes) -> int:
        before = _spawns(messages)
        cut = compaction.compact(messages, *measure)
        dropped_spawns.extend(sorted(before - _spawns(messages)))
        return cut

    monkeypatch.setattr(loop, "compact", compact)
    out = io.StringIO()
    goal = "Describe the python files in this project (use 4 teammates and 16 tasks)"
    code, reason = await asyncio.wait_for(
        run_team(home, goal, cwd=project, time_limit=60, out=out, json_output=True),
        HANG_GUARD + 60,
    )
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert dropped_spawns, "no spawn was compacted away: the test tests nothing"
    assert code == 0, reason
    asked = {
        e.get("to") or e.get("recipient")
        for e in events
        if e["event"] == "message" and "shutdown" in json.dumps(e)
    }
    assert {f"worker-{i}" for i in range(1, 5)} <= asked, asked


def _spawns(messages: list[dict[str, Any]]) -> set[str]:
    """The ids of the ``Task`` calls (spawns) in a conversation."""
    return {
        block["id"]
        for m in messages
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_use" and block.get("name") == "Task"
    }

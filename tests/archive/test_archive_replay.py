"""Replay of an archived run (state at any point, feed, transcripts) and search over it."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from app.archive import connect
from app.archive.replay import CHECKPOINT, Replay, Search, State
from app.cli.headless import run_team
from app.core import Home


async def recorded_run(home: Home, project: Path) -> Replay:
    code, _ = await asyncio.wait_for(
        run_team(home, "Summarize the files", cwd=project, out=io.StringIO()), 60
    )
    assert code == 0
    conn = connect(home.root / "history.db")
    try:
        return Replay.load(conn, "last")
    finally:
        conn.close()


async def test_state_at_any_point_matches_a_replay_from_the_start(
    home: Home, project: Path, monkeypatch: object
) -> None:
    replay = await recorded_run(home, project)
    assert len(replay) > 50
    final = replay.state_at(len(replay))
    assert {t.status for t in final.tasks.values()} == {"completed"}
    assert {a.status for n, a in final.agents.items() if n != "team-lead"} == {"completed"}
    assert final.tokens > 0 and final.cost == 0

    start = replay.state_at(0)
    assert start.tasks == {} and {a.status for a in start.agents.values()} == {"not started"}
    # Every point equals applying the events one by one from the start (checkpoints are right).
    for position in (1, len(replay) // 3, len(replay) // 2, len(replay) - 1):
        direct = State()
        direct.agents = {
            n: type(a)(n, a.color, a.agent_type, "not started") for n, a in start.agents.items()
        }
        for event in replay.events[:position]:
            direct.apply(event)
        got = replay.state_at(position)
        assert got.tasks == direct.tasks and got.agents == direct.agents, position
    # The feed holds exactly the messages sent before the point.
    middle = len(replay) // 2
    feed = replay.feed(middle)
    assert all(e.kind == "message" for e in feed)
    assert len(feed) == sum(1 for e in replay.events[:middle] if e.kind == "message")
    assert replay.transcript("team-lead", middle)[-1].id < replay.events[middle].id
    # Times map to positions.
    assert replay.position_at(replay.run.started_at - 1) == 0
    assert replay.position_at(replay.events[-1].at) == len(replay)


def test_checkpoints_are_used_for_long_runs() -> None:
    assert CHECKPOINT >= 100


async def test_search_filters_by_text_sender_and_frame(home: Home, project: Path) -> None:
    replay = await recorded_run(home, project)
    search = Search(replay.events)
    assert len(search.hits("")) == len(replay)
    shutdowns = search.hits("shutdown_request")
    frames = {i for i, e in enumerate(replay.events) if e.frame == "shutdown_request"}
    assert frames and frames <= set(shutdowns)
    assert all("shutdown_request" in json.dumps(replay.events[i].to_json()) for i in shutdowns)
    by_writer = search.hits("writer")
    assert any(replay.events[i].agent == "writer" for i in by_writer)
    # Typing narrows, deleting widens again, case does not matter.
    narrow = search.hits("writer plan")
    assert set(narrow) <= set(by_writer)
    assert search.hits("WRITER") == by_writer
    assert search.hits("no such words anywhere") == []

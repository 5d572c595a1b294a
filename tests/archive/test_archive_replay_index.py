"""The replay's index kept in the archive (issue 21): a replay opened from it answers exactly
as a walk over the whole run does, at every position, for a closed run, a run recorded in two
parts, a run split by a second goal, a live run that grew after its index was stored, and an
archive written before the index existed.

The checkpoints are made every few events here (``CHECKPOINT`` patched), so a run of a few
hundred events has dozens of stored segments and every position lands at a different distance
from one."""

from __future__ import annotations

import bisect
import copy
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.archive import Recorder, connect, query, replay_walk, start_run
from app.archive.query import Event
from app.archive.replay import Replay, Search, State
from app.archive.replay_state import AgentState
from app.archive.writer import Writer
from app.core import Home
from app.runtime.events import (
    MessageSent,
    StatusChanged,
    TeamLifecycle,
    TranscriptEntry,
    UsageChanged,
)

EVERY = 7
AGENTS = ("worker-1", "worker-2", "worker-3")
STATUSES = ("running", "idle", "waiting", "completed")


@pytest.fixture(autouse=True)
def small_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay_walk, "CHECKPOINT", EVERY)


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many events each ``Replay.load`` walked (the ones it did not find in the index)."""
    counts: list[int] = []
    original = replay_walk.Walk._index

    def index(self: replay_walk.Walk, rows: Any) -> None:
        rows = list(rows)
        counts.append(len(rows))
        original(self, rows)

    monkeypatch.setattr(replay_walk.Walk, "_index", index)
    return counts


def record(recorder: Recorder, start: int, count: int) -> None:
    """``count`` steps of a busy team: statuses, messages, transcript entries, model calls,
    tasks created, claimed, finished and deleted, an agent no ``agents`` row knows, and a
    status without a frame (it keeps the agent's status)."""
    team = recorder.team
    assert team is not None
    tasks = recorder.home.tasks(team)
    for n in range(start, start + count):
        agent = AGENTS[n % len(AGENTS)]
        recorder.on_event(StatusChanged(agent, STATUSES[n % 4], f"step {n}"))  # type: ignore[arg-type]
        recorder.on_event(TranscriptEntry(agent, "assistant", f"Line {n}\nsecond line", {}))
        recorder.on_event(
            TranscriptEntry(agent, "tool_call", "", {"tool": "read", "input": {"path": f"f{n}"}})
        )
        recorder.on_event(UsageChanged(agent, 100 * n, 10 * n, 5 * n, n, n, n))
        recorder.on_event(
            MessageSent(team, agent, "team-lead", f"done {n}", f"s{n}", None, f"t{n:06d}")
        )
        if n % 5 == 0:
            task = tasks.create(f"Task {n}")
            tasks.claim(task.id, agent, status="in_progress")
            if n % 10 == 0:
                tasks.update(task.id, status="completed")
            if n % 15 == 0:
                tasks.delete(task.id)
        if n == 18:
            recorder.on_event(StatusChanged("reviewer", "running", "at last"))
        if n % 11 == 0:
            at = recorder.clock()

            def odd(
                conn: sqlite3.Connection, n: int = n, at: float = at, rows: Any = recorder.rows
            ) -> None:
                rows.event(conn, at, "status", agent="ghost", frame="running", text=f"g{n}")
                rows.event(conn, at, "status", agent="team-lead", frame="", text=f"l{n}")

            recorder.writer.submit(odd)


def new_run(home: Home) -> Recorder:
    team = home.teams.create("Index", description="").name
    recorder = start_run(home, None, source="headless", goal="index")
    assert isinstance(recorder, Recorder)
    recorder.on_event(StatusChanged("team-lead", "running"))
    # An agent the events name before any status: "not started" until its first one.
    recorder.on_event(TranscriptEntry("reviewer", "assistant", "Reading first", {}))
    recorder.on_event(UsageChanged("reviewer", 10, 1, 0, 0, 0, 1))
    recorder.set_team(team)
    return recorder


def load(home: Home, run_id: int, walked: list[int] | None = None) -> Replay:
    if walked is not None:
        walked.clear()  # the writer's walks (it indexes as it writes) are not the replay's
    conn = query.open_reader(home.root / "history.db")
    try:
        return Replay.load(conn, str(run_id))
    finally:
        conn.close()


def segments(home: Home, run_id: int) -> int:
    conn = connect(home.root / "history.db")
    try:
        sql = "SELECT count(*) FROM replay_segments WHERE run_id = ?"
        return int(conn.execute(sql, (run_id,)).fetchone()[0])
    finally:
        conn.close()


def reference(home: Home, run_id: int) -> tuple[list[Event], list[dict[str, Any]]]:
    conn = connect(home.root / "history.db")
    try:
        return list(query.events(conn, run_id)), query.agents(conn, run_id)
    finally:
        conn.close()


def states(events: list[Event], agents: list[dict[str, Any]]) -> Iterator[State]:
    """The state after each number of events, applying them one by one from the start."""
    state = State()
    for info in agents:
        name = info["name"]
        state.agents[name] = AgentState(
            name, info.get("color"), info.get("agent_type"), "not started"
        )
    yield copy.deepcopy(state)
    for event in events:
        if event.kind in ("status", "usage", "transcript", "task"):
            state.apply(event)
        else:
            state.position += 1
        yield copy.deepcopy(state)


def assert_same_as_a_walk(replay: Replay, home: Home) -> None:
    """Every answer of ``replay`` is the one the run's events give, at every position."""
    events, agents = reference(home, replay.run.id)
    assert len(replay) == len(events)
    assert list(replay.ids) == [e.id for e in events]
    times = [e.at for e in events]
    for position, expected in enumerate(states(events, agents)):
        got = replay.state_at(position)
        assert got == expected, position
        assert list(got.agents) == list(expected.agents), position
        assert list(got.tasks) == list(expected.tasks), position
        if position % 5 == 0 or position == len(events):
            before = events[:position]
            feed = [e.to_json() for e in before if e.kind == "message"][-200:]
            assert [e.to_json() for e in replay.feed(position)] == feed, position
            for agent in (*AGENTS, "team-lead", "ghost", "reviewer"):
                mine = [e.id for e in before if e.kind == "transcript" and e.agent == agent]
                got_ids = [e.id for e in replay.transcript(agent, position, limit=20)]
                assert got_ids == mine[-20:], (position, agent)
        assert replay.time_at(position) == (
            times[position - 1] if position else replay.run.started_at
        )
    for at in [replay.run.started_at - 1, *times[::3], times[-1] + 1]:
        assert replay.position_at(at) == bisect.bisect_right(times, at)
    for words in ("", "done 1", "worker-2 read", "ghost", "no such thing"):
        assert Search(replay.events).hits(words) == Search(events).hits(words), words


def test_a_closed_run_opens_from_its_index(home: Home, walked: list[int]) -> None:
    recorder = new_run(home)
    record(recorder, 1, 40)
    recorder.close("finished", "done")
    run_id = recorder.run_id
    replay = load(home, run_id, walked)
    assert len(replay) > 20 * EVERY
    assert segments(home, run_id) == len(replay) // EVERY
    assert walked == [len(replay) % EVERY]  # only the events after the last stored segment
    assert replay.final.tasks and "ghost" in replay.final.agents
    assert replay.final.agents["team-lead"].status == "running"
    assert replay.state_at(EVERY * 3).agents["reviewer"].status == "not started"
    assert_same_as_a_walk(replay, home)


def test_a_run_recorded_in_two_parts(home: Home, walked: list[int]) -> None:
    """The first recorder stops without closing the run (its process ended); a second one
    goes on recording the same run, from the index the first stored."""
    first = new_run(home)
    record(first, 1, 15)
    first.writer.close()
    stored = segments(home, first.run_id)
    assert stored
    writer = Writer(connect(home.root / "history.db"), home.root / "history.db")
    second = Recorder(writer, first.run_id, home)
    second.watch_home()
    second.set_team(first.team)
    record(second, 16, 15)
    second.close("finished", "done")
    replay = load(home, first.run_id, walked)
    assert segments(home, first.run_id) == len(replay) // EVERY > stored
    assert walked == [len(replay) % EVERY]
    assert_same_as_a_walk(replay, home)


def test_a_live_run_that_grew_after_its_index_was_stored(home: Home, walked: list[int]) -> None:
    """A replay opened while the run is recorded plays to the last committed event; the events
    after the stored index (the writer's index stopped here) are walked, only those."""
    recorder = new_run(home)
    record(recorder, 1, 12)
    assert recorder.flush()
    early = load(home, recorder.run_id, walked)
    assert_same_as_a_walk(early, home)
    stored = segments(home, recorder.run_id)
    recorder.rows.index.stop()  # the index goes no further: the run grows past it
    record(recorder, 13, 12)
    assert recorder.flush()
    replay = load(home, recorder.run_id, walked)
    assert segments(home, recorder.run_id) == stored
    assert walked == [len(replay) - stored * EVERY] and len(replay) > len(early)
    assert_same_as_a_walk(replay, home)
    recorder.close("finished", "done")


def test_a_second_goal_moves_events_out_of_the_stored_index(home: Home) -> None:
    """The events of the next goal leave the first run once they are indexed: both runs
    still replay exactly."""
    recorder = new_run(home)
    team = recorder.team
    assert team is not None
    record(recorder, 1, 10)
    recorder.on_event(TeamLifecycle(team, "deleted"))
    recorder.on_event(TranscriptEntry("team-lead", "user", "the next goal", {"source": "person"}))
    for n in range(3 * EVERY):
        recorder.on_event(StatusChanged("team-lead", STATUSES[n % 4], f"next {n}"))  # type: ignore[arg-type]
    assert recorder.flush()
    first = recorder.run_id
    recorder.on_event(TeamLifecycle(team, "created"))
    record(recorder, 11, 10)
    recorder.close("finished", "done")
    assert recorder.run_id != first
    for run_id in (first, recorder.run_id):
        replay = load(home, run_id)
        assert segments(home, run_id) == len(replay) // EVERY
        assert_same_as_a_walk(replay, home)


def test_an_archive_from_before_the_index_replays_in_full(
    home: Home, walked: list[int], tmp_path: Path
) -> None:
    """A schema-3 archive (no index) is upgraded when opened and its runs are walked in full,
    with the same answers; ``teamdeck history show`` reads it too."""
    from app.cli import main as cli

    recorder = new_run(home)
    record(recorder, 1, 20)
    recorder.close("finished", "done")
    conn = connect(home.root / "history.db")
    conn.execute("DROP TABLE replay_segments")
    conn.execute("PRAGMA user_version = 3")
    conn.close()
    replay = load(home, recorder.run_id, walked)
    assert walked == [len(replay)]
    assert segments(home, recorder.run_id) == 0
    assert_same_as_a_walk(replay, home)
    assert cli.main(["--home", str(home.root), "history", "show", str(recorder.run_id)]) == 0


def test_an_index_that_no_longer_matches_is_not_used(home: Home, walked: list[int]) -> None:
    recorder = new_run(home)
    record(recorder, 1, 10)
    recorder.close("finished", "done")
    conn = connect(home.root / "history.db")
    conn.execute(
        "DELETE FROM events WHERE id = (SELECT min(id) FROM events WHERE run_id = ?)",
        (recorder.run_id,),
    )
    conn.close()
    replay = load(home, recorder.run_id, walked)
    assert walked == [len(replay)]
    assert_same_as_a_walk(replay, home)


def test_a_bug_in_the_index_never_stops_the_recording(
    home: Home, walked: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index stops where it failed; every event is still recorded, the replay walks the
    events after what was stored and answers the same."""
    recorder = new_run(home)
    record(recorder, 1, 6)
    assert recorder.flush()
    stored = segments(home, recorder.run_id)

    def broken(*args: Any) -> None:
        raise RuntimeError("a bug in the index")

    monkeypatch.setattr(replay_walk.Walk, "add", broken)
    record(recorder, 7, 6)
    recorder.close("finished", "done")
    monkeypatch.undo()
    monkeypatch.setattr(replay_walk, "CHECKPOINT", EVERY)
    assert recorder.writer.failed is None
    replay = load(home, recorder.run_id)
    assert segments(home, recorder.run_id) == stored
    assert "done 12" in [e.text for e in replay.feed(len(replay))]
    assert_same_as_a_walk(replay, home)


async def test_the_replay_screen_shows_the_same_from_the_index(home: Home) -> None:
    """``teamdeck replay``'s screen, opened from the index and from a walk over the whole run
    (the index deleted), draws the same panels at every point it is moved to."""
    from textual.widgets import DataTable, Static

    from app.dashboard.screens.replay import ReplayApp, ReplayScreen

    recorder = new_run(home)
    record(recorder, 1, 25)
    recorder.close("finished", "done")

    async def panels() -> list[Any]:
        app = ReplayApp(load(home, recorder.run_id))
        drawn: list[Any] = []
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            for position in [*range(0, len(app.replay), 13), len(app.replay)]:
                screen.move_to(position)
                await pilot.pause()
                drawn.append(
                    [
                        str(screen.query_one(f"#replay-{name}", Static).render())
                        for name in ("header", "lines")
                    ]
                )
                for name in ("agents", "tasks"):
                    table = screen.query_one(f"#replay-{name}", DataTable)
                    rows = [list(map(str, table.get_row_at(i))) for i in range(table.row_count)]
                    drawn.append(rows)
            await pilot.press("down", "down", "enter")  # an agent's transcript
            drawn.append(str(screen.query_one("#replay-lines", Static).render()))
        return drawn

    from_index = await panels()
    conn = connect(home.root / "history.db")
    conn.execute("DELETE FROM replay_segments")
    conn.close()
    walked_in_full = await panels()
    assert len(from_index) >= 40 and "transcript" in from_index[-1]
    assert from_index == walked_in_full


def test_checkpoints_gone_after_the_open_are_walked_from_an_earlier_one(home: Home) -> None:
    """The archive changed under an open replay (its stored checkpoints deleted or rewritten):
    each point is still the state the events give, from the nearest checkpoint still there."""
    recorder = new_run(home)
    record(recorder, 1, 10)
    recorder.close("finished", "done")
    replay = load(home, recorder.run_id)
    conn = connect(home.root / "history.db")
    conn.execute("DELETE FROM replay_segments WHERE segment % 3 = 1")
    conn.execute("UPDATE replay_segments SET last_id = -1 WHERE segment % 3 = 2")
    conn.close()
    assert_same_as_a_walk(replay, home)

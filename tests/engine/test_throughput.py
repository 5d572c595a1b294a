"""What keeps claims and sends fast (schema version 3), as structure rather than time: a claim
reads the same few pages on a board of thousands of tasks as on a small one, and watchers are
woken by the writer after its commit (no notifying trigger holding the database's lock through
the flush), which loses nothing: a write whose wake never came is found by the sweep, and
forged wake-ups break no watcher."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import psycopg

from app.core.events import ChangeEvent, InboxChanged, TaskChanged
from app.core.models import InboxMessage
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.tasks import CLAIM_NEXT, EngineTasks
from app.engine.watch import EngineFeed
from tests.engine.pg import Engine, quiet_message, until


def _claim_pages(engine: Engine, tasks: int) -> int:
    """Shared pages one claim_next reads as an agent, on a board of ``tasks`` tasks of which
    a third are the claimer's finished ones, and the first few and every seventh wait for #2
    (open); the claimer's ninth claim on its connection."""
    team = engine.team(["w"])
    with psycopg.connect(engine.admin_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO teamdeck.tasks (team, subject, owner, status, blocked_by)"
            " SELECT %s, 't' || g, CASE WHEN g %% 3 = 0 THEN 'w' END,"
            " CASE WHEN g %% 3 = 0 THEN 'completed' ELSE 'pending' END,"
            " CASE WHEN g %% 7 = 0 OR g < 7 THEN ARRAY['x', '2'] ELSE '{}' END"
            " FROM generate_series(1, %s) g",
            (team.name, tasks),
        )
        conn.execute("ANALYZE teamdeck.tasks")
    with psycopg.connect(team.urls["w"]) as conn:  # a transaction, rolled back
        # Past five calls a session keeps a generic plan for the claim: the one measured. Each
        # call completes the task the last one claimed (a teammate's cycle).
        done = None
        for _ in range(8):
            token = str(uuid.uuid4())
            params = {"agent": "w", "status": None, "team": team.name, "token": token}
            got = conn.execute(CLAIM_NEXT, params | {"done": done}).fetchone()
            assert got is not None
            done = got[0]
        params = {"agent": "w", "status": None, "team": team.name, "token": str(uuid.uuid4())}
        row = conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + CLAIM_NEXT, params | {"done": done}
        )
        plan: Any = row.fetchone()
        conn.rollback()
    assert plan is not None
    top = (json.loads(plan[0]) if isinstance(plan[0], str) else plan[0])[0]["Plan"]
    return int(top["Shared Hit Blocks"]) + int(top["Shared Read Blocks"])


def test_a_claim_reads_as_few_pages_on_a_big_board_as_on_a_small_one(engine: Engine) -> None:
    small, big = _claim_pages(engine, 30), _claim_pages(engine, 6000)
    # version 1's claim read every open task for each candidate: thousands of pages here
    assert big < 2 * small, (small, big)


def test_a_blocker_that_is_no_task_does_not_block(engine: Engine) -> None:
    team = engine.team(["w"])
    with Link(team.desk_url) as desk:
        board = EngineTasks(desk, team.name)
        first, second = board.create("first"), board.create("second")
        with desk.pool.connection() as conn:
            conn.execute(
                "UPDATE teamdeck.tasks SET blocked_by = %s WHERE team = %s AND id = %s",
                (["x", "099", "4294967296", first.id], team.name, int(second.id)),
            )
    with Link(team.urls["w"]) as link:
        tasks = EngineTasks(link, team.name)
        assert not tasks.claim(second.id, "w").success  # first is a task, still open
        tasks.update(first.id, status="completed")
        assert tasks.claim(second.id, "w").success  # the rest are no tasks


async def test_writers_wake_the_feed_and_forged_wakes_break_nothing(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    seen: list[ChangeEvent] = []
    feed = EngineFeed(team.urls["bob"], team.name, sweep=3600)  # no sweep: the wakes only
    feed.subscribe(seen.extend)
    with Link(team.urls["alice"]) as a, Link(team.desk_url) as desk:
        made = EngineTasks(desk, team.name).create("first")
        await feed.start()
        try:
            # A hostile agent notifies on the channel: nonsense, huge ids, another's names.
            with psycopg.connect(team.urls["alice"], autocommit=True) as conn:
                for payload in ("t:99999999999999999999", "t:x", "m:bob", "zz", "", "t:-1"):
                    conn.execute("SELECT pg_notify('teamdeck', %s)", (payload,))
            await asyncio.to_thread(
                EngineMailbox(a, team.name).send, "bob", InboxMessage(sender="alice", text="hi")
            )
            await until(lambda: InboxChanged(team.name, "bob") in seen)
            got = await asyncio.to_thread(EngineTasks(a, team.name).claim_next, "alice")
            assert got is not None and got.task is not None and got.task.id == made.id
            await until(lambda: TaskChanged(team.name, made.id) in seen)
            assert feed.running
        finally:
            await feed.stop()


async def test_a_write_whose_wake_never_came_is_found_by_the_sweep(engine: Engine) -> None:
    team = engine.team(["bob"])
    seen: list[ChangeEvent] = []
    feed = EngineFeed(team.urls["bob"], team.name, sweep=0.2)
    feed.subscribe(seen.extend)
    await feed.start()
    try:
        quiet_message(engine.admin_url, team.name, "bob", "team-lead")  # its wake unheard
        with psycopg.connect(engine.admin_url, autocommit=True) as conn:  # a writer that died
            conn.execute(  # between its commit and its wake
                "INSERT INTO teamdeck.tasks (team, subject) VALUES (%s, 'quiet')", (team.name,)
            )
        await until(lambda: InboxChanged(team.name, "bob") in seen)
        await until(lambda: TaskChanged(team.name, "1") in seen)
    finally:
        await feed.stop()

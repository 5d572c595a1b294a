"""claim_next with eight racing claimers on eight roles: every task is claimed exactly once,
``blockedBy`` and the busy check hold, and a blocked task waits for its blocker."""

from __future__ import annotations

import threading

import pytest

from app.engine.link import Link
from app.engine.tasks import EngineTasks
from tests.engine.pg import Engine

CLAIMERS = 8
TASKS = 160


@pytest.mark.parametrize("via", ["agents", "desk"])
def test_eight_claimers_claim_every_task_exactly_once(engine: Engine, via: str) -> None:
    """Each claimer on its own role ("agents"), or all on the desk's, which row-level security
    does not hold back (the lead may assign to anyone): there only the row locks decide. The
    agents finish each task in the call that claims the next (schema version 6), the desk's
    claimers with an update of their own."""
    names = [f"w{i}" for i in range(CLAIMERS)]
    team = engine.team(names)
    with Link(team.desk_url) as desk:
        board = EngineTasks(desk, team.name)
        ids = [board.create(f"task {i}").id for i in range(TASKS)]
    claimed: dict[str, list[str]] = {name: [] for name in names}
    start = threading.Barrier(CLAIMERS)

    def work(name: str) -> None:
        url = team.urls[name] if via == "agents" else team.desk_url
        with Link(url, max_size=1) as link:
            tasks = EngineTasks(link, team.name)
            start.wait()
            held: str | None = None
            while True:
                result = tasks.claim_next(name, status="in_progress", done=held)
                if result is None:
                    return
                assert result.success and result.task is not None, result
                claimed[name].append(result.task.id)
                if via == "agents":
                    held = result.task.id
                else:
                    tasks.update(result.task.id, status="completed")

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [task_id for got in claimed.values() for task_id in got]
    assert sorted(every, key=int) == ids  # each once, none twice, none left
    assert sum(1 for got in claimed.values() if got) > 1  # they did race
    with Link(team.desk_url) as desk:
        for task in EngineTasks(desk, team.name).list():
            assert task.status == "completed"
            assert task.id in claimed[task.owner or ""]


def test_claim_next_keeps_blocked_by_and_the_busy_check(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    with Link(team.desk_url) as desk:
        board = EngineTasks(desk, team.name)
        first = board.create("first")
        second = board.create("second")
        with desk.pool.connection() as conn:  # second waits for first
            conn.execute(
                "UPDATE teamdeck.tasks SET blocked_by = %s WHERE team = %s AND id = %s",
                ([first.id], team.name, int(second.id)),
            )
    with Link(team.urls["alice"]) as a, Link(team.urls["bob"]) as b:
        alice, bob = EngineTasks(a, team.name), EngineTasks(b, team.name)
        got = alice.claim_next("alice")
        assert got is not None and got.success and got.task and got.task.id == first.id
        assert bob.claim_next("bob") is None  # second is blocked by first, still open
        busy = alice.claim_next("alice")
        assert busy is not None and busy.reason == "agent_busy" and busy.busy_with == [first.id]
        alice.update(first.id, status="completed")
        got = bob.claim_next("bob")
        assert got is not None and got.task and got.task.id == second.id

"""Races between real processes (forked, each with its own Home): nothing lost, nothing doubled.

* 8 processes x 250 appends to one inbox -> exactly 2,000 messages, each sender's order kept;
* 8 processes x 40 task creations -> ids exactly 1..320;
* 20 processes claiming the same 50 tasks -> one owner each, and the files agree.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import Home, InboxMessage, TeamMember
from tests.core.processes import FORK, run_together
from tests.timing import scaled

TEAM = "race"


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    """A home on tmpfs when there is one: these tests are about locking, and every append
    fsyncs twice, which a busy shared disk makes slow. TEAMDECK_TEST_ON_DISK=1 keeps it on
    the real disk."""
    shm = Path("/dev/shm")
    base = tmp_path
    if not os.environ.get("TEAMDECK_TEST_ON_DISK") and shm.is_dir() and os.access(shm, os.W_OK):
        base = Path(tempfile.mkdtemp(prefix="teamdeck-race-", dir=shm))
    try:
        home = Home(base / "home")
        home.teams.create(TEAM)
        home.teams.add_member(TEAM, TeamMember(agent_id="", name="researcher"))
        yield home
    finally:
        if base != tmp_path:
            shutil.rmtree(base, ignore_errors=True)


def _run(target: Any, args_list: list[tuple[Any, ...]], timeout: float = 60) -> None:
    run_together([(target, args) for args in args_list], timeout)


# ----------------------------------------------------------------------------- appends


def _appender(start: Any, root: str, writer: int, count: int) -> None:
    box = Home(root).mailbox(TEAM)
    start.wait()
    for seq in range(count):
        box.send("researcher", InboxMessage(sender=f"w{writer}", text=f"{writer}:{seq}"))


def test_concurrent_appends_lose_nothing(home: Home) -> None:
    writers, per_writer = 8, 250
    _run(_appender, [(str(home.root), w, per_writer) for w in range(writers)])
    path = home.mailbox(TEAM).path("researcher")
    raw = json.loads(path.read_text())  # the file itself is valid JSON
    messages = home.mailbox(TEAM).read("researcher")
    assert len(raw) == len(messages) == writers * per_writer == 2000
    texts = [m.text for m in messages]
    assert len(set(texts)) == len(texts)  # none duplicated
    for w in range(writers):
        mine = [m.text for m in messages if m.sender == f"w{w}"]
        assert mine == [f"{w}:{seq}" for seq in range(per_writer)]  # each sender's order


def _appender_and_reader(start: Any, root: str, writer: int, count: int) -> None:
    box = Home(root).mailbox(TEAM)
    start.wait()
    seen = 0
    for seq in range(count):
        if writer == 0:
            box.mark_all_read("researcher")
            now = len(box.read("researcher"))  # a reader never sees a broken file...
            assert now >= seen  # ...nor one that lost messages it saw before
            seen = now
        else:
            box.send("researcher", InboxMessage(sender=f"w{writer}", text=f"{writer}:{seq}"))


def test_appends_racing_mark_read(home: Home) -> None:
    """Rewrites (mark read) interleaved with appends: no message lost, flags only go up."""
    writers, per_writer = 4, 60
    _run(_appender_and_reader, [(str(home.root), w, per_writer) for w in range(writers)])
    box = home.mailbox(TEAM)
    messages = box.read("researcher")
    assert len(messages) == (writers - 1) * per_writer
    for w in range(1, writers):
        assert [m.text for m in messages if m.sender == f"w{w}"] == [
            f"{w}:{seq}" for seq in range(per_writer)
        ]
    box.mark_all_read("researcher")
    assert box.unread("researcher") == []


# ----------------------------------------------------------------------------- task ids


def _creator(start: Any, root: str, writer: int, count: int) -> None:
    tasks = Home(root).tasks(TEAM)
    start.wait()
    for seq in range(count):
        tasks.create(f"{writer}:{seq}")


def test_concurrent_creates_get_ids_one_to_n(home: Home) -> None:
    writers, per_writer = 8, 40
    _run(_creator, [(str(home.root), w, per_writer) for w in range(writers)])
    tasks = home.tasks(TEAM).list()
    assert sorted(int(t.id) for t in tasks) == list(range(1, 321))
    assert len({t.subject for t in tasks}) == 320  # no task overwritten by another
    assert home.tasks(TEAM).highwatermark() == 320
    for w in range(writers):
        ids = [int(t.id) for t in tasks if t.subject.startswith(f"{w}:")]
        subjects = [t.subject for t in sorted(tasks, key=lambda t: int(t.id))]
        assert len(ids) == per_writer
        assert [s for s in subjects if s.startswith(f"{w}:")] == [
            f"{w}:{seq}" for seq in range(per_writer)
        ]


# ----------------------------------------------------------------------------- claims


def _claimer(start: Any, root: str, agent: str, ids: list[str], out: Any) -> None:
    tasks = Home(root).tasks(TEAM)
    order = list(ids)
    random.Random(agent).shuffle(order)
    start.wait()
    won = [task_id for task_id in order if tasks.claim(task_id, agent).success]
    out.put((agent, won))


def test_concurrent_claims_have_one_winner_each(home: Home) -> None:
    tasks = home.tasks(TEAM)
    ids = [tasks.create(f"task {i}").id for i in range(50)]
    out = FORK.Queue()
    agents = [f"agent-{i}" for i in range(20)]
    _run(_claimer, [(str(home.root), agent, ids, out) for agent in agents])
    reports = dict(out.get(timeout=scaled(10)) for _ in agents)
    winners: dict[str, str] = {}
    for agent, won in reports.items():
        for task_id in won:
            assert task_id not in winners, f"#{task_id} won by {winners[task_id]} and {agent}"
            winners[task_id] = agent
    assert sorted(winners, key=int) == ids  # disjoint, and together they cover all 50
    for task_id, agent in winners.items():
        assert tasks.require(task_id).owner == agent  # the file agrees with the winner


def _busy_claimer(start: Any, root: str, agent: str, ids: list[str], out: Any) -> None:
    tasks = Home(root).tasks(TEAM)
    start.wait()
    won = [task_id for task_id in ids if tasks.claim(task_id, agent, check_busy=True).success]
    out.put((agent, won))


def test_busy_checked_claims_give_each_agent_at_most_one(home: Home) -> None:
    tasks = home.tasks(TEAM)
    ids = [tasks.create(f"task {i}").id for i in range(6)]
    out = FORK.Queue()
    agents = [f"agent-{i}" for i in range(10)]
    _run(_busy_claimer, [(str(home.root), agent, ids, out) for agent in agents])
    reports = dict(out.get(timeout=scaled(10)) for _ in agents)
    assert all(len(won) <= 1 for won in reports.values())
    owners = [tasks.require(i).owner for i in ids]
    assert None not in owners and len(set(owners)) == 6


def _next_claimer(start: Any, root: str, agent: str, rounds: int, out: Any) -> None:
    """An idle teammate's claims: take the next task, finish it, take the next."""
    tasks = Home(root).tasks(TEAM)
    start.wait()
    won = []
    for _ in range(rounds):
        result = tasks.claim_next(agent, status="in_progress")
        if result is None or result.task is None:
            break
        won.append(result.task.id)
        tasks.update(result.task.id, status="completed")
    out.put((agent, won))


def test_racing_claim_next_hands_every_task_to_exactly_one_agent(home: Home) -> None:
    tasks = home.tasks(TEAM)
    ids = [tasks.create(f"task {i}").id for i in range(40)]
    out = FORK.Queue()
    agents = [f"agent-{i}" for i in range(8)]
    _run(_next_claimer, [(str(home.root), agent, 40, out) for agent in agents])
    reports = dict(out.get(timeout=scaled(10)) for _ in agents)
    claimed = [task_id for won in reports.values() for task_id in won]
    assert sorted(claimed, key=int) == ids  # each task once, none left behind
    for agent, won in reports.items():
        assert all(tasks.require(i).owner == agent for i in won)

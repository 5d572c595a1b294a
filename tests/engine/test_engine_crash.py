"""``kill -9`` of PostgreSQL (the postmaster and every backend) in the middle of a burst of
sends and claims, then a restart: the clients retry with their idempotency ids (a send's
uuid, a claim's token) and nothing is lost or duplicated. And the change feed, cut off
meanwhile, catches up with what was sent while it was away."""

from __future__ import annotations

import asyncio
import threading
import time

from app.core.events import ChangeEvent, InboxChanged
from app.core.models import InboxMessage
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.tasks import EngineTasks
from app.engine.watch import EngineFeed
from tests.engine.pg import Engine

SENDS = 150
TASKS = 60
CREATES = 60


def test_kill_9_mid_burst_loses_and_duplicates_nothing(engine: Engine) -> None:
    team = engine.team(["s0", "s1", "c0", "c1", "inbox"])
    with Link(team.desk_url) as desk:
        board = EngineTasks(desk, team.name)
        ids = [board.create(f"t{i}").id for i in range(TASKS)]
    sent = {"s0": 0, "s1": 0}
    claimed: dict[str, list[str]] = {"c0": [], "c1": []}
    errors: list[BaseException] = []

    def sender(name: str) -> None:
        try:
            with Link(team.urls[name], max_size=1) as link:
                box = EngineMailbox(link, team.name)
                for i in range(SENDS):
                    box.append("inbox", InboxMessage(sender=name, text=f"{name} {i}"))
                    sent[name] += 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    def claimer(name: str) -> None:
        try:
            with Link(team.urls[name], max_size=1) as link:
                tasks = EngineTasks(link, team.name)
                while (got := tasks.claim_next(name)) is not None:
                    assert got.success and got.task, got
                    claimed[name].append(got.task.id)
                    tasks.update(got.task.id, status="completed")
                    time.sleep(0.005)  # spread the claims over the crash
        except BaseException as exc:
            errors.append(exc)

    def creator() -> None:  # the lead adding tasks (made done, so no claimer takes them)
        try:
            with Link(team.desk_url, max_size=1) as link:
                tasks = EngineTasks(link, team.name)
                for i in range(CREATES):
                    tasks.create(f"made {i}", status="completed")
                    time.sleep(0.005)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=sender, args=(n,)) for n in sent] + [
        threading.Thread(target=claimer, args=(n,)) for n in claimed
    ]
    threads.append(threading.Thread(target=creator))
    for t in threads:
        t.start()
    while sum(sent.values()) < SENDS // 2 and not errors:  # mid-burst
        time.sleep(0.005)
    engine.server.kill()
    assert engine.server.pid() is None
    time.sleep(0.3)
    engine.server.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sent == {"s0": SENDS, "s1": SENDS}
    with Link(team.urls["inbox"]) as link:
        texts = [m.text for m in EngineMailbox(link, team.name).read("inbox")]
    for name in sent:  # every message once, in the order it was sent
        assert [t for t in texts if t.startswith(name)] == [f"{name} {i}" for i in range(SENDS)]
    assert len(texts) == 2 * SENDS
    every = claimed["c0"] + claimed["c1"]
    assert sorted(every, key=int) == ids
    with Link(team.desk_url) as desk:
        made = [t.subject for t in EngineTasks(desk, team.name).list() if t.subject[:5] == "made "]
    assert made == [f"made {i}" for i in range(CREATES)]  # each once


async def test_the_feed_catches_up_after_the_link_comes_back(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    seen: list[ChangeEvent] = []
    feed = EngineFeed(team.urls["bob"], team.name, retry=0.05)
    feed.subscribe(seen.extend)
    with Link(team.urls["alice"]) as link:
        box = EngineMailbox(link, team.name)
        await feed.start()
        try:
            await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text="one"))
            await _until(lambda: InboxChanged(team.name, "bob") in seen)
            engine.server.kill()
            await asyncio.to_thread(engine.server.start)
            seen.clear()
            # Sent while the feed may still be reconnecting: the catch-up must report it.
            await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text="two"))
            await _until(lambda: InboxChanged(team.name, "bob") in seen)
            await _until(lambda: feed.connects >= 2)
        finally:
            await feed.stop()


async def _until(check: object) -> None:
    assert callable(check)
    give_up = time.monotonic() + 30
    while not check():
        assert time.monotonic() < give_up, "timed out"
        await asyncio.sleep(0.01)

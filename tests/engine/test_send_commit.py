"""Schema version 9: a send is one prepared statement whose own commit wakes the watchers (no
wake transaction behind it), ``teamdeck.send`` checks its caller once and folds the recipient's
and the uuid's checks into its writes, and the feed reads what a wake names on the connection
that heard it, for the relay's pull. A hostile agent gets no more from the folded checks: a
refused, repeated or rolled-back send takes no number and wakes nobody."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from app.core.events import ChangeEvent, InboxChanged
from app.core.models import InboxMessage
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.projection import Projection
from app.engine.watch import EngineFeed
from bench.roundtrips import RoundTrips
from tests.engine.pg import Engine, commits, desk_and_gpu, quiet_message, team_home, until

SEND = "SELECT inbox, seq, fresh FROM teamdeck.send(%s, %s, %s, %s, %s)"


def _body(text: str) -> Jsonb:
    return Jsonb({"from": "x", "text": text, "timestamp": "2026-01-01T00:00:00.000Z"})


def test_a_send_is_one_round_trip_and_one_commit_that_wakes_by_itself(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    info = psycopg.conninfo.conninfo_to_dict(engine.admin_url)
    wire = RoundTrips(str(info["host"]), int(str(info["port"])))
    try:
        with (
            Link(wire.url(team.urls["alice"]), max_size=1) as link,
            psycopg.connect(team.urls["bob"], autocommit=True) as bob,
        ):
            bob.execute("LISTEN teamdeck")
            box = EngineMailbox(link, team.name)
            box.append("bob", InboxMessage(sender="alice", text="warm"))  # prepares it
            before = wire.count
            for i in range(5):
                box.append("bob", InboxMessage(sender="alice", text=f"m{i}"))
            assert wire.count - before == 5
            with commits(engine.admin_url) as counted:
                box.append("bob", InboxMessage(sender="alice", text="counted"))
            assert (counted.data, counted.bare) == (1, 0)  # no wake transaction behind it
            notes = [n.payload for n in bob.notifies(timeout=10, stop_after=7)]
        number = notes[0].split(":")[1]
        assert notes == [f"m:{number}:{seq}" for seq in range(1, 8)]
    finally:
        wire.close()


def test_a_refused_repeated_or_rolled_back_send_takes_no_number_and_wakes_nobody(
    engine: Engine,
) -> None:
    team = engine.team(["alice", "bob", "mallory"])
    other = engine.team(["victim"])
    key = uuid.uuid4()
    with (
        psycopg.connect(team.urls["alice"], autocommit=True) as alice,
        psycopg.connect(team.urls["mallory"], autocommit=True) as mallory,
        psycopg.connect(team.urls["bob"], autocommit=True) as bob,
    ):
        bob.execute("LISTEN teamdeck")
        first = alice.execute(SEND, (team.name, "bob", key, "alice", _body("one"))).fetchone()
        assert first is not None and first[1:] == (1, True)
        for args in [
            (team.name, "bob", uuid.uuid4(), "alice"),  # a forged sender
            (team.name, "nobody", uuid.uuid4(), "mallory"),  # to no member
            (other.name, "victim", uuid.uuid4(), "mallory"),  # into another team
            (team.name, "team-lead", uuid.uuid4(), "user"),  # as the person
        ]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                mallory.execute(SEND, (*args, _body("forged")))
        # alice's uuid in mallory's name: nothing of bob's inbox, no number taken, no wake.
        repeat = mallory.execute(SEND, (team.name, "bob", key, "mallory", _body("x"))).fetchone()
        assert repeat == (None, None, False)
        with mallory.transaction(force_rollback=True):
            mallory.execute(SEND, (team.name, "bob", uuid.uuid4(), "mallory", _body("gone")))
        # alice's own retry: the first delivery's numbers, nothing new.
        again = alice.execute(SEND, (team.name, "bob", key, "alice", _body("one"))).fetchone()
        assert again == (first[0], 1, False)
        mallory.execute("SELECT pg_notify('teamdeck', 'marker')")
        nxt = mallory.execute(SEND, (team.name, "bob", uuid.uuid4(), "mallory", _body("two")))
        assert nxt.fetchone() == (first[0], 2, True)  # the counter moved once per message
        notes = []
        for note in bob.notifies(timeout=10):
            notes.append(note.payload)
            if note.payload.startswith(f"m:{first[0]}:2"):
                break
    assert notes == [f"m:{first[0]}:1", "marker", f"m:{first[0]}:2"]
    with Link(team.urls["bob"]) as link:
        got = EngineMailbox(link, team.name).read("bob")
    assert [(m.sender, m.text) for m in got] == [("alice", "one"), ("mallory", "two")]
    with Link(other.urls["victim"]) as link:
        assert EngineMailbox(link, other.name).read("victim") == []


def test_the_administrator_sends_as_anyone_and_a_direct_insert_wakes(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    with (
        psycopg.connect(engine.admin_url, autocommit=True) as admin,
        psycopg.connect(team.urls["alice"], autocommit=True) as alice,
        psycopg.connect(team.urls["bob"], autocommit=True) as bob,
    ):
        bob.execute("LISTEN teamdeck")
        row = admin.execute(SEND, (team.name, "bob", uuid.uuid4(), "team-lead", _body("a")))
        inbox, seq, fresh = row.fetchone() or (None, None, None)
        assert (seq, fresh) == (1, True)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            admin.execute(SEND, (team.name, "nobody", uuid.uuid4(), "team-lead", _body("b")))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the policies refuse it
            alice.execute(
                "INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body)"
                " VALUES (%s, 'bob', gen_random_uuid(), 'bob', '{}')",
                (team.name,),
            )
        alice.execute(
            "INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body)"
            " VALUES (%s, 'bob', gen_random_uuid(), 'alice', %s)",
            (team.name, _body("direct")),
        )
        notes = [n.payload for n in bob.notifies(timeout=10, stop_after=2)]
    assert notes == [f"m:{inbox}:1", f"m:{inbox}:2"]


async def test_the_feed_reads_a_woken_inbox_itself_and_hands_it_over_once(
    engine: Engine,
) -> None:
    team = engine.team(["alice", "bob"])
    seen: list[ChangeEvent] = []
    feed = EngineFeed(team.urls["bob"], team.name, sweep=3600, fetch={"bob"})
    feed.subscribe(seen.extend)
    with Link(team.urls["alice"]) as a:
        box = EngineMailbox(a, team.name)
        await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text="before"))
        assert feed.take("bob", 0) is None  # not running
        await feed.start()
        try:
            assert feed.take("bob", 0) is None  # sent before the feed listened: not held
            assert feed.take("bob", 1) is None  # nothing held: the reader reads
            for text in ("one", "two"):
                seen.clear()
                await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text=text))
                await until(lambda: InboxChanged(team.name, "bob") in seen)
            assert feed.fetches == 2  # one read per wake, on the feed's connection
            got = feed.take("bob", 1)
            assert got is not None and [(s, m.text) for s, m in got] == [(2, "one"), (3, "two")]
            assert feed.take("bob", 3) is None  # handed out: the caller reads it itself
            # A row a role inserted directly that is no message: left to the caller's read,
            # and the feed goes on.
            seen.clear()
            with psycopg.connect(team.urls["alice"], autocommit=True) as conn:
                conn.execute(
                    "INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body)"
                    " VALUES (%s, 'bob', gen_random_uuid(), 'alice', '{\"text\": [1]}')",
                    (team.name,),
                )
            await until(lambda: InboxChanged(team.name, "bob") in seen)
            assert feed.take("bob", 3) is None
            seen.clear()
            await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text="after"))
            await until(lambda: InboxChanged(team.name, "bob") in seen)
            got = feed.take("bob", 4)
            assert got is not None and [(s, m.text) for s, m in got] == [(5, "after")]
            assert feed.running
        finally:
            await feed.stop()


async def test_a_fetched_inbox_whose_wake_went_unheard_is_read_by_the_sweep(
    engine: Engine,
) -> None:
    team = engine.team(["bob"])
    seen: list[ChangeEvent] = []
    feed = EngineFeed(team.urls["bob"], team.name, sweep=0.2, fetch={"bob"})
    feed.subscribe(seen.extend)
    await feed.start()
    try:
        quiet_message(engine.admin_url, team.name, "bob", "team-lead", "quiet")
        await until(lambda: InboxChanged(team.name, "bob") in seen)
        got = feed.take("bob", 0)
        assert got is not None and [(s, m.text) for s, m in got] == [(1, "quiet")]
    finally:
        await feed.stop()


async def test_a_pull_takes_what_the_feed_read_and_reads_the_rest_itself(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = engine.team(["gpu"])
    home = team_home(tmp_path / "gpu", team.name, "gpu")
    reads: list[int] = []
    since = EngineMailbox.since

    def counted(box: EngineMailbox, agent: str, cursor: int) -> list[tuple[int, InboxMessage]]:
        reads.append(cursor)
        return since(box, agent, cursor)

    monkeypatch.setattr(EngineMailbox, "since", counted)
    seen: list[ChangeEvent] = []
    feed = EngineFeed(team.urls["gpu"], team.name, sweep=3600, fetch={"gpu"})
    feed.subscribe(seen.extend)
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as link:
        lead = EngineMailbox(desk, team.name)
        lead.append("gpu", InboxMessage(sender="team-lead", text="before"))
        pull = Projection(home, team.name, {"gpu"}, link, ready=feed.take)
        await feed.start()
        try:
            assert await asyncio.to_thread(pull.pull) == 1  # not held by the feed: read
            assert reads == [0]
            for text in ("train it", "then test it"):
                seen.clear()
                lead.append("gpu", InboxMessage(sender="team-lead", text=text))
                await until(lambda: InboxChanged(team.name, "gpu") in seen)
            assert await asyncio.to_thread(pull.pull) == 2
            assert reads == [0]  # taken from the feed: no read of its own
            assert await asyncio.to_thread(pull.pull) == 0  # nothing held: it reads
            assert reads == [0, 3]
        finally:
            await feed.stop()
    texts = [m.text for m in home.mailbox(team.name).read("gpu")]
    assert texts == ["before", "train it", "then test it"]


async def test_a_relays_feed_reads_its_machines_inboxes_for_its_pull(
    engine: Engine, tmp_path: Path
) -> None:
    team = engine.team(["gpu"])
    first, second, desk, gpu = desk_and_gpu(team, tmp_path)
    runs = [asyncio.create_task(r.run()) for r in (desk, gpu)]
    try:
        await until(lambda: len(desk.pace.watching) == 2 and len(gpu.pace.watching) == 2)
        feeds = [
            source.fetch
            for relay in (desk, gpu)
            for source in relay.pace.watching
            if isinstance(source, EngineFeed)
        ]
        assert feeds == [frozenset({"team-lead", "user"}), frozenset({"gpu"})]
        assert gpu.projection.ready == gpu.pace.take
        first.mailbox(team.name).send("gpu", InboxMessage(sender="team-lead", text="train it"))
        await until(lambda: len(second.mailbox(team.name).read("gpu")) == 1)
    finally:
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
        for relay in (desk, gpu):
            relay.close()
    assert [m.text for m in second.mailbox(team.name).read("gpu")] == ["train it"]

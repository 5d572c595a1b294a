"""Schema version 4's one-call send and claim (``teamdeck.send``, ``teamdeck.claim_next``,
SECURITY DEFINER: they write as the tables' owner) hold the same authority as the policies,
whatever a hostile agent passes them on its own login; and a send's wake, which names the inbox
by its number so the watcher need not read, cannot be forged into hiding a message."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest
from psycopg.types.json import Jsonb

from app.core.events import ChangeEvent, InboxChanged
from app.core.models import InboxMessage
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.tasks import EngineTasks
from app.engine.watch import EngineFeed
from tests.engine.pg import Engine, quiet_message, until


def _send(url: str, team: str, recipient: str, sender: str, key: uuid.UUID) -> tuple[object, ...]:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT inbox, seq, fresh FROM teamdeck.send(%s, %s, %s, %s, %s)",
            (team, recipient, key, sender, Jsonb({"from": "team-lead", "text": "do it"})),
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_send_refuses_a_forged_sender_another_team_and_a_stranger(engine: Engine) -> None:
    team, other = engine.team(["alice", "mallory"]), engine.team(["victim"])
    mallory = team.urls["mallory"]
    for recipient, sender, in_team in [
        ("alice", "team-lead", team.name),  # the lead's name
        ("alice", "user", team.name),  # the person's (the desk's alone)
        ("alice", "alice", team.name),  # a teammate's
        ("victim", "mallory", other.name),  # into another team
        ("nobody", "mallory", team.name),  # to no member
    ]:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _send(mallory, in_team, recipient, sender, uuid.uuid4())
    # Its own name goes through, and the stored "from" is the sender, whatever the body said.
    inbox, seq, fresh = _send(mallory, team.name, "alice", "mallory", uuid.uuid4())
    assert (seq, fresh) == (1, True) and isinstance(inbox, int)
    with Link(team.urls["alice"]) as alice:
        got = EngineMailbox(alice, team.name).read("alice")
    assert [(m.sender, m.text) for m in got] == [("mallory", "do it")]
    with Link(other.urls["victim"]) as victim:
        assert EngineMailbox(victim, other.name).read("victim") == []


def test_send_with_anothers_uuid_changes_and_reveals_nothing(engine: Engine) -> None:
    team = engine.team(["alice", "bob", "mallory"])
    key = uuid.uuid4()
    with Link(team.urls["alice"]) as alice:
        assert EngineMailbox(alice, team.name).append(
            "bob", InboxMessage(sender="alice", text="secret"), uuid=str(key)
        )
    # A retry of alice's send in mallory's name: no new message, no numbers of bob's inbox.
    assert _send(team.urls["mallory"], team.name, "bob", "mallory", key) == (None, None, False)
    with Link(team.urls["bob"]) as bob:
        got = EngineMailbox(bob, team.name).read("bob")
    assert [(m.sender, m.text) for m in got] == [("alice", "secret")]


def test_claim_next_refuses_claiming_for_another_or_in_another_team(engine: Engine) -> None:
    team, other = engine.team(["alice", "bob", "mallory"]), engine.team(["victim"])
    with Link(team.desk_url) as desk:
        first = EngineTasks(desk, team.name).create("one")
    with Link(other.desk_url) as desk:
        theirs = EngineTasks(desk, other.name).create("theirs")
    with psycopg.connect(team.urls["mallory"], autocommit=True) as conn:
        for in_team, agent in [(team.name, "bob"), (other.name, "victim"), (other.name, "mallory")]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    "SELECT id FROM teamdeck.claim_next(%s, %s, 'in_progress', %s)",
                    (in_team, agent, uuid.uuid4()),
                )
        # The identity helper the functions use is not callable by an agent.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT teamdeck.caller(%s)", (team.name,))
    with Link(team.urls["alice"]) as alice:
        tasks = EngineTasks(alice, team.name)
        got = tasks.claim_next("alice")
        assert got is not None and got.task is not None and got.task.id == first.id
    with psycopg.connect(team.urls["mallory"], autocommit=True) as conn:
        # alice's claim token passed as mallory's: no task is handed over or changed.
        token = conn.execute(
            "SELECT claim_token FROM teamdeck.tasks WHERE team = %s AND id = %s",
            (team.name, int(first.id)),
        ).fetchone()
        assert token is not None
        rows = conn.execute(
            "SELECT id, owner FROM teamdeck.claim_next(%s, 'mallory', NULL, %s)",
            (team.name, token[0]),
        ).fetchall()
        assert rows == []  # the board has nothing left for mallory
    with Link(team.desk_url) as desk:
        assert EngineTasks(desk, team.name).require(first.id).owner == "alice"
    with Link(other.desk_url) as desk:
        assert EngineTasks(desk, other.name).require(theirs.id).owner is None


async def test_a_forged_wake_of_an_inbox_hides_no_later_message(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    seen: list[ChangeEvent] = []
    feed = EngineFeed(team.urls["bob"], team.name, sweep=0.3)
    feed.subscribe(seen.extend)
    with Link(team.urls["alice"]) as a:
        box = EngineMailbox(a, team.name)
        await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text="first"))
        await feed.start()
        try:
            number = next(n for n, name in feed.inboxes.items() if name == "bob")
            # alice, listening, learns bob's inbox number and wakes with a seq far ahead.
            with psycopg.connect(team.urls["alice"], autocommit=True) as conn:
                conn.execute("SELECT pg_notify('teamdeck', %s)", (f"m:{number}:999999999",))
            await until(lambda: InboxChanged(team.name, "bob") in seen)
            seen.clear()
            await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text="second"))
            await until(lambda: InboxChanged(team.name, "bob") in seen)  # woken
            seen.clear()
            quiet_message(engine.admin_url, team.name, "bob", "alice")  # its wake unheard
            await until(lambda: InboxChanged(team.name, "bob") in seen)  # swept
        finally:
            await feed.stop()


async def test_a_sends_wake_is_reported_without_reading_the_counters(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    seen: list[ChangeEvent] = []
    reads: list[int] = []
    feed = EngineFeed(team.urls["bob"], team.name, sweep=3600)  # no sweep: the wakes only
    counters = feed._inboxes

    async def counted(conn: psycopg.AsyncConnection) -> None:
        reads.append(1)
        await counters(conn)

    feed._inboxes = counted  # type: ignore[method-assign]
    feed.subscribe(seen.extend)
    with Link(team.urls["alice"]) as a:
        box = EngineMailbox(a, team.name)
        await feed.start()
        try:
            reads.clear()
            # bob's inbox is new: its number is learnt from the counters, once.
            await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text="one"))
            await until(lambda: InboxChanged(team.name, "bob") in seen)
            assert len(reads) == 1
            for text in ("two", "three"):
                seen.clear()
                await asyncio.to_thread(box.send, "bob", InboxMessage(sender="alice", text=text))
                await until(lambda: InboxChanged(team.name, "bob") in seen)
            assert len(reads) == 1  # the wakes named the inbox: no read
        finally:
            await feed.stop()


def test_inbox_since_shows_a_hostile_agent_only_what_its_policies_let_it_read(
    engine: Engine,
) -> None:
    """Schema version 8's ``teamdeck.inbox_since`` (the watcher's read, its plan kept) runs as
    the caller: another member's inbox, or another team's, reads as empty; its own inbox and
    what it sent read as through the messages' policies."""
    team = engine.team(["alice", "bob", "mallory"])
    other = engine.team(["carol"])
    _send(team.urls["bob"], team.name, "alice", "bob", uuid.uuid4())
    _send(team.urls["alice"], team.name, "mallory", "alice", uuid.uuid4())
    _send(other.urls["carol"], other.name, "team-lead", "carol", uuid.uuid4())
    since = "SELECT seq, body, read FROM teamdeck.inbox_since(%s, %s, 0)"
    with psycopg.connect(team.urls["mallory"], autocommit=True) as mallory:
        assert mallory.execute(since, (team.name, "alice")).fetchall() == []
        assert mallory.execute(since, (other.name, "team-lead")).fetchall() == []
        mine = mallory.execute(since, (team.name, "mallory")).fetchall()
        assert [(seq, '"alice"' in body) for seq, body, _ in mine] == [(1, True)]
    with psycopg.connect(team.urls["bob"], autocommit=True) as bob:  # its own sends, only
        sent = bob.execute(since, (team.name, "alice")).fetchall()
        assert len(sent) == 1 and '"bob"' in sent[0][1]
    with psycopg.connect(team.desk_url, autocommit=True) as desk:
        assert len(desk.execute(since, (team.name, "alice")).fetchall()) == 1
        assert desk.execute(since, (other.name, "team-lead")).fetchall() == []

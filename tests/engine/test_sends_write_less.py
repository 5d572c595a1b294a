"""Schema version 10: a send writes its inbox's counter with an UPDATE (the upsert left for an
inbox's first message), finds a repeated uuid by a look-up instead of a speculative insertion,
and keys its message by (inbox, seq) without an id, a team's foreign key or a text key. The
same rules as before: a hostile agent's send to a name that is no member takes no number,
another's uuid gives nothing; the migration from version 9 keeps every message and number."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg.types.json import Jsonb

from app.core.models import InboxMessage
from app.engine import migrate
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from tests.engine.pg import Engine

SEND = "SELECT inbox, seq, fresh FROM teamdeck.send(%s, %s, %s, %s, %s)"


def _body(text: str) -> Jsonb:
    return Jsonb({"from": "x", "text": text, "timestamp": "2026-01-01T00:00:00.000Z"})


def _counter(admin_url: str, team: str, name: str) -> int | None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT last_seq FROM teamdeck.inboxes WHERE team = %s AND name = %s", (team, name)
        ).fetchone()
    return None if row is None else int(row[0])


def test_a_send_to_an_existing_inbox_writes_its_row_its_two_keys_and_its_commit(
    engine: Engine,
) -> None:
    """Counted in the write-ahead log, by the send's own transaction: the counter's update
    (not an upsert's lock and update), the message, its two keys, the commit: no speculative
    insertion's confirmation, no lock of the team's row, no third key."""
    team = engine.team(["alice", "bob"])
    with (
        psycopg.connect(team.urls["alice"], autocommit=True) as alice,
        psycopg.connect(engine.admin_url, autocommit=True) as admin,
    ):
        admin.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        alice.execute(SEND, (team.name, "bob", uuid.uuid4(), "alice", _body("first")))
        start = admin.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        with alice.transaction():
            alice.execute(SEND, (team.name, "bob", uuid.uuid4(), "alice", _body("counted")))
            xid = alice.execute("SELECT pg_current_xact_id()::text").fetchone()
        assert xid is not None and start is not None
        # Its commit waited for the flush: its records are on disk.
        records = admin.execute(
            "SELECT resource_manager, record_type FROM pg_get_wal_records_info("
            "  %s, pg_current_wal_flush_lsn()) WHERE xid::text = %s",
            (start[0], xid[0]),
        ).fetchall()
        keys = admin.execute(
            "SELECT c.relname::text, pg_get_indexdef(x.indexrelid) FROM pg_index x"
            " JOIN pg_class c ON c.oid = x.indexrelid"
            " WHERE x.indrelid = 'teamdeck.messages'::regclass ORDER BY 1"
        ).fetchall()
        foreign = admin.execute(
            "SELECT count(*) FROM pg_constraint"
            " WHERE conrelid = 'teamdeck.messages'::regclass AND contype = 'f'"
        ).fetchone()
    kinds = sorted(f"{manager} {kind.split()[0]}" for manager, kind in records)
    assert kinds == [
        "Btree INSERT_LEAF",
        "Btree INSERT_LEAF",
        "Heap HOT_UPDATE",
        "Heap INSERT",
        "Transaction COMMIT",
    ], records
    assert [name for name, _ in keys] == ["messages_pkey", "messages_uuid_key"]
    assert "(inbox, seq)" in keys[0][1]
    assert foreign == (0,)


def test_a_non_members_send_on_an_existing_inbox_is_refused_and_takes_no_number(
    engine: Engine,
) -> None:
    team = engine.team(["alice", "bob"])
    with (
        psycopg.connect(team.urls["alice"], autocommit=True) as alice,
        psycopg.connect(team.desk_url, autocommit=True) as desk,
    ):
        first = alice.execute(SEND, (team.name, "bob", uuid.uuid4(), "alice", _body("one")))
        inbox = (first.fetchone() or (None,))[0]
        desk.execute("DELETE FROM teamdeck.members WHERE team = %s AND name = 'bob'", (team.name,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not a member"):
            alice.execute(SEND, (team.name, "bob", uuid.uuid4(), "alice", _body("two")))
        assert _counter(engine.admin_url, team.name, "bob") == 1
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not a member"):
            alice.execute(SEND, (team.name, "nobody", uuid.uuid4(), "alice", _body("x")))
        assert _counter(engine.admin_url, team.name, "nobody") is None  # no inbox made
        desk.execute("INSERT INTO teamdeck.members (team, name) VALUES (%s, 'bob')", (team.name,))
        again = alice.execute(SEND, (team.name, "bob", uuid.uuid4(), "alice", _body("three")))
        assert again.fetchone() == (inbox, 2, True)
    with Link(team.urls["bob"]) as link:
        assert [m.text for m in EngineMailbox(link, team.name).read("bob")] == ["one", "three"]


def test_a_first_message_to_a_new_inbox_then_its_repeat_and_anothers_uuid(
    engine: Engine,
) -> None:
    team = engine.team(["alice", "mallory"])
    key = uuid.uuid4()
    with (
        psycopg.connect(team.urls["alice"], autocommit=True) as alice,
        psycopg.connect(team.urls["mallory"], autocommit=True) as mallory,
    ):
        assert _counter(engine.admin_url, team.name, "team-lead") is None
        first = alice.execute(SEND, (team.name, "team-lead", key, "alice", _body("hi")))
        row = first.fetchone()
        assert row is not None and row[1:] == (1, True)
        repeat = alice.execute(SEND, (team.name, "team-lead", key, "alice", _body("hi")))
        assert repeat.fetchone() == (row[0], 1, False)
        stolen = mallory.execute(SEND, (team.name, "team-lead", key, "mallory", _body("me")))
        assert stolen.fetchone() == (None, None, False)
        assert _counter(engine.admin_url, team.name, "team-lead") == 1  # numbers given back
        nxt = alice.execute(SEND, (team.name, "team-lead", uuid.uuid4(), "alice", _body("2")))
        assert nxt.fetchone() == (row[0], 2, True)


def test_a_retry_racing_its_first_attempt_waits_for_it_and_is_a_repeat(engine: Engine) -> None:
    """A send retried while its first attempt has not committed yet (the link dropped, the
    server still running it): the retry waits on the inbox's counter, then finds the first
    attempt's message: one message, the first attempt's numbers."""
    team = engine.team(["alice", "bob"])
    key = uuid.uuid4()
    answers: list[tuple[object, ...] | None] = []
    with (
        psycopg.connect(team.urls["alice"]) as first,
        psycopg.connect(team.urls["alice"], autocommit=True) as retry,
    ):
        got = first.execute(SEND, (team.name, "bob", key, "alice", _body("once"))).fetchone()
        assert got is not None and got[1:] == (1, True)
        thread = threading.Thread(
            target=lambda: answers.append(
                retry.execute(SEND, (team.name, "bob", key, "alice", _body("once"))).fetchone()
            )
        )
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # waiting on the counter's row
        first.commit()
        thread.join(30)
    assert answers == [(got[0], 1, False)]
    assert _counter(engine.admin_url, team.name, "bob") == 1


def test_inbox_numbers_are_told_for_the_callers_own_team_only(engine: Engine) -> None:
    team = engine.team(["alice", "mallory"])
    other = engine.team(["carol"])
    with Link(team.urls["alice"]) as link:
        EngineMailbox(link, team.name).send("mallory", InboxMessage(sender="alice", text="a"))
    with Link(other.urls["carol"]) as link:
        EngineMailbox(link, other.name).send("team-lead", InboxMessage(sender="carol", text="c"))
    number = "SELECT teamdeck.inbox_number(%s, %s)"
    with psycopg.connect(team.urls["mallory"], autocommit=True) as mallory:
        assert mallory.execute(number, (team.name, "mallory")).fetchone() != (None,)
        assert mallory.execute(number, (other.name, "team-lead")).fetchone() == (None,)
    with psycopg.connect(other.urls["carol"], autocommit=True) as carol:
        assert carol.execute(number, (other.name, "team-lead")).fetchone() != (None,)


def test_a_deleted_team_takes_its_messages_with_it(engine: Engine) -> None:
    team = engine.team(["alice", "bob"])
    with Link(team.urls["alice"]) as link:
        EngineMailbox(link, team.name).send("bob", InboxMessage(sender="alice", text="gone"))
    with psycopg.connect(engine.admin_url, autocommit=True) as admin:
        admin.execute("DELETE FROM teamdeck.teams WHERE name = %s", (team.name,))
        left = admin.execute(
            "SELECT count(*) FROM teamdeck.messages WHERE team = %s", (team.name,)
        ).fetchone()
    assert left == (0,)


@contextmanager
def _database(engine: Engine, name: str) -> Iterator[str]:
    """A database of its own on the test server; its URL."""
    with psycopg.connect(engine.admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield psycopg.conninfo.make_conninfo(engine.admin_url, dbname=name)
    finally:
        with psycopg.connect(engine.admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_the_migration_from_version_9_keeps_every_message_number_and_read_mark(
    engine: Engine,
) -> None:
    with _database(engine, f"v9_{uuid.uuid4().hex[:8]}") as url:
        with psycopg.connect(url) as conn:  # version 9, as migrate() applies it
            conn.execute(
                "CREATE SCHEMA teamdeck; CREATE TABLE teamdeck.migrations (version integer"
                " PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for version, name, sql in migrate.migrations():
                if version <= 9:
                    conn.execute(sql.encode())
                    conn.execute("INSERT INTO teamdeck.migrations VALUES (%s, %s)", (version, name))
            conn.execute("INSERT INTO teamdeck.teams (name) VALUES ('m')")
            conn.execute("INSERT INTO teamdeck.members (team, name) VALUES ('m', 'bob')")
        keys = [uuid.uuid4() for _ in range(3)]
        with psycopg.connect(url, autocommit=True) as conn:
            sent = [
                conn.execute(SEND, ("m", to, key, "team-lead", _body(f"{to} {i}"))).fetchone()
                for i, (to, key) in enumerate(zip(["bob", "bob", "team-lead"], keys, strict=True))
            ]
            conn.execute("UPDATE teamdeck.messages SET read = true WHERE seq = 1")
            assert migrate.applied(conn) == 9
            assert migrate.migrate(conn) == ["010_sends_write_less.sql"]
            migrate.check_version(conn)
            rows = conn.execute(
                "SELECT inbox, seq, recipient, body->>'text', read FROM teamdeck.messages"
                " ORDER BY inbox, seq"
            ).fetchall()
            again = conn.execute(SEND, ("m", "bob", keys[1], "team-lead", _body("bob 1")))
            assert again.fetchone() == (*sent[1][:2], False)  # type: ignore[index]  # a repeat
            nxt = conn.execute(SEND, ("m", "bob", uuid.uuid4(), "team-lead", _body("bob 3")))
            assert nxt.fetchone() == (sent[0][0], 3, True)  # type: ignore[index]
    bob, lead = sent[0][0], sent[2][0]  # type: ignore[index]
    assert rows == [
        (bob, 1, "bob", "bob 0", True),
        (bob, 2, "bob", "bob 1", False),
        (lead, 1, "team-lead", "team-lead 2", True),
    ]


def test_a_sent_message_reads_back_as_it_was_written(engine: Engine) -> None:
    """The client writes the body as pydantic's JSON text (``body_json``), not through a dict:
    what the recipient reads is what ``to_json_dict`` gives, unknown fields and nulls in
    them included, whichever way the body went."""
    team = engine.team(["alice", "bob"])
    sent = [
        InboxMessage(sender="alice", text="plain"),
        InboxMessage.model_validate(
            {
                "from": "alice",
                "text": "t",
                "summary": "s",
                "color": None,
                "custom": {"x": None},
                "timestamp": "2026-01-01T00:00:00.000Z",
            }  # fmt: skip
        ),
        InboxMessage.model_validate({"from": "alice", "text": "null kept", "gone": None}),
    ]
    with Link(team.urls["alice"]) as link:
        box = EngineMailbox(link, team.name)
        for message in sent:
            assert box.append("bob", message)
    with Link(team.urls["bob"]) as link:
        got = EngineMailbox(link, team.name).read("bob")
    assert [m.to_json_dict() for m in got] == [m.to_json_dict() for m in sent]
    assert "gone" in got[2].to_json_dict() and got[1].to_json_dict()["custom"] == {"x": None}

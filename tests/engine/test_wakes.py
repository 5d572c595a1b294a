"""Schema version 7's wakes: a write of a task records what it changed in its own session, and
``teamdeck.wake()`` notifies it after the commit, in the write's round trip. What one session
records never reaches another's wake (a hostile agent cannot make the desk's wake carry its
payloads), a write that rolls back leaves nothing to wake. A send (schema version 9) records
nothing: it notifies inside its own transaction (``tests/engine/test_send_commit.py``)."""

from __future__ import annotations

import psycopg

from app.engine.link import Link
from app.engine.tasks import EngineTasks
from tests.engine.pg import Engine, commits


def _due(conn: psycopg.Connection) -> str:
    row = conn.execute("SELECT current_setting('teamdeck.wake', true)").fetchone()
    return str(row[0] or "") if row else ""


def test_a_hostile_sessions_wakes_stay_its_own_and_a_rolled_back_write_wakes_nothing(
    engine: Engine,
) -> None:
    team = engine.team(["alice", "mallory"])
    with (
        psycopg.connect(team.urls["mallory"], autocommit=True) as mallory,
        psycopg.connect(team.desk_url, autocommit=True) as desk,
    ):
        mallory.execute("SELECT teamdeck.wake_later('t:1,m:1:999999')")
        mallory.execute("SELECT set_config('teamdeck.wake', 'p:,t:2', false)")
        assert _due(desk) == ""
        row = desk.execute("SELECT teamdeck.wake()").fetchone()
        assert row is not None and row[0] == 0  # nothing of mallory's
        # A send refused by the server (a forged sender) records nothing in the session.
        with mallory.transaction():
            mallory.execute("SELECT set_config('teamdeck.wake', '', false)")
        try:
            mallory.execute(
                "SELECT teamdeck.send(%s, 'alice', gen_random_uuid(), 'alice', '{}'::jsonb)",
                (team.name,),
            )
        except psycopg.errors.InsufficientPrivilege:
            pass
        else:
            raise AssertionError("a forged sender was accepted")
        assert _due(mallory) == ""
        # A send records nothing in the session (schema version 9: it notifies in its own
        # transaction), and a task's write that rolls back leaves nothing to wake.
        with mallory.transaction(force_rollback=True):
            mallory.execute(
                "SELECT teamdeck.send(%s, 'alice', gen_random_uuid(), 'mallory', '{}'::jsonb)",
                (team.name,),
            )
            assert _due(mallory) == ""
            mallory.execute("INSERT INTO teamdeck.tasks (team, subject) VALUES (%s, 't')",
                            (team.name,))  # fmt: skip
            assert _due(mallory).startswith("t:")
        assert _due(mallory) == ""


def test_a_tasks_write_wakes_after_its_commit_in_a_transaction_of_its_own(
    engine: Engine,
) -> None:
    team = engine.team(["alice", "bob"])
    with (
        Link(team.urls["alice"], max_size=1) as link,
        psycopg.connect(team.urls["bob"], autocommit=True) as bob,
    ):
        bob.execute("LISTEN teamdeck")
        board = EngineTasks(link, team.name)
        with commits(engine.admin_url) as counted:
            board.create("one")
        notes = list(bob.notifies(timeout=10, stop_after=1))
        assert len(notes) == 1 and notes[0].payload.startswith("t:")
        # The write's commit wrote the task; the wake's, nothing: two transactions.
        assert (counted.data, counted.bare) == (1, 1)
        assert link.run(_due) == ""  # nothing left to wake on the writer's session


def test_a_wake_notifies_one_payload_as_it_is_and_a_list_each_id_once(engine: Engine) -> None:
    """Schema version 8: a single payload (a send's, a claim's) is notified without splitting
    it; a batch's list, each distinct id once."""
    team = engine.team(["alice", "bob"])
    with (
        psycopg.connect(team.urls["alice"], autocommit=True) as alice,
        psycopg.connect(team.urls["bob"], autocommit=True) as bob,
    ):
        bob.execute("LISTEN teamdeck")
        alice.execute("SELECT teamdeck.wake_later('t:900000001')")
        assert alice.execute("SELECT teamdeck.wake()").fetchone() == (1,)
        for payload in ("t:900000002", "t:900000003", "t:900000002"):
            alice.execute("SELECT teamdeck.wake_later(%s)", (payload,))
        assert alice.execute("SELECT teamdeck.wake()").fetchone() == (2,)
        assert _due(alice) == ""
        ours = []
        for note in bob.notifies(timeout=10):
            if note.payload.startswith("t:9000000"):
                ours.append(note.payload)
            if len(ours) == 3:
                break
        assert sorted(ours) == ["t:900000001", "t:900000002", "t:900000003"]

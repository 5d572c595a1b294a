"""Schema version 6: a teammate's finished task and its next claim in one call of
``teamdeck.claim_next`` (SECURITY DEFINER: it writes as the tables' owner, past the policies).
A hostile agent calling it on its own login cannot complete another's task, a task nobody
claimed, or one of another team, nor claim in another's name; and a call repeated after a lost
acknowledgement completes nothing twice and claims nothing twice."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from app.engine.errors import AccessRefusedError
from app.engine.link import Link
from app.engine.tasks import EngineTasks
from tests.engine.pg import Engine

_CALL = "SELECT id, owner, status FROM teamdeck.claim_next(%s, %s, 'in_progress', %s, %s)"


def _board(engine: Engine, url: str, team: str) -> dict[str, tuple[str | None, str, int]]:
    with Link(url) as link:
        tasks = EngineTasks(link, team)
        return {t.id: (t.owner, t.status, tasks.version(t.id) or 0) for t in tasks.list()}


def test_an_agent_cannot_complete_anothers_task_while_claiming(engine: Engine) -> None:
    team, other = engine.team(["alice", "mallory"]), engine.team(["victim"])
    with Link(team.desk_url) as desk:
        board = EngineTasks(desk, team.name)
        one, two, three = (board.create(s) for s in ("one", "two", "three"))
    with Link(other.desk_url) as desk:
        theirs = EngineTasks(desk, other.name).create("theirs")
    with Link(other.urls["victim"]) as link:
        got = EngineTasks(link, other.name).claim_next("victim", status="in_progress")
        assert got is not None and got.task is not None and got.task.id == theirs.id
    with Link(team.urls["alice"]) as link:
        got = EngineTasks(link, team.name).claim_next("alice", status="in_progress")
        assert got is not None and got.task is not None and got.task.id == one.id
    before = _board(engine, team.desk_url, team.name)
    with psycopg.connect(team.urls["mallory"], autocommit=True) as conn:
        for in_team, agent, done in [
            (team.name, "mallory", one.id),  # alice's task, in its own name
            (team.name, "alice", one.id),  # alice's task, in alice's name
            (team.name, "mallory", three.id),  # a task nobody claimed
            (team.name, "mallory", "999"),  # no task
            (other.name, "mallory", theirs.id),  # another team's, in its own name
            (other.name, "victim", theirs.id),  # another team's, in its owner's name
        ]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(_CALL, (in_team, agent, uuid.uuid4(), int(done)))
    # Nothing moved: no completion, and no claim for mallory (the call is one transaction).
    assert _board(engine, team.desk_url, team.name) == before
    assert before[two.id][0] is None
    with Link(other.desk_url) as desk:
        assert EngineTasks(desk, other.name).require(theirs.id).status == "in_progress"
    # Through the client: one line, refused.
    with Link(team.urls["mallory"]) as link, pytest.raises(AccessRefusedError, match="not"):
        EngineTasks(link, team.name).claim_next("mallory", done=one.id)
    # Its owner finishes it and takes the next in the same call.
    with Link(team.urls["alice"]) as link:
        got = EngineTasks(link, team.name).claim_next("alice", status="in_progress", done=one.id)
        assert got is not None and got.task is not None and got.task.id == two.id
    after = _board(engine, team.desk_url, team.name)
    assert after[one.id][:2] == ("alice", "completed")
    assert after[two.id][:2] == ("alice", "in_progress")
    assert after[three.id][0] is None


def test_a_finish_and_claim_repeated_after_a_lost_acknowledgement_is_one(engine: Engine) -> None:
    team = engine.team(["alice"])
    with Link(team.desk_url) as desk:
        board = EngineTasks(desk, team.name)
        one, two, three = (board.create(s) for s in ("one", "two", "three"))
    with Link(team.urls["alice"]) as link:
        got = EngineTasks(link, team.name).claim_next("alice", status="in_progress")
        assert got is not None and got.task is not None and got.task.id == one.id
    token = uuid.uuid4()
    with psycopg.connect(team.urls["alice"], autocommit=True) as conn:
        first = conn.execute(_CALL, (team.name, "alice", token, int(one.id))).fetchall()
        board_then = _board(engine, team.desk_url, team.name)
        again = conn.execute(_CALL, (team.name, "alice", token, int(one.id))).fetchall()
    assert first == again == [(int(two.id), "alice", "in_progress")]
    assert _board(engine, team.desk_url, team.name) == board_then  # no version moved
    assert board_then[one.id][:2] == ("alice", "completed")
    assert board_then[three.id][0] is None

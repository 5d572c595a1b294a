"""A local teammate's claim, and the task it finished, pushed to the engine in one call.

A teammate claims through its machine's task files (Claude Code's teammates and teamdeck's own
alike: ``TaskStore.claim_next`` takes the lowest-id available task), then the board's pass
(:meth:`app.engine.board.Board.step`) pushes what changed. A claim, with the completion of the
task the teammate finished before it when the same pass carries both, goes through the
engine's own claim (``teamdeck.claim_next`` with ``p_done``, schema version 6: one call, one
statement's locks, the busy check and ``SKIP LOCKED``) when the engine's choice is the task the
files gave: the call runs in a savepoint, and if the engine would give the teammate another
task (a lower one is free there, the task was taken on another machine, the teammate still
owns an open task there), the savepoint is rolled back and the pass goes on as before: each
change a conditional update on the version it was based on, and a claim the engine refuses
undone in the files and its claimer told.

Only plain claims take this way: the task's file changed since the last pass in its owner and
status only (nobody's and pending before, the member's after), the finished one in its status
only, and the engine's rows did not move meanwhile. Anything else is the conditional updates'.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any, Protocol

import psycopg
from psycopg.rows import dict_row

from app.engine.errors import AccessRefusedError
from app.engine.link import WAKE_DUE, Link
from app.engine.task_fields import FIELDS, fields_of, stamp

if TYPE_CHECKING:
    from app.core.models import Task

_DONE = ("completed", "deleted")


class Board(Protocol):
    """What a claim needs of the relay's board (``board.Board``)."""

    team: str
    link: Link
    local: set[str]


class _Other(Exception):
    """The engine's claim is not the files' (its savepoint is rolled back)."""


def _only(before: dict[str, Any], after: dict[str, Any], *keys: str) -> bool:
    """``after`` differs from ``before`` in ``keys`` at most."""
    return all(before.get(k) == after.get(k) for k in set(before) | set(after) if k not in keys)


def plain_claims(
    board: Board,
    engine: dict[str, dict[str, Any]],
    files: dict[str, Task],
    state: dict[str, dict[str, Any]],
) -> int:
    """Push each local member's plain claim (and its plain completion) in one call; the
    engine's rows and the pass's state are brought up to date for the tasks pushed, which the
    pass then finds in step. How many tasks were pushed."""
    claimed: dict[str, list[str]] = {}
    finished: dict[str, list[str]] = {}
    for task_id, task in files.items():
        row, last = engine.get(task_id), state.get(task_id)
        if row is None or last is None or row["version"] != last["v"]:
            continue
        before, mine = json.loads(last["f"]), fields_of(task)
        owner = mine["owner"]
        if owner not in board.local or before == mine:
            continue
        if (
            before["owner"] is None
            and before["status"] == "pending"
            and mine["status"] not in _DONE
            and _only(before, mine, "owner", "status")
        ):
            claimed.setdefault(owner, []).append(task_id)
        elif (
            before["owner"] == owner
            and before["status"] not in _DONE
            and mine["status"] == "completed"
            and _only(before, mine, "status")
        ):
            finished.setdefault(owner, []).append(task_id)
    pushed = 0
    for member, ids in sorted(claimed.items()):
        done = finished.get(member, [])
        if len(ids) != 1 or len(done) > 1:
            continue
        rows = _claim(board, member, ids[0], files[ids[0]].status, done[0] if done else None)
        for row in rows:
            task_id = str(row["id"])
            engine[task_id] = row
            state[task_id] = {"v": row["version"], "f": stamp({k: row[k] for k in FIELDS})}
            pushed += 1
    return pushed


def _claim(
    board: Board, member: str, task_id: str, status: str, done: str | None
) -> list[dict[str, Any]]:
    """``teamdeck.claim_next`` for ``member`` (finishing ``done``), kept only if the engine
    gave it ``task_id``: the rows of the tasks it changed, or none."""
    cols = ", ".join(FIELDS)
    ids = [int(task_id)] + ([int(done)] if done is not None else [])

    def call(conn: psycopg.Connection) -> list[dict[str, Any]]:
        try:
            with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                got = cur.execute(
                    "SELECT id FROM teamdeck.claim_next(%s, %s, %s, %s, %s)",
                    (board.team, member, status, str(uuid.uuid4()),
                     int(done) if done is not None else None),
                ).fetchall()  # fmt: skip
                if [str(r["id"]) for r in got] != [task_id]:
                    raise _Other
                rows = cur.execute(
                    f"SELECT id, version, {cols} FROM teamdeck.tasks"
                    " WHERE team = %s AND id = ANY (%s)",
                    (board.team, ids),
                ).fetchall()
        except _Other:
            return []
        if not board.link.in_batch:
            conn.execute(WAKE_DUE)  # committed on its own: its wake, after the commit
        return rows

    try:
        return board.link.run(call)
    except AccessRefusedError:  # ``done`` is not the member's in the engine
        return []

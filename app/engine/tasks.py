"""One team's task board in the engine (``app.core.store.TaskStore``).

``claim_next`` is one call (``teamdeck.claim_next``, schema version 4): the lowest-id pending,
unowned task whose ``blockedBy`` are all resolved, if the claimer owns no open task, locked
with ``FOR UPDATE SKIP LOCKED`` so racing claimers each take a different row and none waits.
Each claim carries a token: a claim repeated after a lost acknowledgement finds the task it
took instead of taking a second one. A teammate that finishes its task and takes the next
passes the finished one (``done``, schema version 6): both in the same call, one commit instead
of two. Each write wakes the watchers with the ids it changed in the same round trip, after its
commit (``Link.write``, schema version 7).
Updates bump ``version``; ``update(..., version=N)`` changes the task only if nobody else has.
"""

from __future__ import annotations

import builtins
import uuid as uuidlib
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from app.core.errors import NotFoundError
from app.core.models import Task
from app.core.task_claims import ClaimResult
from app.core.task_files import check_status
from app.engine.errors import EngineError
from app.engine.link import Link

_COLUMNS = (
    "id, subject, description, active_form, status, owner, blocks, blocked_by, metadata, version"
)
_OPEN = "status NOT IN ('completed', 'deleted')"
_VISIBLE = "coalesce(metadata->>'_internal', '') IN ('', 'false')"


def _unblocked(task: str) -> str:
    """Every blocker of the task aliased ``task`` resolved (or not a task): one primary-key
    lookup per blocker (schema version 3's ``task_numbers``), whatever the board's size."""
    return f"""({task}.blocked_by = '{{}}' OR NOT EXISTS (
      SELECT 1 FROM unnest(teamdeck.task_numbers({task}.blocked_by)) r (id)
      WHERE (SELECT b.status FROM teamdeck.tasks b WHERE b.team = {task}.team AND b.id = r.id)
        NOT IN ('completed', 'deleted')))"""


CLAIM_NEXT = (
    f"SELECT {_COLUMNS} FROM teamdeck.claim_next(%(team)s, %(agent)s, %(status)s, %(token)s,"
    " %(done)s)"
)
"""The claim (schema version 6's ``teamdeck.claim_next``): the task ``done`` completed if given,
then the claim this token made before if any (a repeat after a lost link), else the next
available task, in one call and one transaction."""


class VersionConflictError(EngineError):
    """The task changed since the version the update was based on."""


def _task(row: dict[str, Any]) -> Task:
    return Task(
        id=str(row["id"]),
        subject=row["subject"],
        description=row["description"],
        active_form=row["active_form"],
        status=row["status"],
        owner=row["owner"],
        blocks=list(row["blocks"]),
        blocked_by=list(row["blocked_by"]),
        metadata=row["metadata"],
    )


class EngineTasks:
    """One team's tasks, through one role's eyes."""

    def __init__(self, link: Link, team: str) -> None:
        self.link = link
        self.team = team

    def _rows(self, sql: str, params: Any) -> list[dict[str, Any]]:
        def query(conn: psycopg.Connection) -> list[dict[str, Any]]:
            with conn.cursor(row_factory=dict_row) as cur:
                return cur.execute(sql, params).fetchall()

        return self.link.run(query)

    def _write(self, sql: str, params: Any) -> list[dict[str, Any]]:
        """The rows of one write (each with its ``id``); the watchers are woken for every task
        it changed (the ones it returns, and a finished task a claim completed)."""
        return self.link.write(sql, params, row_factory=dict_row)

    def create(
        self,
        subject: str,
        description: str = "",
        *,
        active_form: str | None = None,
        metadata: dict[str, Any] | None = None,
        owner: str | None = None,
        status: str = "pending",
    ) -> Task:
        """A new task. Its key makes a create repeated after a lost link find the task the
        first attempt made instead of making a second one."""
        if not subject.strip():
            raise ValueError("task subject must not be empty")
        check_status(status)
        key = str(uuidlib.uuid4())
        params = (
            self.team,
            subject,
            description,
            active_form,
            status,
            owner,
            Jsonb(metadata) if metadata is not None else None,
            key,
        )
        rows = self._write(
            "WITH made AS (INSERT INTO teamdeck.tasks (team, subject, description, active_form,"
            " status, owner, metadata, create_key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            f" ON CONFLICT (create_key) DO NOTHING RETURNING {_COLUMNS})"
            f" SELECT * FROM made UNION ALL SELECT {_COLUMNS} FROM teamdeck.tasks"
            " WHERE create_key = %s AND NOT EXISTS (SELECT 1 FROM made)",
            (*params, key),
        )
        return _task(rows[0])

    def get(self, task_id: str) -> Task | None:
        try:
            number = int(task_id)
        except ValueError:
            return None
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM teamdeck.tasks WHERE team = %s AND id = %s",
            (self.team, number),
        )
        return _task(rows[0]) if rows else None

    def version(self, task_id: str) -> int | None:
        rows = self._rows(
            "SELECT version FROM teamdeck.tasks WHERE team = %s AND id = %s",
            (self.team, int(task_id)),
        )
        return int(rows[0]["version"]) if rows else None

    def require(self, task_id: str) -> Task:
        task = self.get(task_id)
        if task is None:
            raise NotFoundError(f"task #{task_id} does not exist in team {self.team!r}")
        return task

    def list(self, *, include_internal: bool = False) -> builtins.list[Task]:
        where = "" if include_internal else f" AND {_VISIBLE}"
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM teamdeck.tasks WHERE team = %s{where} ORDER BY id",
            (self.team,),
        )
        return [_task(r) for r in rows]

    def available(self) -> builtins.list[Task]:
        tasks = self.list()
        open_ids = {t.id for t in self.list(include_internal=True) if not t.is_resolved}
        return [
            t
            for t in tasks
            if t.status == "pending" and not t.owner and not (set(t.blocked_by) & open_ids)
        ]

    def update(
        self,
        task_id: str,
        *,
        version: int | None = None,
        **fields: Any,
    ) -> Task:
        """Change columns of a task (``status``, ``owner``, ``subject``, ``description``,
        ``active_form``, ``metadata``); with ``version``, only if the task is still at that
        version (VersionConflictError otherwise)."""
        allowed = {"status", "owner", "subject", "description", "active_form", "metadata"}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"cannot update {', '.join(sorted(unknown))}")
        if "status" in fields and fields["status"] is not None:
            check_status(fields["status"])
        if "metadata" in fields and fields["metadata"] is not None:
            fields["metadata"] = Jsonb(fields["metadata"])
        sets = ", ".join(f"{name} = %({name})s" for name in fields) or "version = version"
        where = "team = %(team)s AND id = %(id)s"
        if version is not None:
            where += " AND version = %(version)s"
        params = {**fields, "team": self.team, "id": int(task_id), "version": version}
        rows = self._write(
            f"UPDATE teamdeck.tasks SET {sets} WHERE {where} RETURNING {_COLUMNS}",
            params,
        )
        if rows:
            return _task(rows[0])
        self.require(task_id)
        raise VersionConflictError(
            f"task #{task_id} changed since version {version}: read it again"
        )

    # ------------------------------------------------------------------ claims

    def claim(
        self,
        task_id: str,
        agent: str,
        *,
        check_busy: bool = False,
        status: str | None = None,
    ) -> ClaimResult:
        """One conditional UPDATE; on a miss, the task is read to say why."""
        if status is not None:
            check_status(status)
        busy = (
            f" AND NOT EXISTS (SELECT 1 FROM teamdeck.tasks o WHERE o.team = %(team)s AND \
o.owner = %(agent)s AND o.id <> t.id AND o.{_OPEN})"
            if check_busy
            else ""
        )
        rows = self._write(
            "UPDATE teamdeck.tasks t SET owner = %(agent)s, status = coalesce(%(status)s,"
            " t.status) WHERE t.team = %(team)s AND t.id = %(id)s"
            " AND (t.owner IS NULL OR t.owner = %(agent)s)"
            f" AND t.{_OPEN} AND {_unblocked('t')}"
            f"{busy} RETURNING {_COLUMNS}",
            {"agent": agent, "status": status, "team": self.team, "id": int(task_id)},
        )
        if rows:
            return ClaimResult(True, None, _task(rows[0]))
        task = self.get(task_id)
        if task is None:
            return ClaimResult(False, "task_not_found")
        if task.owner and task.owner != agent:
            return ClaimResult(False, "already_claimed", task)
        if task.is_resolved:
            return ClaimResult(False, "already_resolved", task)
        blockers = [b for b in task.blocked_by if (t := self.get(b)) and not t.is_resolved]
        if blockers:
            return ClaimResult(False, "blocked", task, blocked_by=blockers)
        mine = [
            t.id
            for t in self.list(include_internal=True)
            if t.owner == agent and t.id != task.id and not t.is_resolved
        ]
        return ClaimResult(False, "agent_busy", task, busy_with=mine)

    def claim_next(
        self, agent: str, *, status: str | None = None, done: str | None = None
    ) -> ClaimResult | None:
        """The next available task for ``agent`` in one statement; ``None`` if there is
        none, ``agent_busy`` if ``agent`` owns an open task. With ``done``, ``agent``'s task
        of that id is completed first, in the same transaction (``AccessRefusedError`` if it
        is not ``agent``'s)."""
        if status is not None:
            check_status(status)
        params = {
            "agent": agent,
            "status": status,
            "team": self.team,
            "token": str(uuidlib.uuid4()),
            "done": int(done) if done is not None else None,
        }
        rows = self._write(CLAIM_NEXT, params)
        if rows:
            return ClaimResult(True, None, _task(rows[0]))
        mine = self._rows(
            f"SELECT id FROM teamdeck.tasks WHERE team = %s AND owner = %s AND {_OPEN} ORDER BY id",
            (self.team, agent),
        )
        if mine:
            return ClaimResult(False, "agent_busy", busy_with=[str(r["id"]) for r in mine])
        return None

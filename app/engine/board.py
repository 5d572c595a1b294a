"""The task board across machines: each machine's task files are the projection of the
engine's board, and the engine decides.

One pass (:meth:`Board.step`) compares three things per task: the engine's row (with its
``version``), the local file, and what the last pass left both at (kept in
``{home}/engine/cursors/{team}.tasks.json``: the engine version and the file's fields then).

* Only the engine changed: the file takes the engine's task.
* Only the file changed (a claim, a completion, the lead's assignment): the change goes to the
  engine as a conditional ``UPDATE`` on the version it was based on, through this machine's
  role (row-level security: an agent changes only tasks that are nobody's or its own). A
  member's plain claim, with the task it finished, goes as the engine's own claim when the
  engine would give it the same task (``app.engine.board_claims``).
* Both changed, or the engine refused the change: the engine wins. The file is put back to the
  engine's task, and a local member whose claim was undone is told, by a message in its inbox:
  Claude Code's teammates and teamdeck's own claim through their local files, so a claim made
  on two machines at once is decided here, and the loser hears of it.

The desk's machine (the lead's) also sends the tasks its files hold and the engine lacks, with
the same id (the desk may name it), so a task is ``#N`` on every machine. A task made on a
teammate's machine (its member's ``TaskCreate``) goes to the engine through that machine's
role, which takes the engine's next id: when that is not the id the file gave it (another
machine made ``#N`` first), the task moves to its new id, the file ``#N`` becomes the
engine's ``#N``, and the member here is told. So does a task the lead's files made under an
id another machine took first.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from app.core.errors import CorruptFileError
from app.core.files import atomic_write_json
from app.core.home import Home
from app.core.models import InboxMessage, Task
from app.core.paths import LEAD_NAME
from app.engine.board_claims import plain_claims
from app.engine.errors import AccessRefusedError
from app.engine.link import Link
from app.engine.task_fields import FIELDS, fields_of, stamp


def _refs(task: Task) -> tuple[list[str], list[str]]:
    return list(task.blocks), list(task.blocked_by)


def _renumbered(task: Task, moves: dict[str, str]) -> Task:
    """``task`` with the ids its ``blocks``/``blockedBy`` name moved by ``moves`` (this
    machine's id -> the engine's), all at once: a chain of moves is not followed."""
    if not moves:
        return task
    return task.model_copy(
        update={
            "blocks": [moves.get(r, r) for r in task.blocks],
            "blocked_by": [moves.get(r, r) for r in task.blocked_by],
        }
    )


class Board:
    def __init__(
        self, home: Home, team: str, link: Link, *, local: set[str], desk: bool = False
    ) -> None:
        self.home = home
        self.team = team
        self.link = link
        self.local = set(local)
        self.desk = desk
        self.reverted = 0

    # ------------------------------------------------------------------ state

    @property
    def _path(self) -> Path:
        return self.home.root / "engine" / "cursors" / f"{self.team}.tasks.json"

    def _state(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise CorruptFileError(self._path, str(exc)) from None
        return dict(data) if isinstance(data, dict) else {}

    # ------------------------------------------------------------------ engine

    def _engine(self) -> dict[str, dict[str, Any]]:
        def query(conn: psycopg.Connection) -> list[dict[str, Any]]:
            with conn.cursor(row_factory=dict_row) as cur:
                return cur.execute(
                    "SELECT id, version, " + ", ".join(FIELDS) + " FROM teamdeck.tasks"
                    " WHERE team = %s ORDER BY id",
                    (self.team,),
                ).fetchall()

        return {str(r["id"]): r for r in self.link.read(query)}

    def _insert(self, task: Task) -> dict[str, Any] | None:
        """The desk's task under the id its files gave it (the engine's row if it has one)."""
        f = fields_of(task)
        cols = ", ".join(FIELDS)
        rows = self.link.write(
            f"WITH made AS (INSERT INTO teamdeck.tasks (team, id, {cols})"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            f" ON CONFLICT (team, id) DO NOTHING RETURNING id, version, {cols})"
            f" SELECT * FROM made UNION ALL SELECT id, version, {cols} FROM teamdeck.tasks"
            " WHERE team = %s AND id = %s AND NOT EXISTS (SELECT 1 FROM made)",
            (self.team, int(task.id), f["subject"], f["description"], f["active_form"],
             f["status"], f["owner"], f["blocks"], f["blocked_by"],
             Jsonb(f["metadata"]) if f["metadata"] is not None else None,
             self.team, int(task.id)),
            row_factory=dict_row,
        )  # fmt: skip
        return rows[0] if rows else None

    def _send_new(self, task: Task) -> dict[str, Any] | None:
        """A task made in this machine's files under an id the engine does not know it by:
        the engine gives it its next id (an agent's role may name none). Its key makes a send
        repeated after a lost link find the task the first one made."""
        f = fields_of(task)
        if f["owner"] not in self.local and not self.desk:
            f["owner"] = None  # an agent's role makes tasks for nobody or itself
        key = uuid.uuid5(
            uuid.NAMESPACE_URL, f"{self.team}/{sorted(self.local)}/{task.id}/{stamp(f)}"
        )
        cols = ", ".join(FIELDS)
        try:
            rows = self.link.write(
                f"WITH made AS (INSERT INTO teamdeck.tasks (team, {cols}, create_key)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                f" ON CONFLICT (create_key) DO NOTHING RETURNING id, version, {cols})"
                f" SELECT * FROM made UNION ALL SELECT id, version, {cols} FROM teamdeck.tasks"
                " WHERE create_key = %s AND NOT EXISTS (SELECT 1 FROM made)",
                (self.team, f["subject"], f["description"], f["active_form"], f["status"],
                 f["owner"], f["blocks"], f["blocked_by"],
                 Jsonb(f["metadata"]) if f["metadata"] is not None else None, key, key),
                row_factory=dict_row,
            )  # fmt: skip
        except AccessRefusedError:
            return None
        return rows[0] if rows else None

    def _made_here(self, state: dict[str, dict[str, Any]]) -> int:
        """Send the tasks made in this machine's files that the engine lacks or knows as
        another task under the same id (the desk sends the ones it lacks in :meth:`step`,
        with their ids); how many moved."""
        tasks = self.home.tasks(self.team)
        moved = 0
        made = sorted(
            (t for t in tasks.list(include_internal=True) if t.id not in state),
            key=lambda t: int(t.id),
        )
        if not made:
            return 0  # the usual pass: every file is one the passes know
        engine = self._engine()
        moves: dict[str, str] = {}
        sent_here: list[tuple[str, Task]] = []
        for task in made:
            row = engine.get(task.id)
            if row is None and self.desk:
                continue
            if row is not None and stamp(fields_of(task)) == stamp({k: row[k] for k in FIELDS}):
                continue  # the engine's, written before the last pass could say so
            sent = self._send_new(_renumbered(task, moves))
            if sent is None:
                continue
            new_id = str(sent["id"])
            written = self._write(sent, task)
            state[new_id] = {"v": sent["version"], "f": stamp(fields_of(written))}
            sent_here.append((new_id, task))
            moved += 1
            if new_id == task.id:
                continue
            moves[task.id] = new_id
            engine = self._engine()
            old = engine.get(task.id)
            if old is not None:
                state[task.id] = {
                    "v": old["version"],
                    "f": stamp(fields_of(self._write(old, None))),
                }
            else:
                tasks.delete(task.id)
            who = task.owner if task.owner in self.local else None
            who = who or (LEAD_NAME if self.desk else next(iter(sorted(self.local))))
            self.home.mailbox(self.team).append(
                who,
                InboxMessage(
                    sender=LEAD_NAME,
                    text=f"Task #{task.id} ({task.subject}) is #{new_id} on the team's board: "
                    f"another machine made a task #{task.id} first.",
                    summary=f"task #{task.id} is now #{new_id}",
                ),
            )
        if moves:
            self._follow_moves(moves, sent_here, state)
        return moved

    def _follow_moves(
        self, moves: dict[str, str], sent_here: list[tuple[str, Task]], state: dict[str, Any]
    ) -> None:
        """The ``blocks``/``blockedBy`` written on this machine name tasks by the ids this
        machine gave them: where those moved, the references follow. A task sent in this pass
        is sent again with its references renumbered (one made before a task it names moved
        went out with the old id); a known task changed here since the last pass has the
        references it gained renumbered in its file (the pass then sends it). References that
        came from the engine name the engine's tasks and stay."""
        tasks = self.home.tasks(self.team)
        for new_id, made in sent_here:
            fixed = _renumbered(made, moves)
            current = tasks.get(new_id)
            if current is None or _refs(current) == _refs(fixed):
                continue
            wanted = fields_of(current) | {"blocks": fixed.blocks, "blocked_by": fixed.blocked_by}
            row = self._update(new_id, state[new_id]["v"], wanted)
            if row is not None:
                written = self._write(row, current)
                state[new_id] = {"v": row["version"], "f": stamp(fields_of(written))}
        sent = {new_id for new_id, _ in sent_here}
        for task in tasks.list(include_internal=True):
            last = state.get(task.id)
            if task.id in sent or last is None or stamp(fields_of(task)) == last["f"]:
                continue
            before = json.loads(last["f"])
            with tasks._task_lock(task.id):
                current = tasks.get(task.id)
                if current is None:
                    continue
                blocks = [r if r in before["blocks"] else moves.get(r, r) for r in current.blocks]
                blocked_by = [
                    r if r in before["blocked_by"] else moves.get(r, r) for r in current.blocked_by
                ]
                if (blocks, blocked_by) == _refs(current):
                    continue
                changed = tasks._write(
                    current.model_copy(update={"blocks": blocks, "blocked_by": blocked_by})
                )
            self.home.emit(changed)

    def _update(self, task_id: str, version: int, fields: dict[str, Any]) -> dict[str, Any] | None:
        """The engine's row after a conditional update; ``None`` when it refused."""
        params = {**fields, "team": self.team, "id": int(task_id), "version": version}
        if params["metadata"] is not None:
            params["metadata"] = Jsonb(params["metadata"])
        sets = ", ".join(f"{name} = %({name})s" for name in FIELDS)
        try:
            rows = self.link.write(
                f"UPDATE teamdeck.tasks SET {sets} WHERE team = %(team)s AND id = %(id)s"
                " AND version = %(version)s RETURNING id, version, " + ", ".join(FIELDS),
                params,
                row_factory=dict_row,
            )
        except AccessRefusedError:
            return None
        return rows[0] if rows else None

    # ------------------------------------------------------------------ files

    def _write(self, row: dict[str, Any], before: Task | None) -> Task:
        tasks = self.home.tasks(self.team)
        data = before.to_json_dict() if before is not None else {}
        data.pop("blockedBy", None)  # the engine's, below (the alias would win over it)
        data.update(
            id=str(row["id"]), subject=row["subject"], description=row["description"],
            status=row["status"], blocks=list(row["blocks"]), blocked_by=list(row["blocked_by"]),
        )  # fmt: skip
        for key, alias in (("active_form", "activeForm"), ("owner", "owner"),
                           ("metadata", "metadata")):  # fmt: skip
            data.pop(alias, None)
            data.pop(key, None)
            if row[key] is not None:
                data[key] = row[key]
        task = Task.model_validate(data)
        tasks.init()
        with tasks._task_lock(task.id):
            changed = tasks._write(task)
        mark_path = tasks.layout.task_dir(self.team) / ".highwatermark"
        mark, seen = tasks._read_highwatermark(mark_path)
        if int(task.id) > mark:
            tasks._advance_highwatermark(mark_path, int(task.id), seen)
        self.home.emit(changed)
        return task

    def _tell(self, loser: str, task_id: str, winner: str | None) -> None:
        who = f"{winner} on another machine" if winner else "another machine"
        self.reverted += 1
        self.home.mailbox(self.team).append(
            loser,
            InboxMessage(
                sender=LEAD_NAME,
                text=f"Task #{task_id} was taken by {who} first: your claim on it was undone "
                "(the team's engine decides). Pick another task.",
                summary=f"claim on #{task_id} undone",
            ),
        )

    # ------------------------------------------------------------------ a pass

    def step(self) -> int:
        """One pass; how many tasks changed on either side."""
        state = self._state()
        changed = self._made_here(state)
        engine = self._engine()
        files = {t.id: t for t in self.home.tasks(self.team).list(include_internal=True)}
        changed += plain_claims(self, engine, files, state)
        for task_id in sorted(set(engine) | set(files), key=int):
            row, task, last = engine.get(task_id), files.get(task_id), state.get(task_id)
            if row is None and task is not None:
                if not self.desk or last is not None:
                    continue  # made on this teammate's machine, or deleted in the engine
                row = self._insert(task)
                if row is None:
                    continue
                changed += 1
            elif row is not None and task is None:
                task = self._write(row, None)
                changed += 1
            assert row is not None and task is not None
            engine_moved = last is None or row["version"] != last["v"]
            mine = fields_of(task)
            file_moved = last is not None and stamp(mine) != last["f"]
            if file_moved and not engine_moved:
                after = self._update(task_id, row["version"], mine)
                if after is not None:
                    row = after
                else:
                    engine_moved = True
                    row = self._engine().get(task_id, row)
                changed += 1
            if engine_moved and stamp(mine) != stamp({k: row[k] for k in FIELDS}):
                if file_moved and mine["owner"] in self.local and mine["owner"] != row["owner"]:
                    self._tell(mine["owner"], task_id, row["owner"])
                task = self._write(row, task)
                changed += 1
            state[task_id] = {"v": row["version"], "f": stamp(fields_of(task))}
        # What the engine holds as of this pass, once it holds it: saved before the commit, a
        # pass whose commit failed would take the file's changes for the engine's.
        self.link.settled(lambda: atomic_write_json(self._path, state))
        return changed

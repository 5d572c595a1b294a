"""The shared task list: ids through ``.highwatermark``, create, update, delete, dependencies.

``TaskList`` is one team's list. Its layers, each a module: the task files on disk (paths,
locks, ids, reading and writing one file: ``app.core.task_files``), claiming
(``app.core.task_claims``), and here what changes the list itself.

Ids are monotonic: the next id is ``max(highest id on disk, .highwatermark) + 1`` and the
watermark is written on every create and delete, so an id is never reused and no task file is
ever overwritten by a create -- even if ``.highwatermark`` is missing, corrupt or too low.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

from app.core.errors import DependencyCycleError, TaskBlockedError
from app.core.events import TaskChanged
from app.core.models import Task
from app.core.task_claims import ClaimReason, ClaimResult, TaskClaims, UnassignResult
from app.core.task_files import check_status

__all__ = ["ClaimReason", "ClaimResult", "TaskList", "UnassignResult"]

_UNSET: Any = object()


class TaskList(TaskClaims):
    """The task list of one team (``tasks/{team}/``): ``get``/``list``/``scan`` and the files
    (``TaskFiles``), ``claim``/``claim_next``/``unassign`` (``TaskClaims``), and below."""

    # ------------------------------------------------------------------ create

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
        if not subject.strip():
            raise ValueError("task subject must not be empty")
        check_status(status)
        folder = self.layout.task_dir(self.team)  # its paths checked once, not per file
        with self._list_lock(folder):
            mark_path = folder / ".highwatermark"
            mark, seen = self._read_highwatermark(mark_path)
            new_id = max(self._highest_id(), mark) + 1
            while (folder / f"{new_id}.json").exists():  # paranoia
                new_id += 1
            fields: dict[str, Any] = {
                "id": str(new_id),
                "subject": subject,
                "description": description,
            }
            if active_form is not None:
                fields["active_form"] = active_form
            fields["status"] = status
            if owner is not None:
                fields["owner"] = owner
            fields["blocks"] = []
            fields["blocked_by"] = []
            if metadata is not None:
                fields["metadata"] = metadata
            task = Task(**fields)
            changed = self._write(task, folder / f"{new_id}.json")
            self._advance_highwatermark(mark_path, new_id, seen)
        self.home.emit(changed)
        return task

    # ------------------------------------------------------------------ update

    def update(
        self,
        task_id: str,
        *,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        status: str | None = None,
        owner: str | None = _UNSET,
        metadata: dict[str, Any] | None = None,
        add_blocks: builtins.list[str] | tuple[str, ...] = (),
        add_blocked_by: builtins.list[str] | tuple[str, ...] = (),
    ) -> Task:
        """Change fields of a task. ``owner=None`` unassigns; ``metadata`` keys are merged
        (a ``None`` value deletes a key). Dependencies are added symmetrically."""
        if status is not None:
            check_status(status)
        if not self.layout.task_path(self.team, task_id).exists():
            self.require(task_id)  # NotFoundError before any lock file is made for the id
        if add_blocks or add_blocked_by:
            for other in add_blocks:
                self.add_dependency(task_id, other)
            for other in add_blocked_by:
                self.add_dependency(other, task_id)
        with self._task_lock(task_id):
            task = self.require(task_id)
            before = task.to_json_dict()
            if subject is not None:
                task.subject = subject
            if description is not None:
                task.description = description
            if active_form is not None:
                task.active_form = active_form
            if status == "in_progress" and task.status != "in_progress":
                blockers = self.open_blockers(task)
                if blockers:
                    raise TaskBlockedError(task.id, blockers)
            if status is not None:
                task.status = status
            if owner is not _UNSET:
                task.owner = owner or None
            if metadata is not None:
                merged = dict(task.metadata or {})
                for key, value in metadata.items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                task.metadata = merged
            if task.to_json_dict() == before:
                return task  # nothing changed: no write, no event
            changed = self._write(task)
        self.home.emit(changed)
        return task

    def _set_links(
        self,
        task_id: str,
        *,
        blocks: builtins.list[str] | None = None,
        blocked_by: builtins.list[str] | None = None,
    ) -> None:
        with self._task_lock(task_id):
            task = self.get(task_id)
            if task is None:
                return
            if blocks is not None:
                task.blocks = blocks
            if blocked_by is not None:
                task.blocked_by = blocked_by
            changed = self._write(task)
        self.home.emit(changed)

    # ------------------------------------------------------------------ dependencies

    def add_dependency(self, blocker_id: str, blocked_id: str) -> None:
        """``blocker_id`` blocks ``blocked_id``: kept symmetric in ``blocks``/``blockedBy``.

        DependencyCycleError if it would make a cycle (including a task blocking itself)."""
        blocker_id, blocked_id = str(blocker_id), str(blocked_id)
        with self._list_lock():
            blocker = self.require(blocker_id)
            blocked = self.require(blocked_id)
            if blocker_id == blocked_id or self._reaches(blocked_id, blocker_id):
                raise DependencyCycleError(
                    f"#{blocker_id} cannot block #{blocked_id}: that would make a cycle"
                )
            if blocked_id not in blocker.blocks:
                self._set_links(blocker_id, blocks=[*blocker.blocks, blocked_id])
            if blocker_id not in blocked.blocked_by:
                self._set_links(blocked_id, blocked_by=[*blocked.blocked_by, blocker_id])

    def _reaches(self, start: str, goal: str) -> bool:
        """Whether ``goal`` is reachable from ``start`` along ``blocks`` edges."""
        tasks = {t.id: t for t in self.list(include_internal=True)}
        seen: set[str] = set()
        stack = [start]
        while stack:
            current = stack.pop()
            if current == goal:
                return True
            if current in seen:
                continue
            seen.add(current)
            task = tasks.get(current)
            if task is not None:
                stack.extend(task.blocks)
            # blockedBy edges point the other way; include them so a one-sided file still counts
            stack.extend(t.id for t in tasks.values() if current in t.blocked_by)
        return False

    def remove_dependency(self, blocker_id: str, blocked_id: str) -> None:
        with self._list_lock():
            blocker = self.get(blocker_id)
            blocked = self.get(blocked_id)
            if blocker is not None and blocked_id in blocker.blocks:
                self._set_links(blocker_id, blocks=[b for b in blocker.blocks if b != blocked_id])
            if blocked is not None and blocker_id in blocked.blocked_by:
                self._set_links(
                    blocked_id, blocked_by=[b for b in blocked.blocked_by if b != blocker_id]
                )

    # ------------------------------------------------------------------ delete

    def delete(self, task_id: str) -> Task:
        """Delete a task file, remove it from every other task's links, keep ids monotonic."""
        task_id = str(task_id)
        with self._list_lock():
            task = self.require(task_id)
            mark = max(self.highwatermark(), int(task_id), *(self.ids_on_disk() or [0]))
            self._write_highwatermark(mark)
            path = Path(self.layout.task_path(self.team, task_id))
            with self._task_lock(task_id):
                path.unlink(missing_ok=True)
                lock = path.with_name(path.name + ".lock")
                if not lock.is_dir():  # a flock file (a mkdir lock goes at release)
                    # An updater waiting on it finds no task once it holds it, and the id is
                    # never given out again.
                    lock.unlink(missing_ok=True)
            for other in self.list(include_internal=True):
                if task_id in other.blocks or task_id in other.blocked_by:
                    self._set_links(
                        other.id,
                        blocks=[b for b in other.blocks if b != task_id],
                        blocked_by=[b for b in other.blocked_by if b != task_id],
                    )
        self.home.emit(TaskChanged(self.team, task_id, deleted=True))
        return task

"""The shared task list: ids through ``.highwatermark``, update, delete, claim, dependencies.

Locks (as Claude Code): creating a task, deleting one, changing dependencies and busy-checked
claims hold the list's ``.lock``; updating or claiming one task holds ``{id}.json.lock``.
Ids are monotonic: the next id is ``max(highest id on disk, .highwatermark) + 1`` and the
watermark is written on every create and delete, so an id is never reused and no task file is
ever overwritten by a create -- even if ``.highwatermark`` is missing, corrupt or too low.
"""

from __future__ import annotations

import builtins
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from app.core.errors import CorruptFileError, DependencyCycleError, NotFoundError
from app.core.events import TaskChanged, TaskState
from app.core.files import (
    atomic_write_bytes,
    atomic_write_json,
    ensure_dir,
    file_identity,
    load_json,
    new_file_mode,
    parse_with_retry,
    quarantine,
    read_bytes,
)
from app.core.models import TASK_STATUSES, Task
from app.core.paths import is_task_id

if TYPE_CHECKING:
    from app.core.home import Home

ClaimReason = Literal[
    "task_not_found", "already_claimed", "already_resolved", "blocked", "agent_busy"
]
_UNSET: Any = object()
_LEADING_INT = re.compile(r"\s*([0-9]+)")


@dataclass
class ClaimResult:
    success: bool
    reason: ClaimReason | None = None
    task: Task | None = None
    busy_with: list[str] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)


@dataclass
class UnassignResult:
    unassigned_tasks: list[dict[str, str]]
    notification_message: str


def _parse_task(data: bytes) -> Task:
    raw = load_json(data)
    if not isinstance(raw, dict):
        raise ValueError("task file is not a JSON object")
    try:
        return Task.model_validate(raw)
    except Exception as exc:
        raise ValueError(f"invalid task: {str(exc).splitlines()[0]}") from None


class TaskList:
    """The task list of one team (``tasks/{team}/``)."""

    def __init__(self, home: Home, team: str) -> None:
        self.home = home
        self.team = team
        self.layout = home.layout
        self.dir = self.layout.task_dir(team)

    def init(self) -> None:
        """Create the directory and the ``.lock`` file Claude Code's lock needs."""
        ensure_dir(self.dir)
        lock = self.layout.tasklist_lock_path(self.team)
        if not lock.exists():
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                if new_file_mode(lock) != 0o600:
                    os.fchmod(fd, new_file_mode(lock))
            finally:
                os.close(fd)

    def _list_lock(self) -> Any:
        self.init()
        return self.home.lock(self.layout.tasklist_lock_path(self.team))

    def _task_lock(self, task_id: str) -> Any:
        return self.home.lock(self.layout.task_path(self.team, task_id))

    # ------------------------------------------------------------------ ids

    def ids_on_disk(self) -> list[int]:
        if not self.dir.is_dir():
            return []
        ids = []
        for entry in os.scandir(self.dir):
            name = entry.name
            if name.endswith(".json") and is_task_id(name[:-5]):
                ids.append(int(name[:-5]))
        return sorted(ids)

    def highwatermark(self) -> int:
        """The stored watermark; 0 if missing. Read like Claude Code's ``parseInt``: leading
        digits count (``"12\\n"``, ``"12abc"``). A file without them is corrupt: a copy is saved
        aside and it reads as 0 -- ids still never collide, as ``create`` also takes the highest
        id on disk (only an id deleted above that could be reused)."""
        path = self.layout.highwatermark_path(self.team)
        data = read_bytes(path)
        if data is None:
            return 0
        match = _LEADING_INT.match(data.decode("utf-8", "replace"))
        if match:
            return int(match.group(1))
        quarantine(path, data)
        return 0

    def _write_highwatermark(self, value: int) -> None:
        atomic_write_bytes(self.layout.highwatermark_path(self.team), str(value).encode())

    # ------------------------------------------------------------------ read

    def get(self, task_id: str) -> Task | None:
        """The task, ``None`` if it does not exist; CorruptFileError if it cannot be read.

        The id is the file's: a file whose ``id`` field disagrees with its name is read with
        the name's id (as Claude Code's update does), so a rewrite can never land on -- and
        overwrite -- another task's file."""
        return self._read(self.layout.task_path(self.team, task_id))

    @staticmethod
    def _read(path: Path) -> Task | None:
        task = parse_with_retry(path, _parse_task)
        if task is not None and task.id != path.stem:
            task.id = path.stem
        return task

    def require(self, task_id: str) -> Task:
        task = self.get(task_id)
        if task is None:
            raise NotFoundError(f"task #{task_id} does not exist in team {self.team!r}")
        return task

    def list(self, *, include_internal: bool = False) -> list[Task]:
        """All readable tasks in id order (``_internal`` ones hidden unless asked)."""
        tasks, _ = self.scan(include_internal=include_internal)
        return tasks

    def scan(self, *, include_internal: bool = False) -> tuple[builtins.list[Task], dict[str, str]]:
        """Tasks in id order, plus one error line per unreadable task file."""
        tasks: builtins.list[Task] = []
        errors: dict[str, str] = {}
        folder = self.layout.task_dir(self.team)  # checked once per scan, not once per file
        for task_id in self.ids_on_disk():
            try:
                task = self._read(folder / f"{task_id}.json")
            except CorruptFileError as exc:
                errors[str(task_id)] = str(exc)
                continue
            if task is not None and (include_internal or not task.is_internal):
                tasks.append(task)
        return tasks, errors

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
        _check_status(status)
        with self._list_lock():
            on_disk = self.ids_on_disk()
            new_id = max(on_disk[-1] if on_disk else 0, self.highwatermark()) + 1
            while self.layout.task_path(self.team, str(new_id)).exists():  # paranoia
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
            changed = self._write(task)
            self._write_highwatermark(new_id)
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
            _check_status(status)
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

    def _write(self, task: Task) -> TaskChanged:
        """Write ``task`` (its lock held); returns the event that announces the write, with
        what was written and the file's identity (taken under the lock: exactly this file)."""
        path = self.layout.task_path(self.team, task.id)
        atomic_write_json(path, task.to_json_dict())
        state = TaskState(task.status, task.owner, task.subject, task.is_internal)
        return TaskChanged(self.team, task.id, task=state, written=file_identity(path))

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
            with self._task_lock(task_id):
                Path(self.layout.task_path(self.team, task_id)).unlink(missing_ok=True)
            for other in self.list(include_internal=True):
                if task_id in other.blocks or task_id in other.blocked_by:
                    self._set_links(
                        other.id,
                        blocks=[b for b in other.blocks if b != task_id],
                        blocked_by=[b for b in other.blocked_by if b != task_id],
                    )
        self.home.emit(TaskChanged(self.team, task_id, deleted=True))
        return task

    # ------------------------------------------------------------------ claim

    def claim(
        self,
        task_id: str,
        agent: str,
        *,
        check_busy: bool = False,
        status: str | None = None,
    ) -> ClaimResult:
        """Claim a task for ``agent``. Exactly one of many racing claimers wins.

        Failure reasons: task_not_found, already_claimed, already_resolved, blocked, agent_busy
        (``check_busy``: the agent owns another unresolved task; checked under the list lock).
        """
        task_id = str(task_id)
        if check_busy:
            with self._list_lock():
                busy = [
                    t.id
                    for t in self.list(include_internal=True)
                    if t.owner == agent and t.id != task_id and not t.is_resolved
                ]
                if busy:
                    return ClaimResult(False, "agent_busy", self.get(task_id), busy_with=busy)
                return self._claim(task_id, agent, status)
        return self._claim(task_id, agent, status)

    def _claim(self, task_id: str, agent: str, status: str | None = None) -> ClaimResult:
        """``status`` (e.g. ``in_progress``) is set in the same write as the owner."""
        if status is not None:
            _check_status(status)
        if not self.layout.task_path(self.team, task_id).exists():
            return ClaimResult(False, "task_not_found")
        with self._task_lock(task_id):
            task = self.get(task_id)
            if task is None:
                return ClaimResult(False, "task_not_found")
            if task.owner and task.owner != agent:
                return ClaimResult(False, "already_claimed", task)
            if task.is_resolved:
                return ClaimResult(False, "already_resolved", task)
            open_blockers = [b for b in task.blocked_by if self._is_open(b)]
            if open_blockers:
                return ClaimResult(False, "blocked", task, blocked_by=open_blockers)
            task.owner = agent
            if status is not None:
                task.status = status
            changed = self._write(task)
        self.home.emit(changed)
        return ClaimResult(True, None, task)

    def _is_open(self, task_id: str) -> bool:
        try:
            blocker = self.get(task_id)
        except CorruptFileError:
            return True
        return blocker is not None and not blocker.is_resolved

    def available(self) -> builtins.list[Task]:
        """Pending, unowned, unblocked tasks in id order (what an idle teammate may claim)."""
        return _available(self.list())

    def claim_next(self, agent: str, *, status: str | None = None) -> ClaimResult | None:
        """What an idle teammate does between turns (seed 002): claim the lowest-id available
        task, with the busy check, in one scan of the list under its lock.

        ``claim(id, check_busy=True)`` after ``available()`` reads every task twice, and a
        claimer that loses a race reads them all again for the next id; here the choice is
        made under the lock every busy-checked claimer takes, so racing teammates cannot pick
        the same task (the task's own lock still guards against ``TaskUpdate`` assigning it).
        ``None`` if nothing is available; ``agent_busy`` if the agent owns an unresolved task.
        """
        with self._list_lock():
            tasks = self.list(include_internal=True)
            busy = [t.id for t in tasks if t.owner == agent and not t.is_resolved]
            if busy:
                return ClaimResult(False, "agent_busy", busy_with=busy)
            for task in _available([t for t in tasks if not t.is_internal]):
                result = self._claim(task.id, agent, status)
                if result.success:
                    return result
        return None

    # ------------------------------------------------------------------ unassign

    def unassign(
        self, agent_name: str, agent_id: str | None = None, reason: str = "shutdown"
    ) -> UnassignResult:
        """Return an agent's unfinished tasks to ``pending`` with no owner (on shutdown, kill
        or crash) and build the seeds' notification for the lead."""
        owners = {agent_name, agent_id} - {None}
        owned: builtins.list[Task] = []
        # Claude Code skips only "completed"; a task marked "deleted" is not brought back either.
        for candidate in self.list(include_internal=True):
            if candidate.is_resolved or candidate.owner not in owners:
                continue
            # Re-check under the task's lock: it may have been completed or reassigned since.
            with self._task_lock(candidate.id):
                task = self.get(candidate.id)
                if task is None or task.is_resolved or task.owner not in owners:
                    continue
                task.owner = None
                task.status = "pending"
                changed = self._write(task)
            owned.append(task)
            self.home.emit(changed)
        verb = "was terminated" if reason == "terminated" else "has shut down"
        message = f"{agent_name} {verb}."
        if owned:
            listing = ", ".join(f'#{t.id} "{t.subject}"' for t in owned)
            message += (
                f" {len(owned)} task(s) were unassigned: {listing}. Use TaskList to check "
                "availability and TaskUpdate with owner to reassign them to idle teammates."
            )
        return UnassignResult([{"id": t.id, "subject": t.subject} for t in owned], message)


def _available(tasks: builtins.list[Task]) -> builtins.list[Task]:
    """The pending, unowned tasks of ``tasks`` whose blockers are all resolved (or gone)."""
    done = {t.id for t in tasks if t.is_resolved}
    known = {t.id for t in tasks}
    return [
        t
        for t in tasks
        if t.status == "pending"
        and not t.owner
        and all(b in done or b not in known for b in t.blocked_by)
    ]


def _check_status(status: str) -> None:
    if status not in TASK_STATUSES:
        raise ValueError(f"unknown task status {status!r} (use {', '.join(TASK_STATUSES)})")

"""A team's task files on disk: paths, locks, ids and the high-water mark, reading and writing.

The base of ``TaskList`` (``app.core.tasks``): everything here reads or writes one task file at
a time; the operations that need several (claims, dependencies, deletes) build on it.

Locks (as Claude Code): creating a task, deleting one, changing dependencies and busy-checked
claims hold the list's ``.lock``; updating or claiming one task holds ``{id}.json.lock``.
"""

from __future__ import annotations

import builtins
import copy
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from app.core.errors import CorruptFileError, NotFoundError, clip
from app.core.events import TaskChanged, TaskState
from app.core.files import (
    atomic_write_bytes,
    atomic_write_json,
    ensure_dir,
    file_identity,
    load_json,
    naming_full_disk,
    new_file_mode,
    parse_with_retry,
    quarantine,
    read_bytes,
)
from app.core.home_parts import HomeParts
from app.core.locks import HomeLock
from app.core.models import TASK_STATUSES, Task
from app.core.paths import is_task_id
from app.core.task_board import Board, board

_LEADING_INT = re.compile(r"\s*([0-9]+)")
_MAX_ID_DIGITS = 18


def parse_task(data: bytes) -> Task:
    raw = load_json(data)
    if not isinstance(raw, dict):
        raise ValueError("task file is not a JSON object")
    try:
        return Task.model_validate(raw)
    except Exception as exc:
        raise ValueError(f"invalid task: {str(exc).splitlines()[0]}") from None


def copy_task(task: Task) -> Task:
    """A copy a caller may change without touching the board's: the lists and the metadata
    are copied too (a plain ``model_copy`` would share them), at a fraction of a deep copy."""
    fresh = task.model_copy()
    fresh.blocks = list(task.blocks)
    fresh.blocked_by = list(task.blocked_by)
    if task.metadata is not None:
        fresh.metadata = copy.deepcopy(task.metadata)
    extra = task.__pydantic_extra__
    if extra and any(isinstance(v, dict | list) for v in extra.values()):
        fresh.__pydantic_extra__ = copy.deepcopy(extra)
    return fresh


def check_status(status: str) -> None:
    if status not in TASK_STATUSES:
        raise ValueError(f"unknown task status {clip(status)!r} (use {', '.join(TASK_STATUSES)})")


class TaskFiles:
    """The task files of one team (``tasks/{team}/``)."""

    def __init__(self, home: HomeParts, team: str) -> None:
        self.home = home
        self.team = team
        self.layout = home.layout
        self.dir = self.layout.task_dir(team)

    def init(self, lock: Path | None = None) -> None:
        """Create the directory and the ``.lock`` file Claude Code's lock needs (``lock``: its
        path, if the caller has it already)."""
        ensure_dir(self.dir)
        lock = lock or self.layout.tasklist_lock_path(self.team)
        if not lock.exists():
            with naming_full_disk(lock):
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                if new_file_mode(lock) != 0o600:
                    os.fchmod(fd, new_file_mode(lock))
            finally:
                os.close(fd)

    def _list_lock(self, folder: Path | None = None) -> HomeLock:
        """The list's lock (``folder``: the task folder, if the caller has checked it already)."""
        lock = folder / ".lock" if folder is not None else self.layout.tasklist_lock_path(self.team)
        self.init(lock)
        return self.home.lock(lock)

    def _task_lock(self, task_id: str) -> HomeLock:
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

    def _highest_id(self) -> int:
        """The highest task id on disk (its list lock held): from this process's board when
        inotify keeps it exact (a board is never built just for this), else a folder scan."""
        known = self._board()
        with known.lock:
            if known.watched:
                known.sync(self._reader(self.dir))
                return known.highest()
        on_disk = self.ids_on_disk()
        return on_disk[-1] if on_disk else 0

    def highwatermark(self) -> int:
        """The stored watermark; 0 if missing. Read like Claude Code's ``parseInt``: leading
        digits count (``"12\\n"``, ``"12abc"``). A file without them is corrupt: a copy is saved
        aside and it reads as 0 -- ids still never collide, as ``create`` also takes the highest
        id on disk (only an id deleted above that could be reused). A number longer than any
        task id (18 digits) is CorruptFileError: no id can follow it."""
        return self._read_highwatermark()[0]

    def _read_highwatermark(self, path: Path | None = None) -> tuple[int, bytes | None]:
        """The watermark (as ``highwatermark``) and the file's bytes (``None``: missing)."""
        path = path or self.layout.highwatermark_path(self.team)
        data = read_bytes(path)
        if data is None:
            return 0, None
        match = _LEADING_INT.match(data.decode("utf-8", "replace"))
        if match:
            digits = match.group(1)
            if len(digits) > _MAX_ID_DIGITS:
                reason = f"a number of {len(digits)} digits; task ids have at most {_MAX_ID_DIGITS}"
                raise CorruptFileError(path, reason, quarantine(path, data))
            return int(digits), data
        quarantine(path, data)
        return 0, data

    def _write_highwatermark(self, value: int, *, durable: bool = True) -> None:
        """``durable=False`` after a create: the new task's file is already on disk (fsynced,
        folder too), and ids come from ``max(highest id on disk, watermark)``, so a watermark
        lost to a power cut cannot let that id be reused; a delete's watermark is durable."""
        path = self.layout.highwatermark_path(self.team)
        atomic_write_bytes(path, str(value).encode(), durable=durable)

    def _advance_highwatermark(self, path: Path, value: int, seen: bytes | None) -> None:
        """The watermark after a create (the list lock held; ``seen``: the file's bytes read
        under it). A plain number no longer than ``value``'s digits is overwritten in place:
        every reader and writer of the file holds the list lock (Claude Code's too), so none
        can see it half-written, and ``value`` only grows. An atomic replace instead would
        cost a new inode and a rename over the old file, which ext4 makes flush the new
        file's data (``auto_da_alloc``): about as long as the task's own fsynced write. Any
        other file (missing, padded, a symlink, not a regular file) is replaced as before."""
        text = str(value).encode()
        if seen is not None and seen.isdigit() and len(seen) <= len(text):
            flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            try:
                fd = os.open(path, flags)
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    if stat.S_ISREG(os.fstat(fd).st_mode) and os.pwrite(fd, text, 0) == len(text):
                        return
                except OSError:
                    pass
                finally:
                    os.close(fd)
        atomic_write_bytes(path, text, durable=False)

    # ------------------------------------------------------------------ read

    def get(self, task_id: str) -> Task | None:
        """The task, ``None`` if it does not exist; CorruptFileError if it cannot be read.

        The id is the file's: a file whose ``id`` field disagrees with its name is read with
        the name's id (as Claude Code's update does), so a rewrite can never land on -- and
        overwrite -- another task's file."""
        return self._read(self.layout.task_path(self.team, task_id))

    @staticmethod
    def _read(path: Path) -> Task | None:
        task = parse_with_retry(path, parse_task)
        if task is not None and task.id != path.stem:
            task.id = path.stem
        return task

    def require(self, task_id: str) -> Task:
        task = self.get(task_id)
        if task is None:
            raise NotFoundError(f"task #{task_id} does not exist in team {self.team!r}")
        return task

    def list(self, *, include_internal: bool = False) -> builtins.list[Task]:
        """All readable tasks in id order (``_internal`` ones hidden unless asked)."""
        tasks, _ = self.scan(include_internal=include_internal)
        return tasks

    def scan(self, *, include_internal: bool = False) -> tuple[builtins.list[Task], dict[str, str]]:
        """Tasks in id order, plus one error line per unreadable task file.

        Read through this process's board (``app.core.task_board``): only the files changed
        since it last looked are read again; the tasks returned are the caller's own copies."""
        tasks: builtins.list[Task] = []
        errors: dict[str, str] = {}
        folder = self.layout.task_dir(self.team)  # checked once per scan, not once per file
        known = self._board()
        with known.lock:
            known.sync(self._reader(folder))
            for task_id, task in known.in_order():
                if isinstance(task, CorruptFileError):
                    errors[str(task_id)] = str(task)
                elif include_internal or not task.is_internal:
                    tasks.append(copy_task(task))
        return tasks, errors

    def _board(self) -> Board:
        return board(str(self.dir))

    def _reader(self, folder: Path) -> Callable[[str], Task | None]:
        read = self._read
        return lambda name: read(folder / name)

    # ------------------------------------------------------------------ write

    def _write(self, task: Task, path: Path | None = None) -> TaskChanged:
        """Write ``task`` (its lock held; ``path``: its file, if the caller has it already);
        returns the event that announces the write, with what was written and the file's
        identity (taken under the lock: exactly this file)."""
        path = path or self.layout.task_path(self.team, task.id)
        atomic_write_json(path, task.to_json_dict())
        self._board().invalidate(int(task.id))
        state = TaskState(task.status, task.owner, task.subject, task.is_internal)
        return TaskChanged(self.team, task.id, task=state, written=file_identity(path))

"""Claiming tasks: one task by id, the next available one, and giving an agent's tasks back.

Of many racing claimers exactly one wins a task: a claim re-reads the task under its own lock
(``{id}.json.lock``) before it writes the owner. The busy check ("this agent already owns an
unresolved task") and ``claim_next``'s choice are made under the list's ``.lock``, which every
busy-checked claimer takes, so racing teammates cannot pick the same task.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Literal

from app.core.errors import CorruptFileError
from app.core.models import Task
from app.core.task_files import TaskFiles, check_status

ClaimReason = Literal[
    "task_not_found", "already_claimed", "already_resolved", "blocked", "agent_busy"
]


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


class TaskClaims(TaskFiles):
    """The claiming operations of a ``TaskList``."""

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
            check_status(status)
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
            open_blockers = self.open_blockers(task)
            if open_blockers:
                return ClaimResult(False, "blocked", task, blocked_by=open_blockers)
            task.owner = agent
            if status is not None:
                task.status = status
            changed = self._write(task)
        self.home.emit(changed)
        return ClaimResult(True, None, task)

    def open_blockers(self, task: Task) -> builtins.list[str]:
        """The rule every way of starting a task obeys (a claim, ``claim_next``, TaskUpdate's
        ``in_progress`` by a teammate or the lead, ``teamdeck task update``), in every
        teammate mode: a task whose ``blockedBy`` names an unfinished task does not start.
        The ids of those unfinished blockers (an unreadable one counts as unfinished)."""
        return [b for b in task.blocked_by if self._is_open(b)]

    def _is_open(self, task_id: str) -> bool:
        try:
            blocker = self.get(task_id)
        except CorruptFileError:
            return True
        return blocker is not None and not blocker.is_resolved

    def available(self) -> builtins.list[Task]:
        """Pending, unowned, unblocked tasks in id order (what an idle teammate may claim)."""
        return available(self.list())

    def claimable_count(self, limit: int) -> int:
        """How many tasks an idle teammate could claim now, counted up to ``limit`` (from this
        process's board, brought up to date: the files that changed are read, not the list).
        The runtime wakes that many idle teammates after a task change, not all of them."""
        if limit <= 0:
            return 0
        known = self._board()
        with known.lock:
            known.sync(self._reader(self.layout.task_dir(self.team)))
            count = 0
            candidates = known.candidates()
            try:
                for _ in candidates:
                    count += 1
                    if count >= limit:
                        break
            finally:
                candidates.close()
        return count

    def claim_next(self, agent: str, *, status: str | None = None) -> ClaimResult | None:
        """What an idle teammate does between turns (seed 002): claim the lowest-id available
        task, with the busy check, under the list's lock.

        ``claim(id, check_busy=True)`` after ``available()`` reads every task twice, and a
        claimer that loses a race reads them all again for the next id; here the choice is
        made under the lock every busy-checked claimer takes, so racing teammates cannot pick
        the same task (the task's own lock still guards against ``TaskUpdate`` assigning it).
        ``None`` if nothing is available; ``agent_busy`` if the agent owns an unresolved task.

        The choice comes from this process's board (``app.core.task_board``), brought up to
        date first, so a claim reads the files that changed, not the whole list; the chosen
        task is read again under its own lock before it is written, as in ``claim``.
        """
        folder = self.layout.task_dir(self.team)
        known = self._board()

        def nothing_to_claim() -> bool:
            """No candidate on the board as it is now (a busy agent still takes the lock, to
            be told so). Asked before taking the lock and while waiting for it: when eight
            idle teammates wake for one new task, the seven that lose see it claimed and
            stop waiting, instead of queueing for the lock one after the other."""
            with known.lock:
                known.sync(self._reader(folder))
                if known.busy(agent):
                    return False
                candidates = known.candidates()
                try:
                    return next(candidates, None) is None
                finally:
                    candidates.close()

        if nothing_to_claim():
            return None
        lock = self._list_lock()
        if not lock.acquire(give_up=nothing_to_claim):
            return None
        try:
            with known.lock:
                known.sync(self._reader(folder))
                busy = known.busy(agent)
                if busy:
                    return ClaimResult(False, "agent_busy", busy_with=busy)
                candidates = known.candidates()
                try:
                    for task in candidates:
                        result = self._claim(task.id, agent, status)
                        if result.success:
                            return result
                finally:
                    candidates.close()
        finally:
            lock.release()
        return None

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


def available(tasks: builtins.list[Task]) -> builtins.list[Task]:
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

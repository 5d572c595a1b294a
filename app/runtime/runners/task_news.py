"""Which task changes are news for an idle teammate process.

A teammate process watches its team's files itself (it must work without a dashboard, and with
Claude Code's). It used to wake on every task change: with 25 idle teammates, each claim, each
progress note and each completion woke all 25, and each read its inbox and brought its board up
to date for nothing -- another teammate's claim frees no work. Here a change wakes an idle
teammate only when it can give it something to claim: a task open without an owner (new, or
returned to the board), one resolved or gone (which may unblock others), or one of its own
taken from it (it is no longer busy). A working teammate is not woken at all: it looks at the
board when its turn ends.

Nothing is lost by skipping: ``Teammate.next_prompt`` looks at the board after it shows idle
(and after every wake-up), so a change that came while it worked is seen then.
"""

from __future__ import annotations

from app.core import Home
from app.core.errors import TeamdeckError
from app.core.events import TaskChanged


class TaskNews:
    """Reads task changes for teammate ``name`` (see the module docstring)."""

    def __init__(self, home: Home, name: str) -> None:
        self.home = home
        self.name = name
        #: Tasks last seen owned by this teammate and unresolved.
        self.held: set[str] = set()

    def wakes(self, events: list[TaskChanged], idle: bool) -> bool:
        """Whether these changes wake the teammate (``idle``: it shows idle now). Its own
        writes are always read (their content is in the event: no file is read), to know
        which tasks it holds; other processes' only while it is idle."""
        freed = False
        for event in events:
            if idle or event.local:
                freed = self.frees_work(event) or freed
        return idle and freed

    def frees_work(self, event: TaskChanged) -> bool:
        """Whether ``event`` may leave a task claimable by this teammate; a task that cannot
        be read says yes (the claim reads it again, and reports what it finds)."""
        if event.deleted:
            self.held.discard(event.task_id)
            return True
        state = event.task
        if state is not None:  # this process's own write: its content is in the event
            status, owner = state.status, state.owner
        else:
            try:
                task = self.home.tasks(event.team).get(event.task_id)
            except (TeamdeckError, OSError):
                return True
            if task is None:
                self.held.discard(event.task_id)
                return True
            status, owner = task.status, task.owner
        resolved = status in ("completed", "deleted")
        if owner == self.name and not resolved:
            self.held.add(event.task_id)
            return False
        was_mine = event.task_id in self.held
        self.held.discard(event.task_id)
        return was_mine or resolved or (status == "pending" and not owner)

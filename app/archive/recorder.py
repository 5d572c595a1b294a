"""The recorder: one run's events, as they happen, into the archive.

Fed from the same streams the dashboard consumes: the runtime's events (``on_event``: status,
transcript, usage, messages this process sent, approvals, team lifecycle) and the core
watcher's change batches (``on_changes``: inboxes, tasks and the team config, written by this
process or any other), plus this process's own task writes (``on_local_change``). Handlers run
on the caller's thread and only queue work; the writer thread (``app.archive.writer``) does the
SQL and the file reads.

The recorder holds the run's lifecycle (started by ``start_run`` in ``app.archive.session``,
its team set, created or deleted, closed); the rest is in three parts:

- ``from_runtime``: the runtime's events, as rows;
- ``from_files``: what it reads from the team's files;
- ``rows``: the rows themselves, every SQL statement (writer thread).

A message seen both as a runtime event and in its inbox file is stored once (``rows``).

One runtime may run several goals (the dashboard's "new goal"): when the lead creates a team
after the run's team was deleted, the run ends ("finished") and the next starts in a new
``runs`` row on the same writer, its goal the person's last message to the lead; the events from
that message on (the lead's transcript and status) move to the new run (``_next_run``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from app.archive import adapter
from app.archive.from_files import FileReads
from app.archive.from_runtime import RuntimeEvents
from app.archive.rows import Rows
from app.archive.writer import Writer
from app.core import Home


class Recorder:
    """Records one run (one per goal of its runtime). Create with ``start_run``
    (app.archive.session)."""

    def __init__(
        self,
        writer: Writer,
        run_id: int,
        home: Home,
        *,
        model: str = "",
        offline: bool = False,
        runtime: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.writer = writer
        self.home = home
        self.model = model
        self.offline = offline
        self.runtime = runtime
        self.clock = clock
        self.team: str | None = None
        #: The run's team was deleted (its work is done): the dashboard's outcome "finished".
        self.team_deleted = False
        self.closed = False
        #: What the person last said to the lead: the goal of a next run (``_next_run``).
        self.person_said = ""
        #: The goal the person typed before the first team (a run started with one keeps it).
        self.typed_goal = ""
        self._unsubscribers: list[Callable[[], None]] = []
        #: The team an attach goes on with, until its runtime says it leads it ("created"):
        #: the run holds that team's creation already; the attach is its own event.
        self._continued: str | None = None
        self.rows = Rows(run_id)
        self.files = FileReads(writer, self.rows, home, clock)
        self.tasks = self.files.tasks
        self.runtime_events = RuntimeEvents(self, writer, self.rows)
        writer.before_commit = self.rows.end_batch

    # ------------------------------------------------------------------ wiring

    @property
    def run_id(self) -> int:
        """The run being recorded (a second goal's run once its row is written)."""
        return self.rows.run_id

    @property
    def available(self) -> bool:
        return self.writer.failed is None and not self.closed

    def attach(self, runtime: Any) -> None:
        """Record ``runtime``'s events (``runtime.subscribe``)."""
        self.runtime = runtime
        self._unsubscribers.append(runtime.subscribe(self.on_event))

    def watch_home(self) -> None:
        """This process's own task writes, as they happen (``Home.subscribe``): each event says
        what was written, so quick transitions (pending -> in_progress -> completed) are each
        recorded, in order, without reading the file."""
        self.tasks.local = True
        self._unsubscribers.append(self.home.subscribe(self.on_local_change))

    def watch(self, watcher: Any) -> None:
        """Record file changes reported by a core ``Watcher`` (this process's and others')."""
        self._unsubscribers.append(watcher.subscribe(self.on_changes))

    def set_team(self, team: str | None) -> None:
        """The team whose files belong to this run (set by TeamLifecycle, or by an attach)."""
        if team == self.team or team is None:
            return
        self.team = team
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            rows.set_team(conn, team)

        self.writer.submit(op)
        self.files.reread_config(team)

    def sweep_inboxes(self, team: str) -> None:
        """Read every inbox of ``team`` now (the end of a run, before a TeamDelete)."""
        self.files.sweep_inboxes(team)

    def sweep_existing(self, team: str) -> None:
        """What ``team``'s files hold now, recorded as the start of an attached run."""
        self.files.sweep_existing(team)

    def continue_team(self, team: str) -> None:
        """This run left ``team`` running and now goes on (an attach): the tasks' recorded
        states come back from the archive, then what the files hold now is recorded (what
        changed in between, once)."""
        self.set_team(team)
        self._continued = team
        self.files.resume_tasks(team)
        self.files.sweep_existing(team)

    # ------------------------------------------------------------------ what happens

    def on_event(self, event: Any) -> None:
        if not self.available:
            return
        converted = adapter.runtime_event(event)
        if converted is None:
            return
        kind, f = converted
        at = self.clock()
        if kind == "team":
            self._on_team(at, f)
            return
        self.runtime_events.handle(kind, at, f)
        if kind == "transcript" and f["kind"] == "user" and self._from_person(f):
            self.person_said = f["text"]
            if self.team_deleted:  # perhaps the next goal: its run starts here (``_next_run``)
                self.writer.submit(self.rows.mark_goal)
            elif self.team is None:  # a goal typed into a dashboard started without one
                said, before, rows = f["text"].strip(), self.typed_goal, self.rows
                self.typed_goal = said  # the last thing said before the team is the goal
                self.writer.submit(lambda conn: rows.first_goal(conn, said, before))

    def _from_person(self, f: dict[str, Any]) -> bool:
        """A "user" entry the person wrote: a teammate's says so (``source``); the lead's turn
        prompts say nothing, but with no team (none yet, or after a TeamDelete) no mail
        reaches the lead, so its prompts then are the person's."""
        if f["data"].get("source") == "person":
            return True
        if not (self.team_deleted or self.team is None) or self.runtime is None:
            return False
        return adapter.agent_info(self.runtime, f["agent"]).get("agent_type") == "team-lead"

    def claude_hook(self, event: Any) -> None:
        """A Claude Code hook event from the bridge (``app.archive.from_hooks``)."""
        if self.available:
            from app.archive.from_hooks import record_hook

            record_hook(self.writer, self.rows, event)

    def on_local_change(self, event: Any) -> None:
        if not self.available:
            return
        converted = adapter.change_event(event)
        if converted is None or converted[0] != "task" or converted[1]["team"] != self.team:
            return
        self.files.local_task(event, converted[1]["team"], converted[1]["task_id"])

    def on_changes(self, batch: list[Any]) -> None:
        if not self.available:
            return
        for event in batch:
            converted = adapter.change_event(event)
            if converted is None:
                continue
            kind, f = converted
            team = f["team"]
            if team != self.team:
                continue
            if kind != "removed":
                self.files.changed(kind, team, f)
            elif self.runtime is None:
                self._team_removed(team)  # a run of ours says so itself (TeamLifecycle)

    def _on_team(self, at: float, f: dict[str, Any]) -> None:
        team, what = f["team"], f["event"]
        if what == "created" and team == self._continued:
            self._continued = None
            return
        if what == "created":
            if self.team_deleted and self.team is not None:  # a new goal (its name may repeat)
                self._next_run(at, team)
            self.set_team(team)
        elif what == "deleted" and team == self.team:
            self.team_deleted = True
            self.sweep_inboxes(team)  # before the files go (TeamDelete may already be done)
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            rows.event(conn, at, "team", target=team, frame=what, text=f"team {team} {what}")

        self.writer.submit(op)

    def _next_run(self, at: float, team: str) -> None:
        """A second goal in the same runtime (its team created after the first was deleted):
        the run ends as finished and the next one starts, on the same writer and connection,
        with the person's last message to the lead as its goal."""
        rows, goal = self.rows, self.person_said
        self.sweep_inboxes(self.team or team)  # the ended team's last messages, in its run

        def op(conn: sqlite3.Connection) -> None:
            rows.next_run(conn, at, team, goal)

        self.writer.submit(op)
        self.team, self.team_deleted = None, False
        self.runtime_events.next_run()

    def _team_removed(self, team: str) -> None:
        """An attached team's files were deleted: its run is over."""
        self.team_deleted = True
        at = self.clock()
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            rows.event(conn, at, "team", target=team, frame="deleted", text=f"team {team} deleted")

        self.writer.submit(op)

    # ------------------------------------------------------------------ the end

    def close(self, outcome: str, reason: str = "", *, timeout: float = 10.0) -> None:
        """End the run: read the team's inboxes once more, store the outcome, commit, stop."""
        if self.closed:
            return
        for unsubscribe in self._unsubscribers:
            with contextlib.suppress(Exception):
                unsubscribe()
        if self.team is not None and self.writer.failed is None:
            self.sweep_inboxes(self.team)
        at = self.clock()
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            rows.end_run(conn, at, outcome, reason)
            rows.drop_if_empty(conn)

        self.writer.submit(op)
        self.closed = True
        self.writer.close(timeout)

    def flush(self, timeout: float = 10.0) -> bool:
        return self.writer.flush(timeout)

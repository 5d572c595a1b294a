"""What a recording reads from the team's files: inboxes, tasks and the team config, written by
this process or any other (the core watcher's change batches), and this process's own task
writes (``Home.subscribe``).

The reads run on the writer thread, deferred so a burst of changes costs one read: an inbox is
re-read at most once every ``INBOX_REREAD_SECONDS``, a task file once per burst of changes,
the config once per ``CONFIG_REREAD_SECONDS``. An inbox is read raw (no lock, no model): the
archive only looks, and most changes only flip ``read`` flags, so a count check ends them.

Tasks (``app.archive.task_log``): this process's own writes carry what they wrote, so each state
is recorded as written, however fast they follow one another, with no file read. Only other
processes' writes are read from disk: the watcher's events for this process's writes are
skipped, and a re-read that finds a file this process wrote records nothing.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.archive.rows import Rows, dump, truncate
from app.archive.task_log import Seen, TaskLog
from app.archive.writer import Writer
from app.core import Home
from app.core.answer_credits import AnswerCredits
from app.core.errors import TeamdeckError
from app.core.protocol import parse_frame

INBOX_REREAD_SECONDS = 2.0
TASK_REREAD_SECONDS = 0.02
CONFIG_REREAD_SECONDS = 0.2


class FileReads:
    """Records what one run's team files hold, as they change."""

    def __init__(self, writer: Writer, rows: Rows, home: Home, clock: Callable[[], float]) -> None:
        self.writer = writer
        self.rows = rows
        self.home = home
        self.clock = clock
        self.tasks = TaskLog(home)
        #: Who answered a request, where the message does not say (a Claude Code home).
        self.credits = AnswerCredits(home.root, home.is_claude)
        self._local_lock = threading.Lock()
        # Writer-thread state.
        self._inbox_seen: dict[tuple[str, str], int] = {}

    def changed(self, kind: str, team: str, f: dict[str, Any]) -> None:
        """One converted change (``adapter.change_event``) to the run's team."""
        if kind == "inbox":
            self._reread_inbox(team, f["agent"], INBOX_REREAD_SECONDS)
        elif kind == "task":
            if self.tasks.local and f["local"]:
                return  # this process's write: recorded by local_task already
            self._reread_task(team, f["task_id"])
        elif kind == "config":
            self.reread_config(team)

    def local_task(self, event: Any, team: str, task_id: str) -> None:
        """This process's write of a task (``Home.subscribe``), recorded as written."""
        # Agents write from several threads (app.runtime.scheduling.offload): taking the time and
        # queueing under one lock keeps the queue in the order of the times, so no write's state
        # is applied after a later one (which would drop it as stale).
        with self._local_lock:
            taken = time.monotonic()
            snapshot = self.tasks.from_event(event, team, task_id)

            def op(conn: sqlite3.Connection) -> None:
                self._apply_task(conn, team, task_id, snapshot, taken)

            self.writer.submit(op)

    # ------------------------------------------------------------------ inboxes

    def _reread_inbox(self, team: str, agent: str, delay: float) -> None:
        def op(conn: sqlite3.Connection) -> None:
            self._read_inbox(conn, team, agent)

        self.writer.defer(("inbox", team, agent), delay, op)

    def sweep_inboxes(self, team: str) -> None:
        """Read every inbox of ``team`` now (the end of a run, before a TeamDelete)."""

        def op(conn: sqlite3.Connection) -> None:
            box = self.home.mailbox(team)
            with contextlib.suppress(TeamdeckError, OSError):
                for agent in box.agents():
                    self._read_inbox(conn, team, agent)

        self.writer.submit(op)

    def sweep_existing(self, team: str) -> None:
        """What ``team``'s files hold now, recorded as the start of an attached run: every
        inbox's messages and every task."""
        self.sweep_inboxes(team)

        def op(conn: sqlite3.Connection) -> None:
            try:
                ids = self.home.tasks(team).ids_on_disk()
            except (TeamdeckError, OSError):
                return
            for task_id in ids:
                self._read_task(conn, team, str(task_id))

        self.writer.submit(op)

    def resume_tasks(self, team: str) -> None:
        """The last recorded state of each of ``team``'s tasks in this run (an attach goes on
        with it), so that the next read records only what changed since."""
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            found = conn.execute(
                "SELECT target, frame, agent FROM events WHERE run_id = ? AND kind = 'task'"
                " ORDER BY id",
                (rows.run_id,),
            )
            self.tasks.resume(team, [(str(t), str(f), a) for t, f, a in found])

        self.writer.submit(op)

    def _read_inbox(self, conn: sqlite3.Connection, team: str, agent: str) -> None:
        """Record the inbox's messages not seen yet."""
        try:
            entries = _read_json_list(self.home.layout.inbox_path(team, agent))
        except TeamdeckError:
            return
        if entries is None:
            return  # unreadable now (half-written by another program): the next change reads it
        seen = self._inbox_seen.get((team, agent), 0)
        if len(entries) <= seen:
            return
        at = self.clock()
        for entry in entries[seen:]:
            if not isinstance(entry, dict):
                continue
            text = str(entry.get("text", ""))
            plain = entry.get("plainText") is True  # an agent's text that imitates a frame
            frame = parse_frame(text) if text.startswith("{") and not plain else None
            self.rows.message(
                conn,
                at,
                team,
                str(entry.get("from", "")),
                agent,
                text,
                entry.get("summary"),
                frame.type if frame else None,
                str(entry.get("timestamp", "")),
                self.credits.answered_by(team, agent, entry),
            )
        self._inbox_seen[(team, agent)] = len(entries)

    # ------------------------------------------------------------------ tasks

    def _reread_task(self, team: str, task_id: str) -> None:
        def op(conn: sqlite3.Connection) -> None:
            self._read_task(conn, team, task_id)

        self.writer.defer(("task", team, task_id), TASK_REREAD_SECONDS, op)

    def _read_task(self, conn: sqlite3.Connection, team: str, task_id: str) -> None:
        taken = time.monotonic()
        snapshot = self.tasks.read(team, task_id, skip_own=self.tasks.local)
        self._apply_task(conn, team, task_id, snapshot, taken)

    def _apply_task(
        self, conn: sqlite3.Connection, team: str, task_id: str, task: Seen, taken: float
    ) -> None:
        if self.tasks.apply(conn, team, task_id, task, taken, self._task_event):
            self.rows.counts["tasks_done"] += 1

    def _task_event(
        self,
        conn: sqlite3.Connection,
        owner: str | None,
        task_id: str,
        status: str,
        subject: str,
        data: dict[str, Any],
    ) -> None:
        text, size = truncate(subject)
        self.rows.event(
            conn,
            self.clock(),
            "task",
            agent=owner,
            target=task_id,
            frame=status,
            text=text,
            size=size,
            data=dump(data),
        )

    # ------------------------------------------------------------------ the team config

    def reread_config(self, team: str) -> None:
        """The team's members (their type, model, mode, colour, when they joined), soon."""

        def op(conn: sqlite3.Connection) -> None:
            try:
                config = self.home.teams.get(team)
            except (TeamdeckError, OSError):
                return
            if config is None:
                return
            at = self.clock()
            for member in config.members:
                info = {
                    "agent_type": member.agent_type,
                    "model": member.model,
                    "mode": getattr(member, "mode", None),
                    "color": member.color,
                }
                spawned = (member.joined_at / 1000) if member.joined_at else at
                self.rows.ensure_agent(conn, member.name, spawned, info, update=True)

        self.writer.defer(("config", team), CONFIG_REREAD_SECONDS, op)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _read_json_list(path: Path) -> list[Any] | None:
    data = _read_json(path)
    return data if isinstance(data, list) else None

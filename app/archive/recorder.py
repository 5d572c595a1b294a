"""The recorder: one run's events, as they happen, into the archive.

Fed from the same streams the dashboard consumes: the runtime's events (``on_event``: status,
transcript, usage, messages this process sent, approvals, team lifecycle) and the core
watcher's change batches (``on_changes``: inboxes, tasks and the team config, written by this
process or any other). Handlers run on the caller's thread and only queue work; the writer
thread does the SQL and the file reads (an inbox is re-read at most once a second; a task file
once per burst of changes). A message seen both as a runtime event and in its inbox file is
stored once (its dedup key: team, recipient, sender, timestamp, text).

Tasks (``app.archive.task_log``): this process's own writes (``Home.subscribe``) carry what
they wrote, so each state is recorded as written, however fast they follow one another, with no
file read. Only other processes' writes are read from disk: the watcher's events for this
process's writes are skipped, and a re-read that finds a file this process wrote records nothing.

Usage events carry cumulative counts; the recorder stores the difference as one model call,
priced with ``app.runtime.model.pricing``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.archive import adapter
from app.archive.task_log import Seen, TaskLog
from app.archive.writer import Writer
from app.core import Home
from app.core.errors import TeamdeckError
from app.core.protocol import parse_frame
from app.runtime.model.pricing import call_cost

#: Longest text kept per event; longer ones keep their first part and their full size.
TEXT_LIMIT = 8000
INBOX_REREAD_SECONDS = 2.0
TASK_REREAD_SECONDS = 0.02
CONFIG_REREAD_SECONDS = 0.2
EXIT_REASONS = {"completed": "shut down", "failed": "failed", "killed": "killed"}
TOKEN_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
COUNT_COLUMNS = ("events", "messages", "tasks_done", "agents", *TOKEN_COLUMNS)
REQUEST_FRAMES = {
    "plan_approval_request": "plan",
    "permission_request": "permission",
    "shutdown_request": "shutdown",
}
ANSWER_FRAMES = {
    "plan_approval_response",
    "permission_response",
    "shutdown_approved",
    "shutdown_rejected",
}


def message_key(team: str | None, recipient: str, sender: str, timestamp: str, text: str) -> str:
    raw = "\x1f".join((team or "", recipient, sender, timestamp, text))
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()


def truncate(text: str, limit: int = TEXT_LIMIT) -> tuple[str, int]:
    return (text if len(text) <= limit else text[:limit]), len(text)


def dump(data: dict[str, Any] | None) -> str | None:
    if not data:
        return None
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) > TEXT_LIMIT:
        return json.dumps({"truncated": text[:TEXT_LIMIT], "size": len(text)}, ensure_ascii=False)
    return text


class Recorder:
    """Records one run. Create with ``start_run`` (app.archive.session)."""

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
        self.run_id = run_id
        self.home = home
        self.model = model
        self.offline = offline
        self.runtime = runtime
        self.clock = clock
        self.team: str | None = None
        #: The run's team was deleted (its work is done): the dashboard's outcome "finished".
        self.team_deleted = False
        self.closed = False
        self._unsubscribers: list[Callable[[], None]] = []
        # Loop-thread state.
        self._usage: dict[str, tuple[int, int, int, int, int]] = {}
        self._seen_agents: set[str] = set()
        self._models: dict[str, str] = {}
        # Writer-thread state.
        self._agents: set[str] = set()
        self.tasks = TaskLog(home)
        self._local_lock = threading.Lock()
        self._inbox_seen: dict[tuple[str, str], int] = {}
        self._counts: dict[str, int] = dict.fromkeys(COUNT_COLUMNS, 0)
        self._cost = 0.0
        writer.before_commit = self._write_totals

    def _write_totals(self, conn: sqlite3.Connection) -> None:
        """The run's totals, once per batch (writer thread, inside the batch's transaction)."""
        changed = {k: v for k, v in self._counts.items() if v}
        if not changed and not self._cost:
            return
        sets = ", ".join(f"{k} = {k} + ?" for k in changed)
        sets = f"{sets}, cost_usd = cost_usd + ?" if sets else "cost_usd = cost_usd + ?"
        conn.execute(
            f"UPDATE runs SET {sets} WHERE id = ?", (*changed.values(), self._cost, self.run_id)
        )
        self._counts = dict.fromkeys(COUNT_COLUMNS, 0)
        self._cost = 0.0

    # ------------------------------------------------------------------ wiring

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

    def on_local_change(self, event: Any) -> None:
        if not self.available:
            return
        converted = adapter.change_event(event)
        if converted is None or converted[0] != "task" or converted[1]["team"] != self.team:
            return
        team, task_id = converted[1]["team"], converted[1]["task_id"]
        # Agents write from several threads (app.runtime.scheduling.offload): taking the time and
        # queueing
        # under one lock keeps the queue in the order of the times, so no write's state is
        # applied after a later one (which would drop it as stale).
        with self._local_lock:
            taken = time.monotonic()
            snapshot = self.tasks.from_event(event, team, task_id)

            def op(conn: sqlite3.Connection) -> None:
                self._apply_task(conn, team, task_id, snapshot, taken)

            self.writer.submit(op)

    def watch(self, watcher: Any) -> None:
        """Record file changes reported by a core ``Watcher`` (this process's and others')."""
        self._unsubscribers.append(watcher.subscribe(self.on_changes))

    def set_team(self, team: str | None) -> None:
        """The team whose files belong to this run (set by TeamLifecycle, or by an attach)."""
        if team == self.team or team is None:
            return
        self.team = team

        def op(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE runs SET team = ? WHERE id = ?", (team, self.run_id))

        self.writer.submit(op)
        self._reread_config(team)

    # ------------------------------------------------------------------ runtime events

    def on_event(self, event: Any) -> None:
        if not self.available:
            return
        converted = adapter.runtime_event(event)
        if converted is None:
            return
        kind, f = converted
        at = self.clock()
        handler = getattr(self, f"_on_{kind}")
        handler(at, f)

    def _on_status(self, at: float, f: dict[str, Any]) -> None:
        agent = f["agent"]
        info = self._agent_info(agent)
        status, detail = f["status"], f["detail"]

        def op(conn: sqlite3.Connection) -> None:
            self._ensure_agent(conn, agent, at, info)
            self._event(conn, at, "status", agent=agent, frame=status, text=detail)
            if status in EXIT_REASONS:
                conn.execute(
                    "UPDATE agents SET exited_at = ?, exit_status = ?, exit_reason = ?"
                    " WHERE run_id = ? AND name = ?",
                    (at, status, detail or EXIT_REASONS[status], self.run_id, agent),
                )

        self.writer.submit(op)

    def _agent_info(self, agent: str) -> dict[str, Any]:
        """What the runtime says of ``agent`` (asked until it knows the agent)."""
        if agent in self._seen_agents or self.runtime is None:
            return {}
        info = adapter.agent_info(self.runtime, agent)
        if info:
            self._seen_agents.add(agent)
        return info

    def _on_transcript(self, at: float, f: dict[str, Any]) -> None:
        text, size = truncate(f["text"])
        data = dict(f["data"])
        tool = data.get("tool")

        def op(conn: sqlite3.Connection) -> None:
            self._event(
                conn,
                at,
                "transcript",
                agent=f["agent"],
                target=tool,
                frame=f["kind"],
                text=text,
                size=size,
                data=dump(data),
            )

        self.writer.submit(op)

    def _on_usage(self, at: float, f: dict[str, Any]) -> None:
        agent = f["agent"]
        now = (f["input"], f["output"], f["cache_read"], f["cache_write"], f["calls"])
        before = self._usage.get(agent, (0, 0, 0, 0, 0))
        self._usage[agent] = now
        diff = tuple(max(0, a - b) for a, b in zip(now, before, strict=True))
        if not any(diff[:4]) and not diff[4]:
            return  # tool calls only
        model = self._model_of(agent)
        cost = call_cost(model, *diff[:4], offline=self.offline)
        self.record_usage(at, agent, model, diff[0], diff[1], diff[2], diff[3], cost)

    def _model_of(self, agent: str) -> str:
        model = self._models.get(agent)
        if model is None:
            info = adapter.agent_info(self.runtime, agent) if self.runtime is not None else {}
            model = self._models[agent] = str(info.get("model") or self.model)
        return model

    def record_usage(
        self,
        at: float,
        agent: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cache_read: int,
        cache_write: int,
        cost: float | None,
    ) -> None:
        """One model call's tokens and cost."""
        counts = (input_tokens, output_tokens, cache_read, cache_write)
        data = {"model": model, "input": input_tokens, "output": output_tokens}
        data |= {"cache_read": cache_read, "cache_write": cache_write, "cost_usd": cost}

        def op(conn: sqlite3.Connection) -> None:
            self._ensure_agent(conn, agent, at, {})
            event_id = self._event(conn, at, "usage", agent=agent, frame=model, data=dump(data))
            conn.execute(
                "INSERT INTO model_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (event_id, self.run_id, agent, model, *counts, cost),
            )
            totals = (
                "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,"
                " cache_read_tokens = cache_read_tokens + ?,"
                " cache_write_tokens = cache_write_tokens + ?, cost_usd = cost_usd + ?"
            )
            conn.execute(
                f"UPDATE agents SET {totals} WHERE run_id = ? AND name = ?",
                (*counts, cost or 0.0, self.run_id, agent),
            )
            for name, value in zip(TOKEN_COLUMNS, counts, strict=True):
                self._counts[name] += value
            self._cost += cost or 0.0

        self.writer.submit(op)

    def _on_message(self, at: float, f: dict[str, Any]) -> None:
        team = f["team"] or self.team

        def op(conn: sqlite3.Connection) -> None:
            self._message(
                conn,
                at,
                team,
                f["sender"],
                f["recipient"],
                f["text"],
                f["summary"],
                f["frame"],
                f["timestamp"],
            )

        self.writer.submit(op)

    def _on_approval(self, at: float, f: dict[str, Any]) -> None:
        request_id, kind, agent = f["request_id"], f["kind"], f["agent"]
        resolved, outcome = f["resolved"], f["outcome"]
        title = body = None
        if not resolved and self.runtime is not None:
            title, body = adapter.approval_info(self.runtime, request_id)

        def op(conn: sqlite3.Connection) -> None:
            if resolved:
                conn.execute(
                    "INSERT INTO approvals (run_id, request_id, kind, agent) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT DO NOTHING",
                    (self.run_id, request_id, kind, agent),
                )
                conn.execute(
                    "UPDATE approvals SET answered_at = ?, decision = ?"
                    " WHERE run_id = ? AND request_id = ?",
                    (at, outcome or "answered", self.run_id, request_id),
                )
            else:
                conn.execute(
                    "INSERT INTO approvals (run_id, request_id, kind, agent, title, body, asked_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                    " title = excluded.title, body = excluded.body, asked_at = excluded.asked_at",
                    (self.run_id, request_id, kind, agent, title, body, at),
                )
            text, size = truncate(outcome if resolved else (title or "asked"))
            self._event(
                conn,
                at,
                "approval",
                agent=agent,
                target=request_id,
                frame=kind,
                text=text,
                size=size,
                data=dump({"resolved": resolved, "outcome": outcome}),
            )

        self.writer.submit(op)

    def _on_team(self, at: float, f: dict[str, Any]) -> None:
        team, what = f["team"], f["event"]
        if what == "created":
            self.set_team(team)
        elif what == "deleted" and team == self.team:
            self.team_deleted = True
            self.sweep_inboxes(team)  # before the files go (TeamDelete may already be done)

        def op(conn: sqlite3.Connection) -> None:
            self._event(conn, at, "team", target=team, frame=what, text=f"team {team} {what}")

        self.writer.submit(op)

    def _on_finished(self, at: float, f: dict[str, Any]) -> None:
        def op(conn: sqlite3.Connection) -> None:
            frame = "ok" if f["ok"] else "failed"
            self._event(conn, at, "run", frame=frame, text=f["reason"])

        self.writer.submit(op)

    def _on_mode(self, at: float, f: dict[str, Any]) -> None:
        agent, mode = f["agent"], f["mode"]

        def op(conn: sqlite3.Connection) -> None:
            self._ensure_agent(conn, agent, at, {})
            conn.execute(
                "UPDATE agents SET mode = ? WHERE run_id = ? AND name = ?",
                (mode, self.run_id, agent),
            )
            self._event(conn, at, "mode", agent=agent, frame=mode, text=f"mode {mode}")

        self.writer.submit(op)

    # ------------------------------------------------------------------ file changes

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
            if kind == "inbox":
                self._reread_inbox(team, f["agent"], INBOX_REREAD_SECONDS)
            elif kind == "task":
                if self.tasks.local and f["local"]:
                    continue  # this process's write: recorded by on_local_change already
                self._reread_task(team, f["task_id"])
            elif kind == "config":
                self._reread_config(team)
            elif kind == "removed" and self.runtime is None:
                self._team_removed(team)  # a run of ours says so itself (TeamLifecycle)

    def _team_removed(self, team: str) -> None:
        """An attached team's files were deleted: its run is over."""
        self.team_deleted = True
        at = self.clock()

        def op(conn: sqlite3.Connection) -> None:
            self._event(conn, at, "team", target=team, frame="deleted", text=f"team {team} deleted")

        self.writer.submit(op)

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

    def _read_inbox(self, conn: sqlite3.Connection, team: str, agent: str) -> None:
        """Record the inbox's messages not seen yet. Read raw (no lock, no model): the archive
        only looks, and most changes only flip ``read`` flags, so a count check ends them."""
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
            frame = parse_frame(text) if text.startswith("{") else None
            self._message(
                conn,
                at,
                team,
                str(entry.get("from", "")),
                agent,
                text,
                entry.get("summary"),
                frame.type if frame else None,
                str(entry.get("timestamp", "")),
            )
        self._inbox_seen[(team, agent)] = len(entries)

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
            self._counts["tasks_done"] += 1

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
        self._event(
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

    def _reread_config(self, team: str) -> None:
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
                self._ensure_agent(conn, member.name, spawned, info, update=True)

        self.writer.defer(("config", team), CONFIG_REREAD_SECONDS, op)

    # ------------------------------------------------------------------ SQL (writer thread)

    def _event(
        self,
        conn: sqlite3.Connection,
        at: float,
        kind: str,
        *,
        agent: str | None = None,
        target: str | None = None,
        frame: str | None = None,
        text: str | None = None,
        size: int | None = None,
        data: str | None = None,
        key: str | None = None,
    ) -> int | None:
        cursor = conn.execute(
            "INSERT OR IGNORE INTO events (run_id, at, kind, agent, target, frame, text, size,"
            " data, key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.run_id, at, kind, agent, target, frame, text, size, data, key),
        )
        if cursor.rowcount == 0:
            return None
        self._counts["events"] += 1
        return cursor.lastrowid

    def _ensure_agent(
        self,
        conn: sqlite3.Connection,
        name: str,
        at: float,
        info: dict[str, Any],
        *,
        update: bool = False,
    ) -> None:
        if name not in self._agents:
            self._agents.add(name)
            cursor = conn.execute(
                "INSERT OR IGNORE INTO agents (run_id, name, agent_type, model, mode, color,"
                " spawned_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    self.run_id,
                    name,
                    info.get("agent_type"),
                    info.get("model"),
                    info.get("mode"),
                    info.get("color"),
                    at,
                ),
            )
            if cursor.rowcount:
                self._counts["agents"] += 1
                return
        if update or info:
            conn.execute(
                "UPDATE agents SET agent_type = coalesce(?, agent_type),"
                " model = coalesce(?, model), mode = coalesce(?, mode),"
                " color = coalesce(?, color) WHERE run_id = ? AND name = ?",
                (
                    info.get("agent_type"),
                    info.get("model"),
                    info.get("mode"),
                    info.get("color"),
                    self.run_id,
                    name,
                ),
            )

    def _message(
        self,
        conn: sqlite3.Connection,
        at: float,
        team: str | None,
        sender: str,
        recipient: str,
        text: str,
        summary: str | None,
        frame: str | None,
        timestamp: str,
    ) -> None:
        key = message_key(team, recipient, sender, timestamp, text)
        stored, size = truncate(text)
        data = {"summary": summary, "timestamp": timestamp, "team": team}
        event_id = self._event(
            conn,
            at,
            "message",
            agent=sender,
            target=recipient,
            frame=frame or "message",
            text=stored,
            size=size,
            data=dump(data),
            key=key,
        )
        if event_id is None:
            return  # already recorded (the runtime's event and the inbox file)
        self._counts["messages"] += 1
        if frame in REQUEST_FRAMES:
            self._request_from_frame(conn, at, sender, recipient, text)
        elif frame in ANSWER_FRAMES:
            self._answer_from_frame(conn, at, sender, text)

    def _request_from_frame(
        self, conn: sqlite3.Connection, at: float, sender: str, recipient: str, text: str
    ) -> None:
        """A request frame is an approval asked, whoever decides it (the person, the lead, the
        teammate asked to stop), in this process or another."""
        frame: Any = parse_frame(text)
        request_id = getattr(frame, "request_id", None)
        if not request_id:
            return
        kind, agent = REQUEST_FRAMES[frame.type], sender
        if kind == "shutdown":
            agent, body = recipient, getattr(frame, "reason", None)
        elif kind == "plan":
            body = getattr(frame, "plan_content", None)
        else:
            body = json.dumps(getattr(frame, "input", None), ensure_ascii=False, default=str)
        title = f"{sender} -> {recipient}: {kind} request"
        conn.execute(
            "INSERT INTO approvals (run_id, request_id, kind, agent, title, body, asked_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
            " body = coalesce(approvals.body, excluded.body),"
            " asked_at = min(coalesce(approvals.asked_at, excluded.asked_at), excluded.asked_at)",
            (self.run_id, request_id, kind, agent, title, truncate(body or "")[0], at),
        )

    def _answer_from_frame(
        self, conn: sqlite3.Connection, at: float, sender: str, text: str
    ) -> None:
        """Who answered an approval, and their feedback, come from the answer frame."""
        frame: Any = parse_frame(text)
        request_id = getattr(frame, "request_id", None)
        if not request_id:
            return
        feedback = getattr(frame, "feedback", None) or getattr(frame, "reason", None)
        if getattr(frame, "type", "") == "permission_response":
            feedback = frame.reason
            decision = "allowed" if frame.allowed else "denied"
        elif getattr(frame, "type", "") == "plan_approval_response":
            decision = "approved" if frame.approved else "rejected"
        else:
            decision = "approved" if frame.type == "shutdown_approved" else "rejected"
        conn.execute(
            "UPDATE approvals SET decided_by = ?, feedback = coalesce(?, feedback),"
            " decision = coalesce(decision, ?), answered_at = coalesce(answered_at, ?)"
            " WHERE run_id = ? AND request_id = ?",
            (sender, feedback, decision, at, self.run_id, request_id),
        )

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

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE runs SET ended_at = ?, outcome = ?, reason = ? WHERE id = ?",
                (at, outcome, reason, self.run_id),
            )

        self.writer.submit(op)
        self.closed = True
        self.writer.close(timeout)

    def flush(self, timeout: float = 10.0) -> bool:
        return self.writer.flush(timeout)


def process_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _read_json_list(path: Path) -> list[Any] | None:
    data = _read_json(path)
    return data if isinstance(data, list) else None

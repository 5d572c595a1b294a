"""The rows a run writes into ``history.db``: every INSERT and UPDATE the recorder makes.

``Rows`` runs on the writer thread only (inside a batch's transaction, ``app.archive.writer``):
the recorder's handlers queue operations that call it. It keeps the run's totals for the batch
in progress and adds them to the ``runs`` row, and each agent's token and cost totals to its
``agents`` row, once per batch (``write_totals``, the writer's ``before_commit``), so a busy run
does not update those rows once per event (a reader sees the totals of what is committed).

Each event inserted is also handed to the run's replay index (``app.archive.replay_index``),
kept in the archive at the end of each batch with the totals (``end_batch``).

A message is stored once however it is seen (a runtime event, its inbox file): its events row
has a dedup key (team, recipient, sender, timestamp, text). A request or answer frame in a
message is also an approval asked or answered, whoever decides it, in this process or another.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from app.archive.replay_index import SegmentWriter
from app.core.protocol import parse_frame

#: Longest text kept per event; longer ones keep their first part and their full size.
TEXT_LIMIT = 8000
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


#: One encoder for every event's data (``json.dumps`` with options builds one per call).
_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode


def dump(data: dict[str, Any] | None) -> str | None:
    if not data:
        return None
    text = _encode(data)
    if len(text) > TEXT_LIMIT:
        return json.dumps({"truncated": text[:TEXT_LIMIT], "size": len(text)}, ensure_ascii=False)
    return text


class Rows:
    """One run's rows (writer thread)."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self._agents: set[str] = set()
        self.counts: dict[str, int] = dict.fromkeys(COUNT_COLUMNS, 0)
        self.cost = 0.0
        #: Per agent, the batch's four token counts and cost (``model_call``).
        self._agent_totals: dict[str, list[float]] = {}
        #: The first event of the next goal (``mark_goal``), while the run's team is deleted.
        self.goal_event: int | None = None
        #: The run's replay index, kept in the archive as its events are written.
        self.index = SegmentWriter(run_id)

    def end_batch(self, conn: sqlite3.Connection) -> None:
        """The writer's ``before_commit``: the totals, and the replay index of the batch's
        events (``app.archive.replay_index``)."""
        self.write_totals(conn)
        self.index.sync(conn)

    def write_totals(self, conn: sqlite3.Connection) -> None:
        """The run's and the agents' totals, once per batch (inside the batch's transaction)."""
        if self._agent_totals:
            conn.executemany(
                "UPDATE agents SET input_tokens = input_tokens + ?,"
                " output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens + ?,"
                " cache_write_tokens = cache_write_tokens + ?, cost_usd = cost_usd + ?"
                " WHERE run_id = ? AND name = ?",
                [(*totals, self.run_id, name) for name, totals in self._agent_totals.items()],
            )
            self._agent_totals = {}
        changed = {k: v for k, v in self.counts.items() if v}
        if not changed and not self.cost:
            return
        sets = ", ".join(f"{k} = {k} + ?" for k in changed)
        sets = f"{sets}, cost_usd = cost_usd + ?" if sets else "cost_usd = cost_usd + ?"
        conn.execute(
            f"UPDATE runs SET {sets} WHERE id = ?", (*changed.values(), self.cost, self.run_id)
        )
        self.counts = dict.fromkeys(COUNT_COLUMNS, 0)
        self.cost = 0.0

    # ------------------------------------------------------------------ the run

    def set_team(self, conn: sqlite3.Connection, team: str) -> None:
        conn.execute("UPDATE runs SET team = ? WHERE id = ?", (team, self.run_id))

    def end_run(self, conn: sqlite3.Connection, at: float, outcome: str, reason: str) -> None:
        conn.execute(
            "UPDATE runs SET ended_at = ?, outcome = ?, reason = ? WHERE id = ?",
            (at, outcome, reason, self.run_id),
        )

    def drop_if_empty(self, conn: sqlite3.Connection) -> None:
        """A run that never had a team, a goal or an event (a dashboard opened and closed, the
        first thing a newcomer does after ``make run``) is not kept: ``teamdeck history``
        listed it as a run with goal "-", no agent and nothing done."""
        conn.execute(
            "DELETE FROM runs WHERE id = ? AND coalesce(team, '') = '' AND coalesce(goal, '')"
            " = '' AND NOT EXISTS (SELECT 1 FROM events WHERE run_id = ?)",
            (self.run_id, self.run_id),
        )

    def first_goal(self, conn: sqlite3.Connection, goal: str, before: str) -> None:
        """The run's goal, typed by the person into a dashboard started without one (a run
        started with its goal keeps it; ``before``: the one typed earlier, replaced):
        ``teamdeck history`` showed "-" for it."""
        conn.execute(
            "UPDATE runs SET goal = ? WHERE id = ? AND goal IN ('', ?)",
            (goal, self.run_id, before),
        )

    def mark_goal(self, conn: sqlite3.Connection) -> None:
        """The person's message just recorded may be the next goal: it and what follows it
        (the lead's status and transcript) move to the next run if one starts (``next_run``)."""
        row = conn.execute("SELECT max(id) FROM events WHERE run_id = ?", (self.run_id,)).fetchone()
        self.goal_event = row[0] if row else None

    def next_run(self, conn: sqlite3.Connection, at: float, team: str, goal: str) -> None:
        """End this run ("finished": its team was deleted) and go on in a new ``runs`` row
        (same home, source, model and budget) for ``team``: everything after is the new run's."""
        self.write_totals(conn)
        self.end_run(conn, at, "finished", "team finished")
        old = self.run_id
        cursor = conn.execute(
            "INSERT INTO runs (team, goal, source, model, offline, home, pid, started_at,"
            " budget_usd) SELECT ?, ?, source, model, offline, home, pid, ?, budget_usd"
            " FROM runs WHERE id = ?",
            (team, goal, at, old),
        )
        self.run_id = int(cursor.lastrowid or 0)
        self._agents = set()
        if self.goal_event is not None:
            moved = conn.execute(
                "UPDATE events SET run_id = ? WHERE run_id = ? AND id >= ?"
                " AND kind IN ('transcript', 'status', 'mode')",
                (self.run_id, old, self.goal_event),
            ).rowcount
            conn.execute("UPDATE runs SET events = events - ? WHERE id = ?", (moved, old))
            self.counts["events"] += moved
        self.index.sync(conn, moved_from=self.goal_event)
        self.index = SegmentWriter(self.run_id)
        self.goal_event = None

    # ------------------------------------------------------------------ events

    def event(
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
        """Add one event; its id, or ``None`` when its key was recorded already."""
        cursor = conn.execute(
            "INSERT OR IGNORE INTO events (run_id, at, kind, agent, target, frame, text, size,"
            " data, key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.run_id, at, kind, agent, target, frame, text, size, data, key),
        )
        if cursor.rowcount == 0:
            return None
        self.counts["events"] += 1
        event_id = cursor.lastrowid
        self.index.written((event_id, at, kind, agent, target, frame, text, size, data))
        return event_id

    # ------------------------------------------------------------------ agents

    def ensure_agent(
        self,
        conn: sqlite3.Connection,
        name: str,
        at: float,
        info: dict[str, Any],
        *,
        update: bool = False,
    ) -> None:
        """The agent's row, added the first time; ``info`` (type, model, mode, colour) fills
        in what is known, on later calls too when given or when ``update``."""
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
                self.counts["agents"] += 1
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

    def agent_exited(
        self, conn: sqlite3.Connection, at: float, agent: str, status: str, reason: str
    ) -> None:
        conn.execute(
            "UPDATE agents SET exited_at = ?, exit_status = ?, exit_reason = ?"
            " WHERE run_id = ? AND name = ?",
            (at, status, reason, self.run_id, agent),
        )

    def agent_mode(self, conn: sqlite3.Connection, agent: str, mode: str) -> None:
        conn.execute(
            "UPDATE agents SET mode = ? WHERE run_id = ? AND name = ?",
            (mode, self.run_id, agent),
        )

    def model_call(
        self,
        conn: sqlite3.Connection,
        event_id: int | None,
        agent: str,
        model: str,
        counts: tuple[int, int, int, int],
        cost: float | None,
    ) -> None:
        """One model call's tokens and cost, added to the agent's and the run's totals (at the
        end of the batch)."""
        conn.execute(
            "INSERT INTO model_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (event_id, self.run_id, agent, model, *counts, cost),
        )
        totals = self._agent_totals.get(agent)
        if totals is None:
            totals = self._agent_totals[agent] = [0, 0, 0, 0, 0.0]
        for i, value in enumerate(counts):
            totals[i] += value
        totals[4] += cost or 0.0
        for name, value in zip(TOKEN_COLUMNS, counts, strict=True):
            self.counts[name] += value
        self.cost += cost or 0.0

    # ------------------------------------------------------------------ approvals

    def approval_asked(
        self,
        conn: sqlite3.Connection,
        at: float,
        request_id: str,
        kind: str,
        agent: str,
        title: str | None,
        body: str | None,
    ) -> None:
        conn.execute(
            "INSERT INTO approvals (run_id, request_id, kind, agent, title, body, asked_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
            " title = excluded.title, body = excluded.body, asked_at = excluded.asked_at",
            (self.run_id, request_id, kind, agent, title, body, at),
        )

    def approval_answered(
        self,
        conn: sqlite3.Connection,
        at: float,
        request_id: str,
        kind: str,
        agent: str,
        outcome: str | None,
        by: str = "",
    ) -> None:
        """``by``: who answered, as the runtime knows it (``user``: the person); it outranks
        the answer frame's sender, which is ``team-lead`` whoever decided."""
        conn.execute(
            "INSERT INTO approvals (run_id, request_id, kind, agent) VALUES (?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (self.run_id, request_id, kind, agent),
        )
        conn.execute(
            "UPDATE approvals SET answered_at = ?, decision = ?,"
            " decided_by = coalesce(?, decided_by) WHERE run_id = ? AND request_id = ?",
            (at, outcome or "answered", by or None, self.run_id, request_id),
        )

    # ------------------------------------------------------------------ messages

    def message(
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
        answered_by: str | None = None,
    ) -> None:
        """``answered_by``: the message's ``answeredBy`` (who decided the answer it carries,
        when not its sender: the person, answering with ``teamdeck approve``)."""
        key = message_key(team, recipient, sender, timestamp, text)
        stored, size = truncate(text)
        data = {"summary": summary, "timestamp": timestamp, "team": team}
        if answered_by:
            data["answered_by"] = answered_by  # the timeline credits them (``event_line``)
        event_id = self.event(
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
        self.counts["messages"] += 1
        if frame in REQUEST_FRAMES:
            self._request_from_frame(conn, at, sender, recipient, text)
        elif frame in ANSWER_FRAMES:
            self._answer_from_frame(conn, at, answered_by or sender, text)

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
            "UPDATE approvals SET decided_by = coalesce(decided_by, ?),"
            " feedback = coalesce(?, feedback),"
            " decision = coalesce(decision, ?), answered_at = coalesce(answered_at, ?)"
            " WHERE run_id = ? AND request_id = ?",
            (sender, feedback, decision, at, self.run_id, request_id),
        )

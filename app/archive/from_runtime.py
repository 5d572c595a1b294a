"""The runtime's events, as rows: status, transcript, usage, messages this process sent,
approvals, the run's end and permission modes (the team's creation and deletion are the
recorder's own: ``app.archive.recorder``).

Handlers run on the caller's thread (the runtime's loop): they take what the event and the
runtime say now and queue one operation; the SQL runs on the writer thread (``rows``).

Usage events carry cumulative counts; the difference is stored as one model call, priced with
``app.runtime.model.pricing``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, Protocol

from app.archive import adapter
from app.archive.rows import Rows, dump, truncate
from app.archive.writer import Writer
from app.runtime.model.pricing import call_cost

EXIT_REASONS = {"completed": "shut down", "failed": "failed", "killed": "killed"}


class Run(Protocol):
    """What the handlers read of the run, as it is now (the recorder's attributes)."""

    runtime: Any
    model: str
    offline: bool
    team: str | None


class RuntimeEvents:
    """Turns one run's runtime events into queued rows."""

    def __init__(self, run: Run, writer: Writer, rows: Rows) -> None:
        self.run = run
        self.writer = writer
        self.rows = rows
        # Loop-thread state.
        self._usage: dict[str, tuple[int, int, int, int, int]] = {}
        self._seen_agents: set[str] = set()
        self._models: dict[str, str] = {}
        self._handlers: dict[str, Callable[[float, dict[str, Any]], None]] = {
            "status": self._on_status,
            "transcript": self._on_transcript,
            "usage": self._on_usage,
            "message": self._on_message,
            "approval": self._on_approval,
            "finished": self._on_finished,
            "mode": self._on_mode,
        }

    def next_run(self) -> None:
        """A new run starts: its agents' rows are filled in again (what the runtime says)."""
        self._seen_agents.clear()

    def resume_usage(self, counted: dict[str, tuple[int, int, int, int, int]]) -> None:
        """An attach goes on with a run: its agents' running totals (the lead's restored
        conversation, a teammate process's log) start from what the run recorded, so the
        first total after the attach is not recorded again as one model call."""
        self._usage.update(counted)

    def handle(self, kind: str, at: float, f: dict[str, Any]) -> None:
        """One converted event (``adapter.runtime_event``) of ``kind``, other than "team"."""
        self._handlers[kind](at, f)

    def _on_status(self, at: float, f: dict[str, Any]) -> None:
        agent = f["agent"]
        info = self._agent_info(agent)
        status, detail = f["status"], f["detail"]
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            rows.ensure_agent(conn, agent, at, info)
            rows.event(conn, at, "status", agent=agent, frame=status, text=detail)
            if status in EXIT_REASONS:
                rows.agent_exited(conn, at, agent, status, detail or EXIT_REASONS[status])

        self.writer.submit(op)

    def _agent_info(self, agent: str) -> dict[str, Any]:
        """What the runtime says of ``agent`` (asked until it knows the agent)."""
        runtime = self.run.runtime
        if agent in self._seen_agents or runtime is None:
            return {}
        info = adapter.agent_info(runtime, agent)
        if info:
            self._seen_agents.add(agent)
        return info

    def _on_transcript(self, at: float, f: dict[str, Any]) -> None:
        text, size = truncate(f["text"])
        data = dict(f["data"])
        tool = data.get("tool")

        def op(conn: sqlite3.Connection) -> None:
            self.rows.event(
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
        tokens = [max(0, a - b) for a, b in zip(now[:4], before[:4], strict=True)]
        if not any(tokens) and now[4] <= before[4]:
            return  # tool calls only
        # The offline model answers as whatever model was asked for: it is "offline" here, not
        # "claude-sonnet-…" (``history show`` named a model no call reached, issue 30).
        model = "offline" if self.run.offline else self._model_of(agent)
        i, o, cache_read, cache_write = tokens
        cost = call_cost(model, i, o, cache_read, cache_write, offline=self.run.offline)
        self.record_usage(at, agent, model, i, o, cache_read, cache_write, cost)

    def _model_of(self, agent: str) -> str:
        model = self._models.get(agent)
        if model is None:
            runtime = self.run.runtime
            info = adapter.agent_info(runtime, agent) if runtime is not None else {}
            model = self._models[agent] = str(info.get("model") or self.run.model)
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
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            rows.ensure_agent(conn, agent, at, {})
            event_id = rows.event(conn, at, "usage", agent=agent, frame=model, data=dump(data))
            rows.model_call(conn, event_id, agent, model, counts, cost)

        self.writer.submit(op)

    def _on_message(self, at: float, f: dict[str, Any]) -> None:
        team = f["team"] or self.run.team

        def op(conn: sqlite3.Connection) -> None:
            self.rows.message(
                conn,
                at,
                team,
                f["sender"],
                f["recipient"],
                f["text"],
                f["summary"],
                f["frame"],
                f["timestamp"],
                f.get("answered_by"),
            )

        self.writer.submit(op)

    def _on_approval(self, at: float, f: dict[str, Any]) -> None:
        request_id, kind, agent = f["request_id"], f["kind"], f["agent"]
        resolved, outcome = f["resolved"], f["outcome"]
        title = body = None
        runtime = self.run.runtime
        if not resolved and runtime is not None:
            title, body = adapter.approval_info(runtime, request_id)
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            if resolved:
                rows.approval_answered(conn, at, request_id, kind, agent, outcome, f["by"])
            else:
                rows.approval_asked(conn, at, request_id, kind, agent, title, body)
            text, size = truncate(outcome if resolved else (title or "asked"))
            rows.event(
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

    def _on_finished(self, at: float, f: dict[str, Any]) -> None:
        def op(conn: sqlite3.Connection) -> None:
            frame = "ok" if f["ok"] else "failed"
            self.rows.event(conn, at, "run", frame=frame, text=f["reason"])

        self.writer.submit(op)

    def _on_mode(self, at: float, f: dict[str, Any]) -> None:
        agent, mode = f["agent"], f["mode"]
        rows = self.rows

        def op(conn: sqlite3.Connection) -> None:
            rows.ensure_agent(conn, agent, at, {})
            rows.agent_mode(conn, agent, mode)
            rows.event(conn, at, "mode", agent=agent, frame=mode, text=f"mode {mode}")

        self.writer.submit(op)

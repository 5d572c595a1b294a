"""Claude Code's hook events (``app.runtime.bridge``), as rows of the run a viewer records.

Each event is one ``claude-hook`` event row (its name in ``frame``, the feed's words in
``text``, the hook's stdin in ``data``); an event that says an agent's status
(``app.runtime.bridge.facts``) also a ``status`` row, so a replay shows it; a request the bridge
held is a row of ``approvals``, asked when it arrived and answered when a person answered it
(teamdeck's own ``Answered`` event, credited to ``user``: only the person answers a held
request, with the dashboard's keys or ``teamdeck approve``/``reject`` through the bridge), or
let go when Claude Code went on without it (``AnsweredElsewhere``: decided by ``claude-code``,
the decision says why).
Claude Code deletes the inbox messages it consumed: these rows are what the archive keeps of
them.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from app.archive.rows import Rows, dump
from app.archive.writer import Writer
from app.core.paths import USER_NAME
from app.runtime.bridge.facts import feed_text, status_of
from app.runtime.bridge.server import ANSWERED, LET_GO, HookEvent

#: Keys of a hook's stdin not worth keeping (long, or the same in every event).
_DROPPED = ("transcript_path", "effort", "prompt_id", "permission_suggestions")


def record_hook(writer: Writer, rows: Rows, event: HookEvent) -> None:
    at, agent, name = event.at, event.sender.agent, event.event
    text = feed_text(event) or name
    data = {k: v for k, v in event.data.items() if k not in _DROPPED}
    status = status_of(event)
    request = event.request_id

    def op(conn: sqlite3.Connection) -> None:
        rows.ensure_agent(conn, agent, at, {})
        rows.event(conn, at, "claude-hook", agent=agent, frame=name, text=text, data=dump(data))
        if status is not None:
            rows.ensure_agent(conn, status[0], at, {})
            rows.event(conn, at, "status", agent=status[0], frame=status[1], text=f"({name})")
        if request and name == ANSWERED:
            kind = str(event.data.get("kind") or "permission")
            decision = str(event.data.get("decision") or "answered")
            rows.approval_answered(conn, at, request, kind, agent, decision, by=USER_NAME)
        elif request and name == LET_GO:  # Claude Code went on without teamdeck's answer
            kind = str(event.data.get("kind") or "permission")
            why = str(event.data.get("why") or "answered in Claude Code")
            rows.approval_answered(conn, at, request, kind, agent, why, by="claude-code")
        elif request:
            kind = "plan" if event.data.get("tool_name") == "ExitPlanMode" else "permission"
            body: Any = event.data.get("tool_input")
            rows.approval_asked(conn, at, request, kind, agent, text, dump(body or None))

    writer.submit(op)

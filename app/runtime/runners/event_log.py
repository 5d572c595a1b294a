"""An agent's event log: ``teams/{team}/agents/{name}.jsonl`` (teamdeck's own; Claude Code
never reads it).

The **event log**: append-only JSON Lines, one object per line, written only
by the agent itself (plus one final ``exit`` line by whoever finds its process dead). Every line
has ``t`` (epoch milliseconds) and ``event``::

    {"t": ..., "event": "start", "logVersion": 1, "pid": 4242, "backend": "process",
     "model": "claude-sonnet-5-5", "mode": "default", "color": "green",
     "agentType": "general-purpose", "cwd": "/repo"}
    {"t": ..., "event": "status", "status": "running", "detail": ""}
    {"t": ..., "event": "mode", "mode": "acceptEdits"}
    {"t": ..., "event": "activity", "text": "Read app/cli/main.py"}
    {"t": ..., "event": "entry", "kind": "tool_call", "text": "...", "data": {...}}
    {"t": ..., "event": "usage", "inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0,
     "cacheCreationTokens": 0, "toolCalls": 0, "modelCalls": 0}
    {"t": ..., "event": "message", "team": "t", "from": "researcher", "to": "team-lead",
     "text": "...", "summary": "...", "frameType": "idle_notification", "timestamp": "..."}
    {"t": ..., "event": "hook", "hookEvent": "TaskCompleted", "outcome": "blocked",
     "command": "make test", "message": "2 tests fail", "taskId": "3", "team": "t"}
    {"t": ..., "event": "exit", "status": "completed", "reason": "shutdown", "error": null}

``entry`` lines are transcript entries (``kind`` as in :class:`TranscriptEntry`); a text over
``ENTRY_LIMIT`` characters is cut, with its full length in ``data.size``. Usage counts are
running totals; ``message`` lines are the messages it wrote to inboxes (for progress output and
the run archive; the inbox files stay the truth). Streamed text deltas are not logged (the
whole ``assistant`` entry follows).
A reader keeps its byte offset and reads only what was appended; a line cut short by a crash is
skipped. The writer appends whole batches of lines with one ``open(O_APPEND)``/``write``/
``close``, so file watchers see each batch as one close-after-write.

The process record beside it (``{name}.json``) is :mod:`app.runtime.runners.process_record`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.runtime.api import AgentSnapshot
from app.runtime.events import (
    ActivityChanged,
    AgentStatus,
    ApprovalChanged,
    ErrorChanged,
    HookRan,
    MessageSent,
    ModeChanged,
    RuntimeEvent,
    StatusChanged,
    TranscriptEntry,
    UsageChanged,
)
from app.runtime.runners.process_record import TeamGoneError, agents_folder, now_ms

log = logging.getLogger(__name__)

LOG_VERSION = 1
ENTRY_LIMIT = 32_000
#: Seconds the writer gathers lines before appending them (one write per burst).
FLUSH_S = 0.02


# ============================================================================== writing


def entry_line(entry: TranscriptEntry) -> dict[str, Any]:
    text = entry.text
    data = dict(entry.data)
    if len(text) > ENTRY_LIMIT:
        data["size"] = len(text)
        text = text[:ENTRY_LIMIT] + f"… [{len(entry.text) - ENTRY_LIMIT} more characters]"
    return {"event": "entry", "kind": entry.kind, "text": text, "data": data}


def event_line(event: RuntimeEvent) -> dict[str, Any] | None:
    """A runtime event of the agent as a log line (``None``: not logged)."""
    if isinstance(event, StatusChanged):
        return {"event": "status", "status": event.status, "detail": event.detail}
    if isinstance(event, ModeChanged):
        return {"event": "mode", "mode": event.mode}
    if isinstance(event, ActivityChanged):
        return {"event": "activity", "text": event.text}
    if isinstance(event, ErrorChanged):
        return {"event": "error", "error": event.error}
    if isinstance(event, TranscriptEntry):
        return entry_line(event)
    if isinstance(event, MessageSent):
        return {
            "event": "message",
            "team": event.team,
            "from": event.sender,
            "to": event.recipient,
            "text": event.text,
            "summary": event.summary,
            "frameType": event.frame_type,
            "timestamp": event.timestamp,
            **({"answeredBy": event.answered_by} if event.answered_by else {}),
            **({"plainText": True} if event.plain else {}),
        }
    if isinstance(event, HookRan):
        return {
            "event": "hook",
            "hookEvent": event.hook_event,
            "outcome": event.outcome,
            "command": event.command,
            "message": event.message,
            "taskId": event.task_id,
            "team": event.team,
        }
    if isinstance(event, ApprovalChanged) and event.resolved:
        # a permission request the teammate stopped waiting for (timed out, cancelled)
        return {"event": "dropped", "requestId": event.request_id, "outcome": event.outcome}
    if isinstance(event, UsageChanged):
        return {
            "event": "usage",
            "inputTokens": event.input_tokens,
            "outputTokens": event.output_tokens,
            "cacheReadTokens": event.cache_read_tokens,
            "cacheCreationTokens": event.cache_creation_tokens,
            "toolCalls": event.tool_calls,
            "modelCalls": event.model_calls,
            "costUsd": event.cost_usd,
            "unpricedCalls": event.unpriced_calls,
        }
    return None


def append_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    """Append ``lines`` in one write (``t`` added where missing)."""
    if not lines:
        return
    stamp = now_ms()
    text = "".join(
        json.dumps({"t": line.pop("t", stamp), **line}, ensure_ascii=False, default=str) + "\n"
        for line in lines
    )
    agents_folder(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


class LogWriter:
    """The agent's event sink: runtime events become log lines, appended in bursts.

    ``schedule(delay, callback)`` arranges a later flush (``loop.call_later`` in the agent);
    without it every event is appended at once."""

    def __init__(
        self,
        path: Path,
        schedule: Callable[[float, Callable[[], None]], object] | None = None,
    ) -> None:
        self.path = path
        self._schedule = schedule
        self._buffer: list[dict[str, Any]] = []
        self._pending = False
        self.failed: str | None = None

    def __call__(self, event: RuntimeEvent) -> None:
        line = event_line(event)
        if line is not None:
            self.write(line)

    def write(self, line: dict[str, Any]) -> None:
        self._buffer.append({"t": now_ms(), **line})
        if self._schedule is None:
            self.flush()
        elif not self._pending:
            self._pending = True
            self._schedule(FLUSH_S, self.flush)

    def flush(self) -> None:
        self._pending = False
        lines, self._buffer = self._buffer, []
        try:
            append_lines(self.path, lines)
        except TeamGoneError:
            pass  # the team was deleted (its end): nothing to keep
        except OSError as exc:  # the disk is full, a permission changed...: say it once
            if self.failed is None:
                self.failed = str(exc)
                log.warning("cannot write the agent log %s: %s", self.path, exc)


# ============================================================================== reading


class LogReader:
    """Reads what was appended to a log since the last call (whole lines only)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._partial = b""

    @property
    def consumed(self) -> int:
        """The bytes of whole lines read so far (an unfinished last line not counted)."""
        return self.offset - len(self._partial)

    def read_new(self, upto: int | None = None) -> list[dict[str, Any]]:
        """The whole lines appended since the last call (``upto``: none past that byte)."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read() if upto is None else handle.read(max(0, upto - self.offset))
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("cannot read the agent log %s: %s", self.path, exc)
            return []
        self.offset += len(chunk)
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()  # an unfinished last line waits for the rest
        parsed: list[dict[str, Any]] = []
        for raw in lines:
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except ValueError:
                log.warning("skipped a damaged line in %s", self.path)
                continue
            if isinstance(item, dict) and isinstance(item.get("event"), str):
                parsed.append(item)
        return parsed


@dataclass
class LoggedAgent:
    """An agent as its log tells it: the panel's snapshot, the transcript, how it ended.

    ``apply(line)`` folds one log line in and returns the runtime events it stands for, so a
    runner in another process re-emits them on its own bus."""

    snapshot: AgentSnapshot
    transcript: list[TranscriptEntry] = field(default_factory=list)
    start: dict[str, Any] | None = None
    exit: dict[str, Any] | None = None
    transcript_limit: int = 2000

    @property
    def name(self) -> str:
        return self.snapshot.name

    def apply(self, line: dict[str, Any]) -> list[RuntimeEvent]:
        snap = self.snapshot
        kind = line.get("event")
        at = float(line.get("t") or now_ms()) / 1000
        if kind == "start":
            self.start = line
            snap.status_since = at  # (its panel's order stays the spawn order)
            snap.model = str(line.get("model") or snap.model)
            snap.color = line.get("color") or snap.color
            mode = str(line.get("mode") or snap.mode)
            if mode != snap.mode:
                snap.mode = mode
                return [ModeChanged(self.name, mode)]
            return []
        if kind == "status":
            status: AgentStatus = line.get("status") or "running"
            detail = str(line.get("detail") or "")
            if status != snap.status:
                snap.status_since = at
            snap.status = status
            if detail.startswith("turn failed: "):
                snap.error = detail.removeprefix("turn failed: ")
            return [StatusChanged(self.name, status, detail)]
        if kind == "mode":
            snap.mode = str(line.get("mode") or "default")
            return [ModeChanged(self.name, snap.mode)]
        if kind == "activity":
            snap.last_activity = str(line.get("text") or "")
            return [ActivityChanged(self.name, snap.last_activity)]
        if kind == "error":
            snap.error = str(line["error"]) if line.get("error") else None
            return [ErrorChanged(self.name, snap.error)]
        if kind == "entry":
            entry = TranscriptEntry(
                self.name, line.get("kind") or "notice", str(line.get("text") or ""),
                dict(line.get("data") or {}),
            )  # fmt: skip
            self.transcript.append(entry)
            if len(self.transcript) > self.transcript_limit:
                del self.transcript[: len(self.transcript) - self.transcript_limit]
            return [entry]
        if kind == "usage":
            return [self._usage(line)]
        if kind == "message":
            return [
                MessageSent(
                    str(line.get("team") or ""), str(line.get("from") or self.name),
                    str(line.get("to") or ""), str(line.get("text") or ""), line.get("summary"),
                    line.get("frameType"), str(line.get("timestamp") or ""),
                    by if isinstance(by := line.get("answeredBy"), str) else None,
                    line.get("plainText") is True,
                )
            ]  # fmt: skip
        if kind == "hook":
            outcome = line.get("outcome")
            return [
                HookRan(
                    self.name, str(line.get("hookEvent") or ""),
                    outcome if outcome in ("ok", "blocked", "warning") else "warning",
                    str(line.get("command") or ""), str(line.get("message") or ""),
                    line.get("taskId"), line.get("team"),
                )
            ]  # fmt: skip
        if kind == "dropped":
            request_id, outcome = str(line.get("requestId") or ""), str(line.get("outcome") or "")
            return [ApprovalChanged(request_id, "permission", self.name, True, outcome)]
        if kind == "exit":
            return self._exit(line, at)
        return []

    def _usage(self, line: dict[str, Any]) -> UsageChanged:
        snap = self.snapshot
        snap.input_tokens = int(line.get("inputTokens") or 0)
        snap.output_tokens = int(line.get("outputTokens") or 0)
        snap.cache_read_tokens = int(line.get("cacheReadTokens") or 0)
        snap.cache_write_tokens = int(line.get("cacheCreationTokens") or 0)
        snap.tool_calls = int(line.get("toolCalls") or 0)
        snap.model_calls = int(line.get("modelCalls") or 0)
        cost = line.get("costUsd")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            snap.cost_usd = float(cost)  # priced by the agent's own process
            snap.unpriced_calls = int(line.get("unpricedCalls") or 0)
        return UsageChanged(
            self.name,
            snap.input_tokens,
            snap.output_tokens,
            snap.cache_read_tokens,
            snap.cache_write_tokens,
            snap.tool_calls,
            snap.model_calls,
            snap.cost_usd,
            snap.unpriced_calls,
        )

    def _exit(self, line: dict[str, Any], at: float) -> list[RuntimeEvent]:
        if self.exit is not None:
            return []
        self.exit = line
        snap = self.snapshot
        status: AgentStatus = line.get("status") or "completed"
        if line.get("error"):
            snap.error = str(line["error"])
        snap.ended_at = at
        if status == snap.status:
            return []
        snap.status, snap.status_since = status, at
        return [StatusChanged(self.name, status, str(line.get("error") or ""))]


def exit_line(status: str, reason: str, error: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"event": "exit", "status": status, "reason": reason, "error": error, **extra}

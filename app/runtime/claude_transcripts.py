"""A Claude Code teammate's own session transcript, found and read from the home's ``projects/``.

Claude Code writes every session as JSON lines under ``projects/<encoded cwd>/<sessionId>.jsonl``
(sub-agents since 2.1.2 under ``<parent sessionId>/subagents/agent-<agentId>.jsonl``). Each record
carries ``sessionId``; records of an agent-team session also carry ``teamName`` and, for a
teammate, ``agentName`` (observed on 2.1.3x transcripts; e.g. daaain/claude-code-log issue #91
and its "Teammates support" notes). How a teammate's file is found, most specific first:

1. the member's own session id in the team config (``sessionId``, when the config has one) names
   the file: ``projects/**/<sessionId>.jsonl``;
2. otherwise the newest ``projects/**/*.jsonl`` whose first records say ``teamName`` = the team
   and ``agentName`` = the member (the lead's ``leadSessionId`` folder is searched first: in-process
   teammates live under it).

Reading is incremental (:class:`TranscriptReader` keeps its byte offset and a partial last line):
tool calls and tool results collapse to one line each, and token usage is summed from the same
records (once per API message id: Claude Code writes one record per content block of a message,
each repeating that message's usage). Only reads: nothing is created.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.core.errors import TeamdeckError
from app.core.home import Home
from app.core.models import TeamConfig
from app.runtime.events import TranscriptEntry

LineKind = Literal["text", "tool", "result", "prompt"]
HEAD_RECORDS = 8  # records read from a candidate file to recognise its team and agent
LINE_LIMIT = 160


@dataclass(frozen=True)
class TranscriptLine:
    kind: LineKind
    text: str


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    tool_calls: int = 0


def _jsonl_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, _dirs, names in os.walk(root):
        found.extend(Path(folder) / n for n in names if n.endswith(".jsonl"))
    return found


def _head(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    try:
        with path.open("rb") as fh:
            for _ in range(HEAD_RECORDS):
                line = fh.readline()
                if not line:
                    break
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    records.append(record)
    except OSError:
        return []
    return records


def find_transcript(home: Home, config: TeamConfig, agent: str) -> Path | None:
    """The transcript file of ``agent`` in ``config``'s team, or ``None`` (see module doc)."""
    projects = home.root / "projects"
    if not projects.is_dir():
        return None
    member = config.member(agent)
    if member is None:
        return None
    files = _jsonl_files(projects)
    session = (member.extra_fields().get("sessionId") or "") if member else ""
    if isinstance(session, str) and session:
        named = [p for p in files if p.stem == session]
        if named:
            return max(named, key=_mtime)
    lead = config.lead_session_id
    files.sort(key=lambda p: (lead not in p.parts if lead else True, -_mtime(p)))
    for path in files:
        for record in _head(path):
            if record.get("teamName") == config.name and record.get("agentName") == member.name:
                return path
    return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_LIMIT else flat[: LINE_LIMIT - 1] + "…"


def _tool_line(block: dict[str, Any]) -> str:
    name = str(block.get("name") or "tool")
    args = block.get("input")
    if isinstance(args, dict) and args:
        first_key = next(iter(args))
        return _cut(f"{name}({first_key}={json.dumps(args[first_key], ensure_ascii=False)})")
    return f"{name}()"


def _result_line(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        content = " ".join(
            str(c.get("text", ""))
            for c in content
            if isinstance(c, dict) and c.get("type") == "text"
        )
    text = str(content or "")
    lines = text.strip().splitlines()
    head = lines[0] if lines else "(empty)"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    mark = "error: " if block.get("is_error") else ""
    return _cut(f"{mark}{head}{more}")


@dataclass
class TranscriptReader:
    """Reads one transcript as it grows (call :meth:`read_new` whenever it may have changed)."""

    path: Path
    offset: int = 0
    usage: Usage = field(default_factory=Usage)
    _partial: bytes = b""
    _usage_by_message: dict[str, dict[str, int]] = field(default_factory=dict)

    def read_new(self) -> list[TranscriptLine]:
        """The lines written since the last call (a half-written last record waits)."""
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        data = self._partial + chunk
        complete, _, self._partial = data.rpartition(b"\n")
        lines: list[TranscriptLine] = []
        for raw in complete.split(b"\n"):
            if raw.strip():
                lines.extend(self._record(raw))
        self._total()
        return lines

    def _record(self, raw: bytes) -> list[TranscriptLine]:
        try:
            record = json.loads(raw)
        except ValueError:
            return []
        if not isinstance(record, dict) or not isinstance(record.get("message"), dict):
            return []
        message: dict[str, Any] = record["message"]
        content = message.get("content")
        out: list[TranscriptLine] = []
        if record.get("type") == "assistant":
            usage = message.get("usage")
            if isinstance(usage, dict):
                key = str(message.get("id") or record.get("uuid") or len(self._usage_by_message))
                self._usage_by_message[key] = {
                    k: int(v) for k, v in usage.items() if isinstance(v, int)
                }
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    out.append(TranscriptLine("text", str(block["text"]).strip()))
                elif block.get("type") == "tool_use":
                    self.usage.tool_calls += 1
                    out.append(TranscriptLine("tool", _tool_line(block)))
        elif record.get("type") == "user":
            if isinstance(content, str) and content.strip():
                out.append(TranscriptLine("prompt", content.strip()))
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(TranscriptLine("result", _result_line(block)))
        return out

    def _total(self) -> None:
        u = self._usage_by_message.values()
        self.usage.input_tokens = sum(x.get("input_tokens", 0) for x in u)
        self.usage.output_tokens = sum(x.get("output_tokens", 0) for x in u)
        self.usage.cache_read_tokens = sum(x.get("cache_read_input_tokens", 0) for x in u)
        self.usage.cache_creation_tokens = sum(x.get("cache_creation_input_tokens", 0) for x in u)


EntryKind = Literal["user", "assistant", "tool_call", "tool_result"]
_ENTRY_KINDS: dict[LineKind, EntryKind] = {
    "prompt": "user",
    "text": "assistant",
    "tool": "tool_call",
    "result": "tool_result",
}


class ClaudeTranscripts:
    """The teammates' transcripts of the team a dashboard shows, as transcript entries.

    ``team``: a callable giving the team shown now. Each call reads only what was appended since
    the last one; a teammate without a transcript gets one notice saying so."""

    def __init__(self, home: Home, team: Callable[[], str | None]) -> None:
        self.home = home
        self.team = team
        self._readers: dict[tuple[str, str], TranscriptReader] = {}
        self._entries: dict[tuple[str, str], list[TranscriptEntry]] = {}

    def entries(self, agent: str) -> list[TranscriptEntry]:
        team = self.team()
        if not team:
            return []
        key = (team, agent)
        reader = self._readers.get(key)
        if reader is None:
            try:
                config = self.home.teams.get(team)
            except (TeamdeckError, OSError) as exc:
                return [TranscriptEntry(agent, "error", str(exc))]
            path = find_transcript(self.home, config, agent) if config is not None else None
            if path is None:
                where = self.home.root / "projects"
                note = f"no transcript found for {agent} in {where}"
                return [TranscriptEntry(agent, "notice", note)]
            reader = self._readers[key] = TranscriptReader(path)
            self._entries[key] = [TranscriptEntry(agent, "notice", f"transcript: {path}")]
        kept = self._entries[key]
        for line in reader.read_new():
            kind = _ENTRY_KINDS[line.kind]
            kept.append(TranscriptEntry(agent, kind, line.text))
        u = reader.usage
        usage = (
            f"tokens: {u.input_tokens} in · {u.output_tokens} out · "
            f"{u.cache_read_tokens} cache read · {u.tool_calls} tool calls"
        )
        return [*kept, TranscriptEntry(agent, "notice", usage)]

"""A Claude Code teammate's own session transcript, found and read from the home's ``projects/``.

Claude Code writes every session as JSON lines under ``projects/<encoded cwd>/<sessionId>.jsonl``
(sub-agents since 2.1.2 under ``<parent sessionId>/subagents/agent-<agentId>.jsonl``). Each record
carries ``sessionId``; records of an agent-team session also carry ``teamName`` and, for a
teammate, ``agentName`` (observed on 2.1.3x transcripts; e.g. daaain/claude-code-log issue #91
and its "Teammates support" notes). How a teammate's file is found, most specific first:

1. the member's own session id in the team config (``sessionId``, when the config has one) names
   the file: ``projects/**/<sessionId>.jsonl``;
2. an in-process teammate of 2.1.332: ``<leadSessionId>/subagents/agent-a<name>-<hex>.jsonl``
   whose sibling ``.meta.json`` says ``name`` = the member and ``teamName`` = the team (its
   records name neither);
3. otherwise the newest ``projects/**/*.jsonl`` whose first records say ``teamName`` = the team
   and ``agentName`` = the member (the lead's ``leadSessionId`` folder is searched first: in-process
   teammates live under it).

Reading is incremental (:class:`TranscriptReader` keeps its byte offset and a partial last line):
tool calls and tool results collapse to one line each, and token usage is summed from the same
records (once per API message id: Claude Code writes one record per content block of a message,
each repeating that message's usage). Only reads: nothing is created.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.core.errors import TeamdeckError
from app.core.home import Home
from app.core.models import TeamConfig
from app.core.paths import LEAD_NAME
from app.runtime.events import TranscriptEntry
from app.runtime.model.pricing import call_cost

LineKind = Literal["text", "tool", "result", "prompt"]
HEAD_RECORDS = 8  # records read from a candidate file to recognise its team and agent
LINE_LIMIT = 160


@dataclass(frozen=True)
class TranscriptLine:
    """One line of a transcript; ``data`` ties a tool call to its result (``tool``,
    ``tool_use_id``, ``input`` / ``is_error``) so a view can fold them into one line."""

    kind: LineKind
    text: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    tool_calls: int = 0
    #: USD at the list prices of ``app.runtime.model.pricing``, for the calls whose model has
    #: a price; ``unpriced_calls`` counts the others (the cost is then a floor)
    cost_usd: float = 0.0
    unpriced_calls: int = 0


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


def find_transcript(
    home: Home, config: TeamConfig, agent: str, files: list[Path] | None = None
) -> Path | None:
    """The transcript file of ``agent`` in ``config``'s team, or ``None`` (see module doc).
    The lead's is its own session's: ``leadSessionId`` names it. ``files``: the
    ``projects/**/*.jsonl`` paths if the caller has listed them already."""
    projects = home.root / "projects"
    if files is None and not projects.is_dir():
        return None
    member = config.member(agent)
    if member is None:
        return None
    files = list(_jsonl_files(projects) if files is None else files)
    session = member.extra_fields().get("sessionId") or ""
    is_lead = member.agent_id == config.lead_agent_id or member.name == LEAD_NAME
    if is_lead:
        session = session or config.lead_session_id or ""
    if isinstance(session, str) and session:
        named = [p for p in files if p.stem == session]
        if named:
            return max(named, key=_mtime)
    if is_lead:
        return None  # the lead is found by its session id only
    # Only sessions written since the team was created can be its teammates' (this keeps a
    # search of a big projects/ folder short).
    since = config.created_at / 1000 if config.created_at else 0.0
    files = [p for p in files if _mtime(p) >= since]
    lead = config.lead_session_id
    named = [p for p in files if _subagent_of(p, config.name, member.name, lead)]
    if named:
        return max(named, key=_mtime)
    files.sort(key=lambda p: (lead not in p.parts if lead else True, -_mtime(p)))
    for path in files:
        for record in _head(path):
            if record.get("teamName") == config.name and record.get("agentName") == member.name:
                return path
    return None


def _subagent_of(path: Path, team: str, name: str, lead: str | None) -> bool:
    """Whether ``path`` is the in-process teammate ``name``'s transcript (2.1.332):
    ``<leadSessionId>/subagents/agent-a<name>-<hex>.jsonl``, whose records do not name the
    teammate; the sibling ``.meta.json`` does (``name``, ``teamName``)."""
    if path.parent.name != "subagents" or (lead and path.parent.parent.name != lead):
        return False
    if not path.name.startswith(f"agent-a{name}-"):
        return False
    try:
        meta = json.loads(path.with_name(path.name[: -len(".jsonl")] + ".meta.json").read_text())
    except (OSError, ValueError):
        return False
    return (
        isinstance(meta, dict) and meta.get("name") == name and meta.get("teamName", team) == team
    )


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
    _model_by_message: dict[str, str] = field(default_factory=dict)

    def read_new(self) -> list[TranscriptLine]:
        """The lines written since the last call (a half-written last record waits). A file
        that did not grow costs one ``stat``."""
        try:
            if self.path.stat().st_size <= self.offset:
                return []
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
                self._model_by_message[key] = str(message.get("model") or "")
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    out.append(TranscriptLine("text", str(block["text"]).strip()))
                elif block.get("type") == "tool_use":
                    self.usage.tool_calls += 1
                    call = {
                        "tool": str(block.get("name") or "tool"),
                        "tool_use_id": str(block.get("id") or ""),
                        "input": block.get("input"),
                        "collapsed": True,
                    }
                    out.append(TranscriptLine("tool", _tool_line(block), call))
        elif record.get("type") == "user":
            if isinstance(content, str) and content.strip():
                out.append(TranscriptLine("prompt", content.strip()))
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    result = {
                        "tool_use_id": str(block.get("tool_use_id") or ""),
                        "is_error": bool(block.get("is_error")),
                    }
                    out.append(TranscriptLine("result", _result_line(block), result))
        return out

    def _total(self) -> None:
        u = self._usage_by_message.values()
        self.usage.input_tokens = sum(x.get("input_tokens", 0) for x in u)
        self.usage.output_tokens = sum(x.get("output_tokens", 0) for x in u)
        self.usage.cache_read_tokens = sum(x.get("cache_read_input_tokens", 0) for x in u)
        self.usage.cache_creation_tokens = sum(x.get("cache_creation_input_tokens", 0) for x in u)
        cost, unpriced = 0.0, 0
        for key, x in self._usage_by_message.items():
            counts = (x.get("input_tokens", 0), x.get("output_tokens", 0))
            caches = (x.get("cache_read_input_tokens", 0), x.get("cache_creation_input_tokens", 0))
            call = call_cost(self._model_by_message.get(key, ""), *counts, *caches)
            if call is None:
                unpriced += 1
            else:
                cost += call
        self.usage.cost_usd, self.usage.unpriced_calls = cost, unpriced


EntryKind = Literal["user", "assistant", "tool_call", "tool_result"]
_ENTRY_KINDS: dict[LineKind, EntryKind] = {
    "prompt": "user",
    "text": "assistant",
    "tool": "tool_call",
    "result": "tool_result",
}


class ClaudeTranscripts:
    """The transcripts of the team a dashboard shows (the lead's and each teammate's), as
    transcript entries, read incrementally as Claude Code appends to them.

    ``team``: a callable giving the team shown now. :meth:`entries` gives what was read so far
    (reading what was appended since); :meth:`poll` reads what was appended to several and says
    whose changed (the dashboard calls it from a worker thread while views show them);
    :meth:`usage` gives the token counts summed from the same records. Thread-safe: one lock.

    An agent whose transcript cannot be found gets one notice saying so; the search (a walk of
    ``projects/``) is not repeated on every call but every ``recheck`` seconds, so a transcript
    that appears later is still picked up. The first entry of an agent's list says where it
    comes from, so a reader can tell the list was replaced (found later, another team)."""

    def __init__(
        self,
        home: Home,
        team: Callable[[], str | None],
        *,
        recheck: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.home = home
        self.team = team
        self.recheck = recheck
        self.clock = clock
        self._lock = threading.Lock()
        self._readers: dict[tuple[str, str], TranscriptReader] = {}
        self._entries: dict[tuple[str, str], list[TranscriptEntry]] = {}
        self._missing: dict[tuple[str, str], float] = {}  # when a search last found nothing
        self._errors: dict[tuple[str, str], str] = {}  # the last read error said, per agent
        self._listing: tuple[float, list[Path]] | None = None  # projects/**/*.jsonl, and when

    def entries(self, agent: str) -> list[TranscriptEntry]:
        """``agent``'s entries so far (a copy), after reading what was appended."""
        team = self.team()
        if not team:
            return []
        with self._lock:
            self._refresh(team, agent)
            return list(self._entries.get((team, agent), []))

    def poll(self, agents: Iterable[str]) -> set[str]:
        """Read what was appended to each of ``agents``' transcripts; the agents whose entries
        changed (grew, or were replaced)."""
        team = self.team()
        if not team:
            return set()
        changed: set[str] = set()
        with self._lock:
            for agent in agents:
                if self._refresh(team, agent):
                    changed.add(agent)
        return changed

    def look_again(self) -> None:
        """Search for the transcripts not found yet at the next read, not ``recheck`` seconds
        after the last search (a hook said an agent started or did something)."""
        with self._lock:
            self._missing.clear()
            self._listing = None

    def usage(self, agent: str) -> Usage | None:
        """Token usage and tool calls of ``agent``'s transcript (``None``: none found yet)."""
        team = self.team()
        with self._lock:
            reader = self._readers.get((team or "", agent))
            return dataclasses.replace(reader.usage) if reader is not None else None

    def _refresh(self, team: str, agent: str) -> bool:
        """Bring ``(team, agent)``'s entries up to date; True if they changed."""
        key = (team, agent)
        reader = self._readers.get(key)
        if reader is None:
            searched = self._missing.get(key)
            if searched is not None and self.clock() - searched < self.recheck:
                return False  # looked recently: nothing there
            found = self._find(team, agent)
            if isinstance(found, TranscriptEntry):
                self._missing[key] = self.clock()
                changed = self._entries.get(key) != [found]
                self._entries[key] = [found]
                return changed
            self._missing.pop(key, None)
            reader = self._readers[key] = TranscriptReader(found)
            self._entries[key] = [TranscriptEntry(agent, "notice", f"transcript: {found}")]
            self._read(reader, key, agent)
            return True
        return self._read(reader, key, agent)

    def _find(self, team: str, agent: str) -> Path | TranscriptEntry:
        try:
            config = self.home.teams.get(team)
        except (TeamdeckError, OSError) as exc:
            return TranscriptEntry(agent, "error", str(exc))
        path = None
        if config is not None:
            path = find_transcript(self.home, config, agent, self._files())
        if path is None:
            where = self.home.root / "projects"
            return TranscriptEntry(agent, "notice", f"no transcript found for {agent} in {where}")
        return path

    def _files(self) -> list[Path]:
        """``projects/**/*.jsonl``, listed at most every ``recheck`` seconds (one walk serves
        every agent looked for meanwhile)."""
        now = self.clock()
        if self._listing is None or now - self._listing[0] >= self.recheck:
            projects = self.home.root / "projects"
            self._listing = (now, _jsonl_files(projects) if projects.is_dir() else [])
        return self._listing[1]

    def _read(self, reader: TranscriptReader, key: tuple[str, str], agent: str) -> bool:
        """Append what ``reader`` finds new; True if the file grew (entries or usage changed)."""
        kept = self._entries[key]
        offset = reader.offset
        try:
            lines = reader.read_new()
        except OSError as exc:  # said once (in the transcript), not on every poll
            error = f"reading {reader.path}: {exc.strerror or exc}"
            if self._errors.get(key) == error:
                return False
            self._errors[key] = error
            kept.append(TranscriptEntry(agent, "error", error))
            return True
        self._errors.pop(key, None)
        kept.extend(
            TranscriptEntry(agent, _ENTRY_KINDS[line.kind], line.text, line.data) for line in lines
        )
        return reader.offset != offset

"""Which teammate processes run, from their records (``teamdeck ps``, ``teamdeck attach``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.runtime.runners.process_record import is_alive, read_record

if TYPE_CHECKING:
    from app.core import Home

TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class AgentProcess:
    team: str
    name: str
    backend: str
    pid: int
    alive: bool
    heartbeat_age: float
    started_at: int
    status: str  # the last status its log names ("?" when it names none)
    tmux_target: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "team": self.team,
            "name": self.name,
            "backend": self.backend,
            "pid": self.pid,
            "alive": self.alive,
            "heartbeatAge": round(self.heartbeat_age, 1),
            "startedAt": self.started_at,
            "status": self.status,
            "tmuxTarget": self.tmux_target,
        }


def last_status(log_path: Path) -> str:
    """The last ``status`` (or ``exit``) a log names, from its tail."""
    try:
        with open(log_path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return "?"
    for raw in reversed(tail.splitlines()):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("event") in ("status", "exit"):
            return str(line.get("status") or "?")
    return "?"


def agent_processes(home: Home, team: str | None = None) -> list[AgentProcess]:
    """Every agent with a process record (teammates and leads), team by team; reads only."""
    teams_dir = home.layout.teams_dir
    try:
        teams = sorted(e.name for e in os.scandir(teams_dir) if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    found: list[AgentProcess] = []
    for name in teams:
        if team is not None and name != team:
            continue
        folder = teams_dir / name / "agents"
        try:
            records = sorted(e.path for e in os.scandir(folder) if e.name.endswith(".json")
                             and not e.name.endswith(".conversation.json"))  # fmt: skip
        except OSError:
            continue
        for path in records:
            read = read_record(Path(path))
            if read is None:
                continue
            record, age = read
            found.append(
                AgentProcess(
                    team=record.team,
                    name=record.name,
                    backend=record.backend,
                    pid=record.pid,
                    alive=is_alive(record, age),
                    heartbeat_age=age,
                    started_at=record.started_at,
                    status=last_status(Path(path[: -len(".json")] + ".jsonl")),
                    tmux_target=record.tmux_target,
                )
            )
    return found


def running_teams(home: Home) -> list[str]:
    """Teams with at least one live agent process."""
    return sorted({p.team for p in agent_processes(home) if p.alive})


def team_backend(home: Home, team: str) -> str:
    """The mode a team's teammates run in, by their records (``process`` if none says)."""
    for process in agent_processes(home, team):
        if process.backend in ("process", "tmux"):
            return process.backend
    return "process"

"""Raw file changes under a home -> typed change events, by path and by the state on disk.

``teams/{t}/config.json`` -> ``TeamChanged(t)``, or ``TeamRemoved(t)`` once the config (or the
team directory) is gone; ``teams/{t}/inboxes/{agent}.json`` -> ``InboxChanged(t, agent)``;
``tasks/{t}/{id}.json`` -> ``TaskChanged(t, id)``; ``teams/{t}/agents/{agent}.jsonl`` (an
agent's event log, written by teammates in other processes) -> ``AgentLogChanged(t, agent)``.
Temp files, lock files and directories, ``.corrupt-`` copies, ``.highwatermark`` and ``.lock``
never get past the filter. A new team,
inbox or task directory is scanned once when it appears, because files created in it before
the watch existed would otherwise go unreported.

No watching here: :class:`~app.core.watch.Watcher` feeds what its backend (inotify or
watchfiles) reports through :meth:`ChangeMap.watch_filter` and :meth:`ChangeMap.map_changes`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from watchfiles import Change

from app.core.events import (
    AgentLogChanged,
    ChangeEvent,
    InboxChanged,
    InboxRead,
    TaskChanged,
    TeamChanged,
    TeamRemoved,
)
from app.core.files import is_temp_name

RawChange = tuple[Change, str]


def is_ignored_name(name: str) -> bool:
    """Names the watcher never reports: temp files, dot files (``.lock``, ``.highwatermark``),
    lock files and directories (and proper-lockfile's ``.lock.stale-*`` graves) and
    quarantined ``.corrupt-`` copies."""
    return (
        name.startswith(".")
        or is_temp_name(name)
        or name.endswith(".lock")
        or ".lock." in name
        or ".corrupt-" in name
    )


def dedupe(events: Iterable[ChangeEvent]) -> list[ChangeEvent]:
    """Drop repeated events, keeping each at its *last* position (the latest word wins when a
    team is removed and created again within one batch)."""
    seen: set[ChangeEvent] = set()
    kept: list[ChangeEvent] = []
    for event in reversed(list(events)):
        if event not in seen:
            seen.add(event)
            kept.append(event)
    kept.reverse()
    return kept


def _sort_key(event: ChangeEvent) -> tuple[int, str, int, str]:
    if isinstance(event, TaskChanged):
        tid = event.task_id
        return (1, event.team, int(tid) if tid.isdigit() else -1, tid)
    if isinstance(event, InboxChanged):
        return (2, event.team, 0, event.agent)
    return (0, event.team, 0, "")


class ChangeMap:
    """The paths of one home's ``teams/`` and ``tasks/`` folders, and what changes there mean."""

    def __init__(self, teams_dir: Path, tasks_dir: Path, *, agent_logs: bool = True) -> None:
        self.agent_logs = agent_logs
        self.teams_dir = teams_dir
        self.tasks_dir = tasks_dir
        self._teams_prefix = str(teams_dir) + os.sep
        self._tasks_prefix = str(tasks_dir) + os.sep

    def _split(self, path: str) -> tuple[str, list[str]] | None:
        if path.startswith(self._teams_prefix):
            return "teams", path[len(self._teams_prefix) :].split(os.sep)
        if path.startswith(self._tasks_prefix):
            return "tasks", path[len(self._tasks_prefix) :].split(os.sep)
        return None

    def watch_filter(self, change: Change, path: str) -> bool:
        """Keep only paths that can map to an event (see the module docstring)."""
        split = self._split(path)
        if split is None:
            return False
        area, parts = split
        if any(is_ignored_name(part) for part in parts):
            return False
        if len(parts) == 1:  # a team directory or task directory appearing / disappearing
            return True
        if area == "teams":
            if len(parts) == 2:
                return parts[1] in ("config.json", "inboxes") or (
                    parts[1] == "agents" and self.agent_logs
                )
            if len(parts) == 3 and parts[1] == "agents":
                return self.agent_logs and parts[2].endswith(".jsonl")
            return len(parts) == 3 and parts[1] == "inboxes" and parts[2].endswith(".json")
        return len(parts) == 2 and parts[1].endswith(".json") and parts[1][:-5].isdigit()

    def map_changes(self, changes: Iterable[RawChange]) -> list[ChangeEvent]:
        """Turn one batch of (filtered) raw changes into sorted, deduplicated events, using
        the state on disk now (a config that exists means changed, else removed)."""
        events: list[ChangeEvent] = []
        for change, path in changes:
            split = self._split(path)
            if split is None:
                continue
            area, parts = split
            team = parts[0]
            if area == "teams":
                if len(parts) == 1:  # the team directory
                    if change == Change.deleted:
                        events.append(self._team_state(team))
                    elif change == Change.added:  # scan: its files may predate the watch
                        if (self.teams_dir / team / "config.json").exists():
                            events.append(TeamChanged(team))
                        events.extend(self._scan_inboxes(team))
                elif parts[1] == "config.json":
                    events.append(self._team_state(team))
                elif len(parts) == 2:  # the inboxes or agents directory
                    if change == Change.added:
                        scan = self._scan_logs if parts[1] == "agents" else self._scan_inboxes
                        events.extend(scan(team))
                elif parts[1] == "agents":
                    if change != Change.deleted:
                        events.append(AgentLogChanged(team, parts[2][: -len(".jsonl")]))
                else:
                    events.append(InboxChanged(team, parts[2][:-5]))
            elif len(parts) == 1:  # a task directory
                if change == Change.added:
                    events.extend(self._scan_tasks(team))
            else:
                events.append(TaskChanged(team, parts[1][:-5]))
        return sorted(dedupe(events), key=_sort_key)

    def _team_state(self, team: str) -> ChangeEvent:
        if os.path.exists(self.teams_dir / team / "config.json"):
            return TeamChanged(team)
        return TeamRemoved(team)

    def _scan_inboxes(self, team: str) -> list[ChangeEvent]:
        try:
            entries = list(os.scandir(self.teams_dir / team / "inboxes"))
        except OSError:
            return []
        return [
            InboxChanged(team, e.name[:-5])
            for e in entries
            if e.name.endswith(".json") and not is_ignored_name(e.name)
        ]

    def _scan_logs(self, team: str) -> list[ChangeEvent]:
        try:
            entries = list(os.scandir(self.teams_dir / team / "agents"))
        except OSError:
            return []
        return [
            AgentLogChanged(team, e.name[: -len(".jsonl")])
            for e in entries
            if e.name.endswith(".jsonl") and not is_ignored_name(e.name)
        ]

    def _scan_tasks(self, team: str) -> list[ChangeEvent]:
        try:
            entries = list(os.scandir(self.tasks_dir / team))
        except OSError:
            return []
        return [
            TaskChanged(team, e.name[:-5])
            for e in entries
            if e.name.endswith(".json") and e.name[:-5].isdigit()
        ]

    def path_of(self, event: ChangeEvent) -> Path:
        """The file an event is about (an inbox, a task, a team's config)."""
        if isinstance(event, InboxChanged | InboxRead):
            name = event.agent.replace("@", "-")  # as in the inbox file's name
            return self.teams_dir / event.team / "inboxes" / f"{name}.json"
        if isinstance(event, TaskChanged):
            return self.tasks_dir / event.team / f"{event.task_id}.json"
        if isinstance(event, AgentLogChanged):
            return self.teams_dir / event.team / "agents" / f"{event.agent}.jsonl"
        return self.teams_dir / event.team / "config.json"

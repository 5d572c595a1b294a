"""Typed change events, produced by the watcher (other processes) and by in-process writers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TeamChanged:
    team: str


@dataclass(frozen=True, slots=True)
class TeamRemoved:
    team: str


@dataclass(frozen=True, slots=True)
class InboxChanged:
    team: str
    agent: str


@dataclass(frozen=True, slots=True)
class TaskChanged:
    team: str
    task_id: str


ChangeEvent = TeamChanged | TeamRemoved | InboxChanged | TaskChanged

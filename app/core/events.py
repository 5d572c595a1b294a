"""Typed change events, produced by the watcher (other processes) and by in-process writers.

An in-process writer may say which file identity ``(inode, size, mtime_ns, ctime_ns)`` it
wrote (``written``, and for a mark-read the identity just before it, ``prior``): the watcher
uses them to recognise the disk's echo of the write. They take no part in equality, so an
event means the same whoever reports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FileIdentity = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class TeamChanged:
    team: str


@dataclass(frozen=True, slots=True)
class TeamRemoved:
    team: str


@dataclass(frozen=True, slots=True)
class InboxChanged:
    """The inbox may hold new messages (or was rewritten by someone else)."""

    team: str
    agent: str
    written: FileIdentity | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class InboxRead:
    """Messages of the inbox were marked read, and nothing else changed: no news for whoever
    waits for mail (the watcher turns it into ``InboxChanged`` when it cannot be sure)."""

    team: str
    agent: str
    written: FileIdentity | None = field(default=None, compare=False, repr=False)
    prior: FileIdentity | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class TaskChanged:
    team: str
    task_id: str


@dataclass(frozen=True, slots=True)
class AgentLogChanged:
    """An agent's event log (``teams/{team}/agents/{agent}.jsonl``) grew: what a teammate in
    another process said, did and spent."""

    team: str
    agent: str


ChangeEvent = TeamChanged | TeamRemoved | InboxChanged | InboxRead | TaskChanged | AgentLogChanged

"""Typed change events, produced by the watcher (other processes) and by in-process writers.

An in-process writer may say which file identity ``(inode, size, mtime_ns, ctime_ns)`` it
wrote (``written``, and for a mark-read the identity just before it, ``prior``): the watcher
uses them to recognise the disk's echo of the write. A task write also carries what it wrote
(``task``: status, owner, subject), so a listener that only needs those reads no file. These
fields take no part in equality, so an event means the same whoever reports it.
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
class TaskState:
    """What a task write of this process put in the file (the fields listeners care about)."""

    status: str
    owner: str | None
    subject: str
    internal: bool = False


@dataclass(frozen=True, slots=True)
class TaskChanged:
    """The task file changed. From this process's own writer: ``task`` is what it wrote
    (``None`` with ``deleted`` for a deleted task) and ``written`` the file's identity; from
    the watcher (another process, or an echo it could not match) both are ``None``: read the
    file."""

    team: str
    task_id: str
    task: TaskState | None = field(default=None, compare=False, repr=False)
    deleted: bool = field(default=False, compare=False, repr=False)
    written: FileIdentity | None = field(default=None, compare=False, repr=False)

    @property
    def local(self) -> bool:
        """Announced by this process's writer (its content is in the event)."""
        return self.task is not None or self.deleted


@dataclass(frozen=True, slots=True)
class AgentLogChanged:
    """An agent's event log (``teams/{team}/agents/{agent}.jsonl``) grew: what a teammate in
    another process said, did and spent."""

    team: str
    agent: str


ChangeEvent = TeamChanged | TeamRemoved | InboxChanged | InboxRead | TaskChanged | AgentLogChanged

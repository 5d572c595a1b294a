"""The team store as the runtime sees it: messages, tasks, members, requests and answers, and
a change feed, whatever keeps them.

Two backends satisfy these Protocols. The files (``Mailbox``, ``TaskList``, ``Teams``,
``Watcher`` in this package: the default, the embedded engine that needs nothing) satisfy them
as they are: each Protocol below is written from their public API, and ``mypy --strict``
checks that both backends still do where ``app.engine.choose`` builds a ``TeamStore`` from
either (``tests/engine/test_protocol.py`` checks it at run time too). The PostgreSQL engine
(``app.engine``) satisfies them too, for teams that span machines. Which one a caller gets
is decided in one place, ``app.engine.choose``; nothing else asks which backend it has.

Only what both backends mean the same way is here: the files' extras (locks, file
identities, Claude Code's shapes) stay on the file classes.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from app.core.events import ChangeEvent
from app.core.models import InboxMessage, Task, TeamConfig, TeamMember
from app.core.task_claims import ClaimResult

Callback = Callable[[list[ChangeEvent]], object]


@runtime_checkable
class MessageStore(Protocol):
    """One team's inboxes (``app.core.mailbox.Mailbox``)."""

    team: str

    def send(self, recipient: str, message: InboxMessage) -> str:
        """Check the recipient is a member, deliver; the member name it went to."""
        ...

    def broadcast(self, message: InboxMessage, *, exclude: str | None = None) -> list[str]: ...

    def read(self, agent: str) -> Sequence[InboxMessage]:
        """Every message of the inbox, oldest first."""
        ...

    def unread(self, agent: str) -> list[tuple[int, InboxMessage]]:
        """The unread messages with their index in ``read``'s order."""
        ...

    def count(self, agent: str) -> int: ...

    def mark_read(self, agent: str, index: int | list[int], *, durable: bool = True) -> int: ...

    def mark_all_read(self, agent: str, *, durable: bool = True) -> int: ...


@runtime_checkable
class TaskStore(Protocol):
    """One team's task board (``app.core.tasks.TaskList``)."""

    team: str

    def create(
        self,
        subject: str,
        description: str = "",
        *,
        active_form: str | None = None,
        metadata: dict[str, Any] | None = None,
        owner: str | None = None,
        status: str = "pending",
    ) -> Task: ...

    def get(self, task_id: str) -> Task | None: ...

    def require(self, task_id: str) -> Task: ...

    def list(self, *, include_internal: bool = False) -> builtins.list[Task]: ...

    def available(self) -> builtins.list[Task]: ...

    def claim(
        self,
        task_id: str,
        agent: str,
        *,
        check_busy: bool = False,
        status: str | None = None,
    ) -> ClaimResult:
        """Exactly one of many racing claimers wins."""
        ...

    def claim_next(self, agent: str, *, status: str | None = None) -> ClaimResult | None:
        """The lowest-id pending, unowned, unblocked task, if ``agent`` owns no open one."""
        ...


@runtime_checkable
class MemberStore(Protocol):
    """The teams and their members (``app.core.teams.Teams``)."""

    def get(self, name: str) -> TeamConfig | None: ...

    def require(self, name: str) -> TeamConfig: ...

    def names(self) -> builtins.list[str]: ...

    def add_member(self, team: str, member: TeamMember) -> TeamConfig: ...

    def update_member(self, team: str, name: str, **fields: Any) -> TeamMember: ...


@runtime_checkable
class RequestStore(Protocol):
    """Permission and plan requests and their answers: the first answer wins, every later
    one raises ``AlreadyAnsweredError``; only the person's side (the desk) may answer. On files
    a request is a frame in the lead's inbox and its answer a frame in the requester's
    (``app.runtime.by_files.steering.answer_request``, signed by ``app.core.authority``); in
    the engine they are rows, and the database refuses an answer from an agent's role."""

    def ask(self, request_id: str, requester: str, kind: str, body: dict[str, Any]) -> None:
        """Record a request (idempotent: the same id twice is one request)."""
        ...

    def answer(self, request_id: str, body: dict[str, Any]) -> None: ...

    def answer_of(self, request_id: str) -> dict[str, Any] | None:
        """The answer, ``None`` while the request is open."""
        ...


@runtime_checkable
class ChangeFeed(Protocol):
    """Typed change events from every writer (``app.core.watch.Watcher``): ``InboxChanged``
    for new mail, ``TaskChanged`` for the board, ``TeamChanged`` for members."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def subscribe(self, callback: Callback) -> Callable[[], None]: ...


@dataclass
class TeamStore:
    """One team's store, whichever backend keeps it (built by ``app.engine.choose``)."""

    team: str
    backend: str  # "files" or "engine"
    messages: MessageStore
    tasks: TaskStore
    members: MemberStore
    feed: Callable[[], ChangeFeed]
    """A new change feed (start it in the event loop that will use it)."""
    requests: RequestStore | None = None
    """The engine's requests; ``None`` on files, where requests and answers are inbox frames."""
    close: Callable[[], None] = field(default=lambda: None)

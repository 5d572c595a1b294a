"""What the mailbox, the task list and the team registry need of their ``Home``.

``Home`` builds a ``Mailbox``, a ``TaskList`` and ``Teams``; they in turn need a few things of
it -- the folder layout, a lock per file, the change announcements, the team configs and the
task folders. Typing that as ``Home`` itself tied the four modules in a circle (even if only
for the type checker); typed as these small Protocols, the parts depend on nothing above them
and ``Home`` is simply one thing that fits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from app.core.events import ChangeEvent
from app.core.locks import HomeLock
from app.core.models import TeamConfig
from app.core.paths import Layout


class TeamReader(Protocol):
    """Reading team configs (``Teams``)."""

    def get(self, name: str) -> TeamConfig | None: ...

    def require(self, name: str) -> TeamConfig: ...


class TaskFolder(Protocol):
    """A team's task list, as far as creating a team needs it (``TaskList``)."""

    def init(self) -> None: ...


class HomeParts(Protocol):
    """The part of ``Home`` its mailboxes, task lists and team registry use."""

    @property
    def layout(self) -> Layout: ...

    @property
    def teams(self) -> TeamReader: ...

    def tasks(self, team: str) -> TaskFolder: ...

    def lock(self, resource: Path) -> HomeLock: ...

    def emit(self, event: ChangeEvent) -> None: ...

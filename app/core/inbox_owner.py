"""What the inbox helpers (``inbox_append``, ``inbox_marks``) need of a mailbox.

``app.core.mailbox.Mailbox`` calls those helpers with itself; they see it through this
Protocol, so neither imports the mailbox back (a type-only circle is still a circle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from app.core.events import ChangeEvent
from app.core.locks import HomeLock
from app.core.paths import Layout


class InboxHome(Protocol):
    def lock(self, resource: Path) -> HomeLock: ...

    def emit(self, event: ChangeEvent) -> None: ...


class InboxOwner(Protocol):
    """A team's mailbox: its team, its home's locks and change events, its inbox paths."""

    @property
    def team(self) -> str: ...

    @property
    def layout(self) -> Layout: ...

    @property
    def home(self) -> InboxHome: ...

    def path(self, agent: str) -> Path: ...

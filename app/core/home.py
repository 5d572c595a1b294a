"""``Home``: the entry point of the core API (one home directory with Claude Code's layout)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import NotFoundError
from app.core.events import ChangeEvent
from app.core.files import mark_claude_home
from app.core.locks import DEFAULT_TIMEOUT, HomeLock, make_lock
from app.core.paths import Layout, LockStyle
from app.core.teams import Teams

if TYPE_CHECKING:  # loaded by the first mailbox() / tasks(): `teamdeck team list` needs neither
    from app.core.mailbox import Mailbox
    from app.core.tasks import TaskList

Listener = Callable[[ChangeEvent], None]

_TASKLIST_LOCK = os.sep + ".lock"  # the task list's own lock file (``Layout.tasklist_lock_path``)


class Home:
    """A home directory: ``Home(root)`` for teamdeck's own, ``lock_style="mkdir"`` for a Claude
    Code home (locks compatible with its npm ``proper-lockfile``).

    Constructing a Home creates nothing: folders appear with the first write that needs them,
    so looking at a home (or at a mistyped path) leaves the disk as it was. In a Claude Code
    home new files and folders get Claude Code's modes and corrupt files are never copied
    aside (see ``app.core.files``).

    The parts it builds see it through ``app.core.home_parts.HomeParts`` (they never import
    this module), so ``Home`` can import them at the top."""

    def __init__(
        self,
        root: str | Path,
        lock_style: LockStyle = "flock",
        lock_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if lock_style not in ("flock", "mkdir"):
            raise ValueError(f"unknown lock style {lock_style!r}")
        self.root = Path(root).expanduser().absolute()
        self.lock_style: LockStyle = lock_style
        self.lock_timeout = lock_timeout
        self.layout = Layout(self.root)
        if lock_style == "mkdir":
            mark_claude_home(self.root)
        self._listeners: list[Listener] = []
        self._listeners_lock = threading.Lock()
        self.teams: Teams = Teams(self)

    def __repr__(self) -> str:
        return f"Home({str(self.root)!r}, lock_style={self.lock_style!r})"

    @property
    def is_claude(self) -> bool:
        """Whether this is a Claude Code home (someone else's files: leave them as they are)."""
        return self.lock_style == "mkdir"

    def exists(self) -> bool:
        return self.root.is_dir()

    def require_exists(self) -> None:
        """NotFoundError (one line) if the home folder does not exist: for read commands."""
        if not self.root.is_dir():
            raise NotFoundError(f"home {self.root} does not exist")

    def mailbox(self, team: str) -> Mailbox:
        from app.core.mailbox import Mailbox

        return Mailbox(self, team)

    def tasks(self, team: str) -> TaskList:
        from app.core.tasks import TaskList

        return TaskList(self, team)

    # ------------------------------------------------------------------ locks

    def lock(self, resource: Path) -> HomeLock:
        """The lock guarding ``resource``: ``{resource}.lock`` (a flock file, or a directory in
        mkdir style, as proper-lockfile makes it). The task list's own ``.lock`` file is locked
        directly with flock (``.lock.lock`` in mkdir style, like Claude Code)."""
        text = os.fspath(resource)  # on text: a Path per lock costs more than the flock
        if not (self.lock_style == "flock" and text.endswith(_TASKLIST_LOCK)):
            text += ".lock"
        return make_lock(text, self.lock_style, self.lock_timeout)

    # ------------------------------------------------------------------ change notification

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` after every write this process makes; returns an unsubscriber."""
        with self._listeners_lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._listeners_lock, contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: ChangeEvent) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)

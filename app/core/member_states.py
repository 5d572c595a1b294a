"""Member state changes written to a team's ``config.json`` in batches.

Every agent keeps its ``isActive`` (and its permission ``mode``) current in the team config,
as Claude Code does. Written one change at a time, a busy team rewrote and fsynced the config
several times a second -- and every watcher (the dashboard, each teammate) re-read it each
time. Here a change is recorded and written with the others that arrive within
:data:`BATCH_DELAY`: one read-modify-write of the config per team per batch, under its lock,
made only if a field differs from the file (``Teams.modify`` writes nothing otherwise). A
value set and set back within one batch is never written at all.

The file stays Claude Code's shape: only the member fields named change, every other field
(unknown ones included) and the key order are kept. A member that has left the team by the
time the batch is written is skipped; a team deleted meanwhile, too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol


class MemberWriter(Protocol):
    """What the batcher needs of ``Teams`` (a Protocol, so this module imports no ``teams``)."""

    def update_members(self, team: str, members: dict[str, dict[str, Any]]) -> bool: ...


BATCH_DELAY = 0.1
"""Seconds a change waits for others before the config is written."""

_log = logging.getLogger(__name__)

OnError = Callable[[Exception], None]


class MemberStates:
    """Pending member field changes of one home's teams, written by a timer thread."""

    def __init__(self, teams: MemberWriter, delay: float = BATCH_DELAY) -> None:
        self._teams = teams
        self.delay = delay
        self._pending: dict[str, dict[str, dict[str, Any]]] = {}
        self._on_error: dict[str, list[OnError]] = {}
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.writes = 0
        """Config rewrites this batcher made (for ``bench/scale.py``)."""

    def set(self, team: str, name: str, *, on_error: OnError | None = None, **fields: Any) -> None:
        """Record ``fields`` for member ``name`` (``Teams.update_member``'s field names); they
        are written within :attr:`delay` seconds. ``on_error`` is called (on the timer
        thread) if that write fails."""
        with self._lock:
            self._pending.setdefault(team, {}).setdefault(name, {}).update(fields)
            if on_error is not None:
                self._on_error.setdefault(team, []).append(on_error)
            if self._timer is None:
                # Not a daemon: a process that exits right after a change still writes it.
                self._timer = threading.Timer(self.delay, self.flush)
                self._timer.name = "teamdeck-member-states"
                self._timer.start()

    def pending(self, team: str, name: str) -> dict[str, Any]:
        """The fields recorded for a member and not written yet."""
        with self._lock:
            return dict(self._pending.get(team, {}).get(name, {}))

    def flush(self) -> int:
        """Write everything pending now; returns how many config files were rewritten."""
        with self._lock:
            pending, self._pending = self._pending, {}
            on_error, self._on_error = self._on_error, {}
            timer, self._timer = self._timer, None
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        written = 0
        for team, members in pending.items():
            try:
                if self._teams.update_members(team, members):
                    written += 1
            except Exception as exc:  # noqa: BLE001 - reported to the callers, never lost
                callbacks = on_error.get(team, [])
                for callback in callbacks:
                    callback(exc)
                if not callbacks:
                    _log.warning("could not update members of team %s: %s", team, exc)
        with self._lock:
            self.writes += written
        return written

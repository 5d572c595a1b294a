"""Holding the model calls of teammates in processes of their own (the run's budget).

While the run's budget is spent, the lead's runtime keeps ``teams/{team}/agents/hold.json``
(``{"reason": "paused: budget", "since": ms}``); a teammate process looks for it before each
model call (:class:`FileHold`, its session's gate) and waits while it is there, shown as
"paused: budget" like an in-process teammate. Raising the budget removes the file; the waiting
teammates notice within ``POLL_S``. Calls already streaming finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.files import atomic_write_json
from app.runtime.runners.process_record import agents_folder

if TYPE_CHECKING:
    from app.core import Home
    from app.runtime.agent.session import AgentSession

POLL_S = 0.5


def hold_path(home: Home, team: str) -> Path:
    return home.layout.agents_dir(team) / "hold.json"


def set_hold(home: Home, team: str, reason: str) -> None:
    path = hold_path(home, team)
    agents_folder(path)
    atomic_write_json(path, {"reason": reason, "since": int(time.time() * 1000)})


def clear_hold(home: Home, team: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        hold_path(home, team).unlink()


class FileHold:
    """A teammate process's gate: wait while the team's hold file exists (or until the turn
    is interrupted)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def __call__(self, session: AgentSession) -> None:
        if not self.path.exists():
            return
        reason = "paused: budget"
        session.set_activity(reason)
        session.set_status(session.status, reason)
        while self.path.exists() and not session.interrupted:
            with contextlib.suppress(TimeoutError):  # the file is looked at again, or the turn
                async with asyncio.timeout(POLL_S):  # ends (not wait_for: it can lose a cancel)
                    await session.interrupt_event.wait()
        session.set_activity("")
        session.set_status(session.status, "")

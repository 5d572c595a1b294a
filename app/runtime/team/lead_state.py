"""The lead's side of a team that outlives its dashboard (``process`` and ``tmux`` modes).

While the lead's runtime leads a team whose teammates run in processes of their own, it keeps
in the team's ``agents/`` folder, like every teammate process:

- ``team-lead.json``: its record (pid, heartbeat), so a second dashboard does not start a
  second lead for the same team, and ``teamdeck ps`` shows who leads it;
- ``team-lead.jsonl``: its event log (status, transcript, usage), so ``teamdeck attach``
  shows what the lead said before;
- ``team-lead.conversation.json``: its conversation, rewritten after each of its turns, so
  ``teamdeck attach`` resumes the lead where it stopped.

When the dashboard quits leaving the team running, the record goes (no lead runs) and the
files stay. A lead that ends without quitting (killed, crashed) leaves its record behind: its
teammates see that its process is gone and, unless a dashboard attaches meanwhile, shut down
(:mod:`app.runtime.runners.orphan`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.errors import TeamdeckError
from app.core.files import atomic_write_json
from app.core.paths import LEAD_NAME
from app.runtime.events import RuntimeEvent, TextDelta
from app.runtime.runners.event_log import LoggedAgent, LogReader, LogWriter
from app.runtime.runners.process_record import (
    AgentRecord,
    Heartbeat,
    TeamGoneError,
    agents_folder,
    is_alive,
    proc_start,
    read_record,
    write_record,
)

if TYPE_CHECKING:
    from app.core import Home
    from app.runtime.agent.session import AgentSession

log = logging.getLogger(__name__)


def conversation_path(home: Home, team: str) -> Path:
    return home.layout.agents_dir(team) / f"{LEAD_NAME}.conversation.json"


def _write_conversation(path: Path, data: dict[str, Any]) -> None:
    """Into the team's ``agents/`` folder, never creating the team's folder again."""
    agents_folder(path)
    try:
        atomic_write_json(path, data, make_dirs=False)
    except FileNotFoundError:
        raise TeamGoneError(2, "the team's folder is gone", str(path.parent.parent)) from None


class LeadAlreadyRunningError(TeamdeckError):
    """Another dashboard leads the team."""


def check_no_other_lead(home: Home, team: str) -> None:
    found = read_record(home.layout.agent_record_path(team, LEAD_NAME))
    if found is None:
        return
    record, age = found
    if is_alive(record, age):
        raise LeadAlreadyRunningError(
            f"team {team!r} is already led by a running dashboard (pid {record.pid})"
        )


class LeadKeeper:
    """Keeps the lead's record, log and conversation for one team (see the module docstring)."""

    def __init__(self, home: Home, team: str, session: AgentSession, backend: str) -> None:
        self.home = home
        self.team = team
        self.session = session
        layout = home.layout
        self.record_path = layout.agent_record_path(team, LEAD_NAME)
        self.log_path = layout.agent_log_path(team, LEAD_NAME)
        self.backend = backend
        self.writer: LogWriter | None = None
        self._heartbeat: Heartbeat | None = None

    def start(self) -> None:
        check_no_other_lead(self.home, self.team)
        pid = os.getpid()
        record = AgentRecord(LEAD_NAME, self.team, pid, "lead", proc_start=proc_start(pid))
        write_record(self.record_path, record)
        self._heartbeat = Heartbeat(self.record_path)
        self._heartbeat.start()
        loop = asyncio.get_running_loop()
        self.writer = LogWriter(self.log_path, schedule=loop.call_later)

    def on_event(self, event: RuntimeEvent) -> None:
        """The runtime's bus: the lead's own events go to its log."""
        mine = getattr(event, "agent", None) == LEAD_NAME
        if self.writer is not None and mine and not isinstance(event, TextDelta):
            self.writer(event)

    async def save_conversation(self) -> None:
        """After a lead turn: its conversation, for ``teamdeck attach`` (off the event loop)."""
        messages = json.loads(json.dumps(self.session.messages, default=str))
        path = conversation_path(self.home, self.team)
        try:
            await asyncio.to_thread(_write_conversation, path, {"messages": messages})
        except TeamGoneError:
            pass  # the team was deleted meanwhile: its folder is not brought back
        except (OSError, TeamdeckError) as exc:
            log.warning("the lead's conversation was not kept in %s: %s", path, exc)

    def stop(self) -> None:
        """The lead stops leading (quit): the record goes, the log and conversation stay."""
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        if self.writer is not None:
            self.writer.flush()
            self.writer = None
        with contextlib.suppress(OSError):
            self.record_path.unlink()

    # ------------------------------------------------------------------ attach

    def restore(self) -> int:
        """Take the lead's conversation and transcript back from the files; returns how many
        messages were restored."""
        path = conversation_path(self.home, self.team)
        messages: list[Any] = []
        try:
            data = json.loads(path.read_bytes())
            if isinstance(data, dict) and isinstance(data.get("messages"), list):
                messages = data["messages"]
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            log.warning("cannot read the lead's conversation %s: %s", path, exc)
        self.session.messages = messages
        replay = LoggedAgent(self.session.snapshot)
        for line in LogReader(self.log_path).read_new():
            if line.get("event") in ("entry", "usage"):
                replay.apply(line)
        self.session.transcript = replay.transcript
        return len(messages)

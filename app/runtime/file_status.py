"""What a team's files say about its teammates and about the team itself (no runtime needed).

For a team teamdeck does not run (a live Claude Code team) the files are all there is:

* a teammate is **gone** once it approved a shutdown (or left the config), **stopping** while a
  shutdown request to it is unanswered, **awaiting approval** while a plan or permission request
  of it is unanswered, **idle** when its newest word is an idle notification (or the config marks
  it inactive), and **running** otherwise. Stopping outranks awaiting approval, as in the seeds'
  status strings: a teammate asked to stop is on its way out whatever else it asked;
* a team is **stale** when none of its files changed for ``STALE_AFTER`` seconds and no member is
  running: it is shown with the time of its last activity, not a timer counting up forever.

Everything here only reads (``os.stat``, inbox reads): looking creates nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from app.core.errors import CorruptFileError, TeamdeckError
from app.core.home import Home
from app.core.models import TeamConfig
from app.core.paths import LEAD_NAME
from app.runtime.events import AgentStatus
from app.runtime.file_requests import TeamRequests, scan_team

FileStatus = Literal["running", "idle", "awaiting approval", "stopping", "gone"]
#: A team whose files have not changed for this long, with no member running, is stale.
STALE_AFTER = 30 * 60.0


def teammate_statuses(config: TeamConfig, found: TeamRequests) -> dict[str, FileStatus]:
    """Each teammate's status (see the module docstring); former members with an inbox and a
    shutdown approval are listed as gone."""
    gone = {s.agent for s in found.shutdowns.values() if s.answer == "approved"}
    stopping = {s.agent for s in found.pending_shutdowns()}
    asking = {r.requester for r in found.pending}
    statuses: dict[str, FileStatus] = {}
    for member in config.teammates:
        name = member.name
        if name in gone:
            statuses[name] = "gone"
        elif name in stopping:
            statuses[name] = "stopping"
        elif name in asking:
            statuses[name] = "awaiting approval"
        elif member.is_active is False or _idle(found, name):
            statuses[name] = "idle"
        else:
            statuses[name] = "running"
    for name in sorted(gone - set(statuses)):
        if name != LEAD_NAME:
            statuses[name] = "gone"
    return statuses


def panel_statuses(config: TeamConfig, found: TeamRequests) -> dict[str, AgentStatus]:
    """``teammate_statuses`` in the panels' words: a teammate gone after its shutdown shows as
    "completed", as one that ran in this process does."""
    words: dict[FileStatus, AgentStatus] = {
        "running": "running",
        "idle": "idle",
        "awaiting approval": "awaiting approval",
        "stopping": "stopping",
        "gone": "completed",
    }
    return {name: words[s] for name, s in teammate_statuses(config, found).items()}


def _idle(found: TeamRequests, name: str) -> bool:
    idle = found.idle_at.get(name)
    return idle is not None and idle >= found.last_message_at.get(name, "")


def last_activity(home: Home, team: str) -> float | None:
    """The newest modification time among the team's files (config, inboxes, tasks)."""
    newest: float | None = None
    layout = home.layout
    for folder in (layout.team_dir(team), layout.inboxes_dir(team), layout.task_dir(team)):
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.endswith(".json"):
                        with contextlib.suppress(FileNotFoundError):
                            mtime = entry.stat(follow_symlinks=False).st_mtime
                            newest = mtime if newest is None else max(newest, mtime)
        except (FileNotFoundError, NotADirectoryError):
            continue
    return newest


@dataclass(frozen=True)
class TeamSummary:
    """One line of the team picker."""

    name: str
    members: int  # teammates, the lead not counted
    pending: int  # unanswered plan and permission requests
    last_activity: float | None  # epoch seconds
    stale: bool
    statuses: dict[str, FileStatus]
    error: str | None = None  # the config or an inbox could not be read

    def activity_text(self) -> str:
        if self.last_activity is None:
            return "no activity"
        stamp = datetime.fromtimestamp(self.last_activity, UTC).astimezone()
        return ("stale since " if self.stale else "active ") + stamp.strftime("%Y-%m-%d %H:%M")


def summarize(home: Home, team: str, now: float | None = None) -> TeamSummary:
    """The picker's view of one team (errors are reported in ``error``, never as "empty")."""
    now = time.time() if now is None else now
    activity = last_activity(home, team)
    try:
        config = home.teams.require(team)
    except (CorruptFileError, TeamdeckError, OSError) as exc:
        return TeamSummary(team, 0, 0, activity, False, {}, str(exc))
    found = scan_team(home, team)
    statuses = teammate_statuses(config, found)
    quiet = activity is None or now - activity > STALE_AFTER
    stale = quiet and all(s in ("idle", "gone") for s in statuses.values())
    error = next(iter(found.errors.values()), None)
    members = len(config.teammates)
    return TeamSummary(team, members, len(found.pending), activity, stale, statuses, error)


def team_summaries(home: Home, now: float | None = None) -> list[TeamSummary]:
    """Every team of the home for the picker, newest activity first."""
    summaries = [summarize(home, name, now) for name in home.teams.names()]
    return sorted(summaries, key=lambda s: -(s.last_activity or 0.0))

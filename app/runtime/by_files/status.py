"""What a team's files say about its teammates and about the team itself (no runtime needed).

For a team teamdeck does not run (a live Claude Code team) the files are all there is:

* a teammate is **gone** once it approved a shutdown or left the config (its inbox remains, the
  config no longer lists it), **stopping** while a shutdown request to it is unanswered,
  **awaiting approval** while a plan or permission request of it is unanswered, **idle** when its
  newest word is an idle notification (or the config marks it inactive), and **running**
  otherwise. Stopping outranks awaiting approval, as in the seeds' status strings: a teammate
  asked to stop is on its way out whatever else it asked. Each status comes with since when
  (the timestamp of the message that put the teammate there), so a timer counts time in it;
* a team is **stale** when none of its files changed for ``STALE_AFTER`` seconds and no member is
  working: it is shown with the time of its last activity, and timers stop there.

Everything here only reads (``os.stat``, inbox reads): looking creates nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from app.core.errors import CorruptFileError, TeamdeckError
from app.core.home import Home
from app.core.models import TeamConfig
from app.core.paths import LEAD_NAME, USER_NAME
from app.runtime.by_files.liveness import lead_alive
from app.runtime.by_files.requests import TeamRequests, scan_team
from app.runtime.events import AgentStatus

FileStatus = Literal["running", "idle", "awaiting approval", "stopping", "gone"]
#: A team whose files have not changed for this long, with no member running, is stale.
STALE_AFTER = 30 * 60.0
#: Statuses of a member that is not working: a team of only these may be stale.
INACTIVE: frozenset[str] = frozenset({"idle", "gone", "completed", "failed", "killed"})


@dataclass(frozen=True)
class TeammateState:
    """What the files say of one teammate: its status and since when (an ISO timestamp from
    the message that put it there; ``""`` when the files do not tell)."""

    status: FileStatus
    since: str = ""


def teammate_states(config: TeamConfig, found: TeamRequests) -> dict[str, TeammateState]:
    """Each teammate's status and since when (see the module docstring). Former members are
    listed as gone: those that approved a shutdown, and those with an inbox that the config no
    longer lists (removed without a shutdown)."""
    gone = {s.agent: s.answered_at for s in found.shutdowns.values() if s.answer == "approved"}
    stopping = {s.agent: s.timestamp for s in found.pending_shutdowns()}
    asking: dict[str, str] = {}
    for request in found.pending:  # oldest first: the first one is since when it waits
        asking.setdefault(request.requester, request.timestamp)
    states: dict[str, TeammateState] = {}
    for member in config.teammates:
        name = member.name
        if name in gone:
            states[name] = TeammateState("gone", gone[name])
        elif name in stopping:
            states[name] = TeammateState("stopping", stopping[name])
        elif name in asking:
            states[name] = TeammateState("awaiting approval", asking[name])
        elif _idle(found, name):
            states[name] = TeammateState("idle", found.idle_at[name])
        elif member.is_active is False:
            states[name] = TeammateState("idle", found.last_message_at.get(name, ""))
        else:
            states[name] = TeammateState("running", found.last_message_at.get(name, ""))
    members = {m.name for m in config.members}
    former = set(gone) | {n for n in found.inboxes if n not in members}
    for name in sorted(former - set(states) - {LEAD_NAME, USER_NAME}):
        last = max(found.last_message_at.get(name, ""), found.idle_at.get(name, ""))
        states[name] = TeammateState("gone", gone.get(name) or last)
    return states


def teammate_statuses(config: TeamConfig, found: TeamRequests) -> dict[str, FileStatus]:
    """Each teammate's status (see :func:`teammate_states`)."""
    return {name: state.status for name, state in teammate_states(config, found).items()}


def panel_statuses(config: TeamConfig, found: TeamRequests) -> dict[str, AgentStatus]:
    """``teammate_statuses`` in the panels' words (the same: a departed Claude Code teammate
    is "gone", not "completed": the files do not say it finished its work). A team whose
    ``leadProcess`` (2.1.332) is no longer running is gone, the lead with it: its in-process
    teammates died with the lead, and a lead killed outright leaves its team's files behind."""
    statuses: dict[str, AgentStatus] = dict(teammate_statuses(config, found))
    if lead_alive(config.extra_fields()) is False:
        statuses = dict.fromkeys([m.name for m in config.members] + list(statuses), "gone")
    return statuses


def status_times(config: TeamConfig, found: TeamRequests) -> dict[str, float]:
    """Since when (epoch seconds) each teammate is in its status, where the files tell."""
    times: dict[str, float] = {}
    for name, state in teammate_states(config, found).items():
        at = iso_seconds(state.since)
        if at is not None:
            times[name] = at
    return times


def iso_seconds(stamp: str) -> float | None:
    """An ISO timestamp (``2026-11-22T10:00:00.000Z``) in epoch seconds; ``None`` if it is
    not one."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _idle(found: TeamRequests, name: str) -> bool:
    idle = found.idle_at.get(name)
    return idle is not None and idle >= found.last_message_at.get(name, "")


def is_stale(activity: float | None, statuses: Iterable[str], now: float) -> bool:
    """A team is stale when its files have not changed for ``STALE_AFTER`` seconds and none
    of its members is working (``statuses``: the teammates' statuses)."""
    quiet = activity is None or now - activity > STALE_AFTER
    return quiet and all(s in INACTIVE for s in statuses)


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
        return ("stale since " if self.stale else "active ") + moment_text(self.last_activity)


def moment_text(epoch: float) -> str:
    """A moment as a person reads it: local time, to the minute."""
    return datetime.fromtimestamp(epoch, UTC).astimezone().strftime("%Y-%m-%d %H:%M")


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
    stale = is_stale(activity, statuses.values(), now)
    error = next(iter(found.errors.values()), None)
    members = len(config.teammates)
    return TeamSummary(team, members, len(found.pending), activity, stale, statuses, error)


def team_summaries(home: Home, now: float | None = None) -> list[TeamSummary]:
    """Every team of the home for the picker, newest activity first (the order of
    :func:`by_activity`)."""
    summaries = [summarize(home, name, now) for name in home.teams.names()]
    return sorted(summaries, key=lambda s: -(s.last_activity or 0.0))


def by_activity(home: Home, names: Iterable[str] | None = None) -> list[str]:
    """Team names (default: every team of the home), newest activity first, ties in name
    order: the picker's order, and so the team a viewer shows when none is named."""
    names = home.teams.names() if names is None else sorted(names)
    activity = {name: last_activity(home, name) or 0.0 for name in names}
    return sorted(names, key=lambda name: -activity[name])

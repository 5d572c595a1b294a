"""The end of a run and leaving the dashboard.

- :class:`RunWatch`: a run is over when the lead's team was deleted and the lead's turn then
  ended (its last message is the report); the views then say so and what comes next.
- :func:`ask_quit`: ctrl+q with a live team asks first: shut it down (the default), leave it
  on disk, or stay. The runtime has no whole-team shutdown call, so :func:`shut_team_down`
  uses the person's own levers: a shutdown request to each live teammate (its turn
  interrupted), a wait of ``SHUTDOWN_WAIT`` seconds for their answers, a kill for the ones
  still running, then the team's files are deleted (``Home.teams.delete``, what the lead's
  TeamDelete does). Its progress shows from the moment "Shut down" is chosen.
- :func:`offer_cleanup`: teams an earlier run left on disk, offered for deletion at start.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Iterable
from pathlib import Path

from app.core.paths import LEAD_NAME, default_home
from app.dashboard.screens.host import DeckApp
from app.dashboard.screens.left_teams import LeftTeamsScreen
from app.dashboard.screens.quit import QuitScreen, ShuttingDownScreen
from app.display.program import program_name
from app.display.values import teammates
from app.runtime.events import TERMINAL_STATUSES, RuntimeEvent, StatusChanged, TeamLifecycle
from app.runtime.runners.external import KILL_GRACE
from app.runtime.runners.table import running_teams
from widgets.agent_text import agent_markup

log = logging.getLogger(__name__)

SHUTDOWN_WAIT = 10.0  # seconds teammates get to answer a shutdown request on quit


class RunWatch:
    """Sees runtime events; :meth:`see` returns why the run is over, once it is."""

    def __init__(self) -> None:
        self.deleted: str | None = None  # the team deleted, until the lead's turn ends

    def see(self, events: Iterable[RuntimeEvent]) -> str | None:
        over: str | None = None
        for event in events:
            match event:
                case TeamLifecycle(team=team, event="deleted"):
                    self.deleted = team
                case TeamLifecycle():
                    self.deleted = None  # a new team: a new run
                case StatusChanged(agent=agent, status="idle") if (
                    agent == LEAD_NAME and self.deleted is not None
                ):
                    over = f"team {self.deleted} is done and deleted"
                    self.deleted = None
        return over


def live_team(app: DeckApp) -> str | None:
    """The team the app's runtime leads, while it exists (``None``: nothing to ask)."""
    runtime = app.runtime
    if runtime is None or not runtime.team or app.files.removed:
        return None
    return runtime.team


def _live_teammates(app: DeckApp) -> list[str]:
    return [a.name for a in teammates(app.agents) if a.status not in TERMINAL_STATUSES]


async def ask_quit(app: DeckApp, team: str) -> None:
    """Ask what becomes of ``team``, do it, and quit (or stay, on cancel). In a demo,
    leaving the team keeps the demo's temporary home (``app.keep_home``), as the dialog says."""
    runtime = app.runtime
    running = runtime is not None and runtime.teammate_backend != "in-process"
    statuses = [a.status for a in teammates(app.agents) if a.status not in TERMINAL_STATUSES]
    demo_home = str(app.home.root) if app.demo else None
    choice = await app.push_screen_wait(
        QuitScreen(team, statuses, running=running, demo_home=demo_home)
    )
    if choice is None:
        return
    if choice == "shutdown":
        await shut_team_down(app, team)
    else:
        app.left_team = (team, running)  # the exit line says how to resume it
        if app.demo:
            app.keep_home = True
    app.exit()


def resume_line(home: Path, team: str, running: bool) -> str:
    """The exit line for a team left behind: the exact command that resumes it, as this
    teamdeck was started (``.venv/bin/teamdeck`` after ``make run``, where ``teamdeck`` is not
    on PATH) and with ``--home`` unless it is the default home."""
    command = resume_command(home, team, running)
    if running:
        return f"teamdeck: team {team} left running; resume it with: {command}"
    return f"teamdeck: team {team} left on disk; resume it with: {command}"


def resume_command(home: Path, team: str, running: bool) -> str:
    """The command that resumes ``team`` of ``home``, as this teamdeck was started."""
    where = (
        "" if home.resolve() == default_home().resolve() else f" --home {shlex.quote(str(home))}"
    )
    if running:
        return f"{program_name()}{where} attach {shlex.quote(team)}"
    return f"{program_name()}{where} tui --team {shlex.quote(team)}"


async def shut_team_down(app: DeckApp, team: str) -> None:
    """See the module docstring. What it does shows at once (:class:`ShuttingDownScreen`):
    each teammate is asked to shut down, a working one's current turn interrupted first, so
    it reads the request now rather than after its turn; those that have not stopped after
    ``SHUTDOWN_WAIT`` seconds are killed, one line each, and awaited until their processes
    are gone (SIGKILL ``KILL_GRACE`` s after SIGTERM), so none outlives the dashboard."""
    live = _live_teammates(app)
    progress = ShuttingDownScreen(team, live)
    await app.push_screen(progress)
    for name in live:
        agent = app.agent(name)
        if agent is not None and agent.status in ("running", "awaiting approval"):
            app.steering.interrupt(name)  # before the request: never its answering turn
        app.steering.shutdown(name)  # its waiting requests are answered "no" at once
    await _until_stopped(app, live, progress, app.SHUTDOWN_WAIT)
    late = [name for name in live if not _stopped(app, name)]
    for name in late:
        wait = f"{app.SHUTDOWN_WAIT:g}"
        progress.show(_stopped_of(app, live), f"force-stopping {name} (no answer in {wait} s)")
        app.steering.kill(name)
    if late:
        await _until_stopped(app, late, progress, KILL_GRACE + 2.0)
    home = app.home
    if home.layout.team_dir(team).exists():
        try:
            await asyncio.to_thread(home.teams.delete, team, force=True)
        except Exception as exc:  # quitting anyway: the log says what is left behind
            log.warning("deleting team %s on quit failed: %s", team, exc)


def _stopped(app: DeckApp, name: str) -> bool:
    agent = app.agent(name)
    return agent is None or agent.status in TERMINAL_STATUSES


def _stopped_of(app: DeckApp, names: list[str]) -> set[str]:
    return {name for name in names if _stopped(app, name)}


async def _until_stopped(
    app: DeckApp, names: list[str], progress: ShuttingDownScreen, within: float
) -> None:
    """Until every one of ``names`` has stopped (or ``within`` s), the progress kept shown."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while loop.time() < deadline and live_team(app) is not None:
        app.flush_runtime()
        stopped = _stopped_of(app, names)
        progress.show(stopped | progress.stopped)
        if len(stopped) == len(names):
            return
        await asyncio.sleep(0.1)


async def offer_cleanup(app: DeckApp, teams: list[str]) -> None:
    """Teams an earlier run left on disk: one key deletes them. Teams whose teammates still
    run in processes of their own are not offered: they are said to be running instead."""
    running = set(await asyncio.to_thread(running_teams, app.home))
    for team in sorted(running & set(teams)):
        opens = resume_command(app.home.root, team, True)
        app.notify(agent_markup(f"{opens} opens it"), title=f"{team} is running")
    teams = [t for t in teams if t not in running]
    if not teams or not await app.push_screen_wait(
        LeftTeamsScreen(teams, resume=resume_command(app.home.root, teams[0], False))
    ):
        return
    runtime = app.runtime
    led = runtime.team if runtime is not None else None
    teams = [t for t in teams if t != led]  # a team led since the dialog opened stays
    deleted: list[str] = []
    for team in teams:
        try:
            await asyncio.to_thread(app.home.teams.delete, team, force=True)
        except Exception as exc:
            app.notify(agent_markup(f"{team}: {exc}"), title="Not deleted", severity="error")
        else:
            deleted.append(team)
    if deleted:
        app.notify(agent_markup(", ".join(deleted)), title=f"Deleted {len(deleted)} left team(s)")

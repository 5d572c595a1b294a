"""What the lead's runtime does for a team whose teammates run in processes of their own
(``--teammate-mode process|tmux``): the runtime holds one :class:`TeamProcesses`, ``None`` for
in-process teams.

- Starting a teammate (``make_runner``): a ``teamdeck agent`` process per teammate, seen
  through its files (:mod:`app.runtime.runners.external`); in ``process`` mode forked from one
  pre-imported server (:mod:`app.runtime.runners.forkserver`).
- Outliving the dashboard: the lead keeps its record, log and conversation beside its
  teammates' (:class:`~app.runtime.team.lead_state.LeadKeeper`); ``stop`` detaches the teammates
  instead of ending them; ``adopt`` (``teamdeck attach``) leads such a team again: the lead's
  conversation comes back, each member is watched again (one no process runs is reaped), and the
  requests nobody answered are queued again from the files.
- The run's budget: teammate processes are held through the team's hold file
  (:mod:`app.runtime.runners.hold`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app.core.events import AgentLogChanged
from app.runtime.by_files.requests import scan_team
from app.runtime.events import ApprovalChanged
from app.runtime.model.client import is_offline
from app.runtime.runners.external import ExternalRunner
from app.runtime.runners.forkserver import ForkServer, supported
from app.runtime.runners.hold import clear_hold, set_hold
from app.runtime.runners.launch import AgentLaunch
from app.runtime.runners.modes import BACKENDS, adopt_runner, check_backend, external_runner
from app.runtime.sandbox import SandboxConfig
from app.runtime.team.lead_state import LeadKeeper

if TYPE_CHECKING:
    import anthropic

    from app.core import Home
    from app.core.authority import TeamKey
    from app.runtime.agent.session import AgentSession
    from app.runtime.approvals import Approvals
    from app.runtime.events import RuntimeEvent
    from app.runtime.model.budget import Budget
    from app.runtime.permissions import PermissionRules
    from app.runtime.runners.base import Runner, TeammateSpec
    from app.runtime.team.crew import Crew
    from app.runtime.team.settings_watch import SettingsWatch

log = logging.getLogger(__name__)
#: The lead's first prompt on a team it leads again (``offline.resume`` reads its start).
RESUME_NOTE = (
    "[resumed team {team}: you lead it again as it was left; teammates that no longer ran have "
    "left it, their unfinished tasks back on the board. Check the task list and carry on with "
    "the open work: a teammate for each open task nobody works on.]"
)


class ProcessesHost(Protocol):
    """What of the lead's runtime a process team needs."""

    home: Home
    cwd: Path
    client: anthropic.AsyncAnthropic
    rules: PermissionRules
    permission_timeout: float
    sandbox: SandboxConfig | None
    team_key: TeamKey | None
    team: str | None
    crew: Crew
    queue: Approvals
    lead_session: AgentSession
    budget: Budget | None
    settings_watch: SettingsWatch

    def team_created(self, team: str) -> None: ...

    def submit(self, text: str) -> None: ...

    def subscribe(self, callback: Callable[[RuntimeEvent], None]) -> Callable[[], None]: ...

    def _emit(self, event: RuntimeEvent) -> None: ...

    def _runner_exited(self, runner: Runner) -> None: ...


def check_mode(backend: str) -> None:
    """ValueError for an unknown mode, one line if it cannot run here (no tmux)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown teammate mode {backend!r} (one of: {', '.join(BACKENDS)})")
    check_backend(backend)


class TeamProcesses:
    def __init__(self, runtime: ProcessesHost, backend: str) -> None:
        self.runtime = runtime
        self.backend = backend
        self.keeper: LeadKeeper | None = None
        self._unsubscribe: Callable[[], None] | None = None
        #: Forks ``process`` teammates (started with the runtime, stopped with it).
        self.forks: ForkServer | None = None
        self._adopting = False

    def _external(self) -> list[ExternalRunner]:
        runners = self.runtime.crew.runners.values()
        return [r for r in runners if isinstance(r, ExternalRunner)]

    def _launch(self) -> AgentLaunch:
        rt = self.runtime
        return AgentLaunch(
            home=rt.home.root,
            offline=is_offline(rt.client),
            allow=tuple(str(rule) for rule in rt.rules.allow),
            deny=tuple(str(rule) for rule in rt.rules.deny),
            permission_timeout=rt.permission_timeout,
            sandbox=rt.sandbox,
            team_key=rt.team_key.hex() if rt.team_key is not None else None,
        )

    def from_teammate(self, event: RuntimeEvent) -> None:
        """A teammate process's logged event; one that stopped waiting for a permission
        answer (timed out) closes the request in the queue, which tells the listeners."""
        if isinstance(event, ApprovalChanged) and event.resolved:
            self.runtime.queue.claim(event.request_id, event.outcome)
        else:
            self.runtime._emit(event)

    # ------------------------------------------------------------------ the runtime's steps

    def start(self) -> None:
        """The runtime starts (not to attach): in ``process`` mode the fork server starts now,
        its second of imports at the teammates' priority while the person writes the goal and
        the lead makes the team, so that the first teammates are forked at once
        (bench/live.py ``--sizes``: the first spawn used to wait for those imports)."""
        self._fork_server(start=True)

    def make_runner(self, spec: TeammateSpec) -> ExternalRunner:
        rt = self.runtime
        return external_runner(
            self.backend, spec, home=rt.home, emit=self.from_teammate, on_exit=rt._runner_exited,
            launch=self._launch(), forks=self._fork_server(),
        )  # fmt: skip

    def _fork_server(self, *, start: bool = False) -> ForkServer | None:
        """The team's fork server (``process`` mode, where it can run); ``start``: its
        process now rather than at the first teammate's request."""
        if self.forks is None and self.backend == "process" and supported():
            self.forks = ForkServer(AgentLaunch.base_environment())
        if start and self.forks is not None:
            try:
                self.forks.start()
            except OSError as exc:  # each teammate is exec'd instead (``ProcessRunner``)
                log.info("fork server not started: %s", exc)
        return self.forks

    def team_created(self, team: str) -> None:
        """The team may outlive this runtime: keep the lead resumable."""
        rt = self.runtime
        keeper = LeadKeeper(rt.home, team, rt.lead_session, self.backend)
        keeper.start()
        rt.settings_watch.keep_for(team)  # its teammates use the run's hooks and rules
        self.keeper = keeper
        self._unsubscribe = rt.subscribe(keeper.on_event)
        if not self._adopting:  # its teammates come next: the server imports meanwhile
            self._fork_server(start=True)

    def team_deleted(self) -> None:
        self._drop_keeper()
        for runner in self._external():
            runner.team_deleted()  # they had left; their logs went with the folder

    def on_log(self, event: AgentLogChanged) -> None:
        runner = self.runtime.crew.runners.get(event.agent)
        if event.team == self.runtime.team and isinstance(runner, ExternalRunner):
            runner.on_log()

    def lead_turn_ended(self) -> None:
        if self.keeper is not None:
            asyncio.ensure_future(self.keeper.save_conversation())

    def stop(self) -> None:
        """The runtime stops: the teammate processes go on (``teamdeck attach``)."""
        for runner in self._external():
            runner.detach()
        if self.forks is not None:
            self.forks.stop()
            self.forks = None
        self._drop_keeper()

    def _drop_keeper(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.keeper is not None:
            self.keeper.stop()
            self.keeper = None

    # ------------------------------------------------------------------ attach

    def adopt(self, team: str) -> None:
        """Lead ``team`` again, as an earlier runtime left it running (before anything runs:
        a refusal, e.g. another dashboard leads it, changes nothing)."""
        rt = self.runtime
        config = rt.home.teams.require(team)
        self._adopting = True  # its teammates run already: no fork server until one is new
        try:
            rt.team_created(team)
        finally:
            self._adopting = False
        if self.keeper is not None:
            self.keeper.restore()
        for member in config.teammates:
            runner = adopt_runner(
                rt.home, team, member, rt.cwd,
                emit=self.from_teammate, on_exit=rt._runner_exited, launch=self._launch(),
            )  # fmt: skip
            rt.crew.add(runner)
        # Requests the earlier lead read but nobody answered (the files say which); those of a
        # teammate whose process is gone can never be answered: never queued, and its reaping
        # (``watch_adopted``) says they were dropped.
        for request in scan_team(rt.home, team).pending:
            asker = rt.crew.runners.get(request.approval.agent)
            if not isinstance(asker, ExternalRunner):
                continue
            if asker.process_alive():
                rt.queue.add(request.approval)
            else:
                asker.dropped.append(request.approval)
        rt.submit(RESUME_NOTE.format(team=team))  # its first turn: carry on with the work

    def watch_adopted(self) -> None:
        """Once the watcher runs: look at each adopted teammate (reaping the dead ones)."""
        for runner in self._external():
            runner.adopt()

    # ------------------------------------------------------------------ the budget

    def hold(self, hold: bool) -> None:
        """The run's budget is spent (``hold``) or raised again: teammate processes wait
        before their next model call while the team's hold file exists."""
        rt = self.runtime
        if not rt.team:
            return
        try:
            if hold:
                set_hold(rt.home, rt.team, "paused: budget")
                if rt.budget is not None:
                    rt.budget.note_held()
            else:
                clear_hold(rt.home, rt.team)
        except OSError as exc:
            log.warning("cannot %s the teammates' hold: %s", "set" if hold else "lift", exc)

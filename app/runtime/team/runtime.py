"""TeamRuntime: the lead, one runner per teammate, the approvals queue and the event stream.

The dashboard and the headless runner drive it (``RuntimeAPI``), the lead's tools use it
(``TeamServices``, by ``team.lead_services``); ``team.lead_session`` makes the lead's session.
Teammates are spawned by ``team.spawning``, run behind the :class:`~app.runtime.runners.Runner`
interface and speak to the team through the files only; their requests reach the lead's inbox,
which ``team.lead_inbox`` scans into the queue (``team.answers`` answers them, and closes those
answered from elsewhere: ``teamdeck approve``). One event path: every file change (any
process's) arrives through one :class:`~app.core.watch.Watcher`, which wakes those it concerns
(``team.runtime_events``, with the event stream). What the person does to the agents and reads
of them is ``team.person_controls``.

Teammates run in one of three modes (``teammate_backend``): ``in-process`` (a worker of this
event loop), ``process`` or ``tmux`` (a process each, running ``app.runtime.agent_main``, seen
through its files; the team then outlives this runtime: ``attach`` adopts it again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core import Home, authority
from app.core.errors import NotFoundError
from app.core.paths import LEAD_NAME, USER_NAME
from app.core.watch import Watcher
from app.runtime.agent.channel import TeamChannel
from app.runtime.agent.lead import Lead
from app.runtime.agent.permission_flow import LeadPermissions
from app.runtime.agent.session import AgentSession
from app.runtime.api import Answer, AnswerStatus, Decider, Spawner
from app.runtime.approvals import Approvals
from app.runtime.events import (
    TeamLifecycle,
    TeammateModeChanged,
    TurnOutcome,
)
from app.runtime.model.client import describe_model, load_sdk, make_client
from app.runtime.model.names import resolve_model
from app.runtime.permissions import PermissionRules
from app.runtime.permissions.settings import local_settings_path
from app.runtime.runners.base import Runner
from app.runtime.sandbox import SandboxConfig
from app.runtime.scheduling.gc_pauses import freeze_long_lived
from app.runtime.scheduling.turn_slots import TurnGate
from app.runtime.team import spawning
from app.runtime.team.across import Across
from app.runtime.team.answers import RequestDesk, keep_allow_rule
from app.runtime.team.crew import BYPASS, Crew, plan_mode_required_by_env
from app.runtime.team.lead_inbox import LeadInbox
from app.runtime.team.lead_services import LeadServices
from app.runtime.team.lead_session import allowed_mode, new_lead_session, prompt_for, set_lead_mode
from app.runtime.team.person_controls import PersonControls
from app.runtime.team.processes import TeamProcesses, check_mode
from app.runtime.team.registrar import Registrar
from app.runtime.team.runtime_events import Listener, TeamEvents
from app.runtime.team.settings_watch import SettingsWatch
from app.runtime.team.spawning import asyncio_spawner
from app.runtime.team.task_wakeups import TaskWakeups
from app.runtime.team.worktrees import TeamWorktrees
from app.runtime.tools.base import AgentIdentity

if TYPE_CHECKING:
    from app.runtime.model.budget import Budget
    from app.runtime.model.client import SDKClient

log = logging.getLogger(__name__)
#: In-process teammates' model calls under way at once (``call_slots``).
IN_PROCESS_CALLS = 4


class TeamRuntime(PersonControls, TeamEvents):
    def __init__(
        self,
        home: Home,
        *,
        client: SDKClient | None = None,
        model: str | None = None,
        cwd: Path | None = None,
        spawner: Spawner | None = None,
        decider: Decider = "person",
        permission_timeout: float = 300.0,
        lead_mode: str = "default",
        teammate_mode: str = "default",
        rules: PermissionRules | None = None,
        headless: bool = False,
        watcher: Watcher | None = None,
        rules_file: Path | None = None,
        teammate_backend: str = "in-process",
        attach: str | None = None,
        allow_bypass: bool | None = None,
        worktrees: bool = False,
        sandbox: SandboxConfig | None = None,
        across: Across | None = None,
    ) -> None:
        check_mode(teammate_backend)
        #: A team across machines (``--engine``): the relay and where teammates run.
        self.across = across
        self.home = home
        #: The process's one watcher: this process's writes and other processes' arrive here.
        self.watcher = watcher or Watcher(home)
        self._owns_watcher = watcher is None
        self.client = client or make_client(deferred=True)  # built at its first call: start()
        self.model = resolve_model(model)
        self.model_description = describe_model(self.client, self.model)
        self.cwd = (cwd or Path.cwd()).absolute()
        self.spawner: Spawner = spawner or asyncio_spawner
        self.decider: Decider = decider
        self.permission_timeout = permission_timeout
        self.teammate_mode = teammate_mode
        #: bypassPermissions may be entered: the person allowed it (``--dangerously-skip-
        #: permissions``, the dashboard's confirmation); by default only if the run starts in it.
        self.allow_bypass = (
            allow_bypass if allow_bypass is not None else BYPASS in (lead_mode, teammate_mode)
        )
        #: ``CLAUDE_CODE_PLAN_MODE_REQUIRED=true``: every teammate starts in plan mode.
        self.plan_mode_required = plan_mode_required_by_env()
        self.rules = rules or PermissionRules()
        #: Where agents' commands and hooks run (``None``: unconfined; ``teamdeck`` passes one).
        self.sandbox = sandbox
        self.sandbox_description = sandbox.describe() if sandbox is not None else "no sandbox"
        self.headless = headless
        self.teammate_backend = teammate_backend
        #: What a team of teammate processes needs (``None`` in-process).
        self.processes = (
            TeamProcesses(self, teammate_backend) if teammate_backend != "in-process" else None
        )
        self.attach_team = attach  # a running team to adopt at start (``teamdeck attach``)
        #: Where "always allow" rules are kept (the next run in this folder reads them too).
        self.rules_file = rules_file or local_settings_path(self.cwd)
        self.team: str | None = None
        #: The team's key: what this runtime's answers are signed with (``core.authority``).
        self.team_key: authority.TeamKey | None = None
        self._listeners: list[Listener] = []
        self.queue = Approvals(self._emit)
        self.lead_permissions = LeadPermissions(self.queue)
        self.crew = Crew()
        self.desk = RequestDesk(
            self.queue, self.lead_permissions, self._lead_channel, self._add_rule,
            hand_over=lambda *answer: self.crew.hand_over(*answer),
        )  # fmt: skip
        self.settings_watch = SettingsWatch(self)  # hooks and rules: the snapshot at start
        self.registrar = Registrar(home)  # spawned teammates, many in one config write
        #: In-process teammates' model calls, a few at once: fifty teammates on the
        #: dashboard's process would otherwise take its interpreter lock fifty ways (the
        #: person's keys and screen wait behind them) without doing more work on two cores.
        self.call_slots = asyncio.Semaphore(IN_PROCESS_CALLS)
        #: And their turns, a few at once, each giving its slot up while it waits on the
        #: model, a command or the person (``$TEAMDECK_IN_PROCESS_TURNS``).
        self.turn_gate = TurnGate()
        #: ``--worktrees``: made at spawn, released when a teammate leaves (team_worktrees).
        self.worktrees = TeamWorktrees(
            home, self.cwd, enabled=worktrees, emit=self._emit, on_sent=self._on_sent
        )
        #: ``--budget``: installed by ``app.runtime.model.budget``; every model call waits on it.
        self.budget: Budget | None = None
        self._channel: TeamChannel | None = None
        self._unwatch: Callable[[], None] | None = None
        self._scheduled: set[str] = set()
        self.lead_inbox = LeadInbox(
            home,
            self.queue,
            self.crew.departed,
            lambda: self.team,
            lambda: self.team_key,
            queued=self._request_queued,
        )
        self.task_wakeups = TaskWakeups(home, lambda: self.team, lambda: self.crew.runners)
        self._lead_task: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.lead_session = new_lead_session(self, lead_mode, LeadServices(self))
        self.lead = Lead(self, self.lead_session)
        self.lead_turn_listeners: list[Callable[[TurnOutcome], None]] = []

    # ================================================================== lifecycle

    async def start(self) -> None:
        freeze_long_lived()  # full GC passes would stall every thread for 100+ ms
        self._loop = asyncio.get_running_loop()
        await load_sdk()  # in a thread: the event loop (the dashboard) goes on meanwhile
        self.settings_watch.start()
        if self.attach_team:
            if self.processes is None:
                raise ValueError("only a team of teammate processes can be attached to")
            self.processes.adopt(self.attach_team)
        elif self.processes is not None:
            self.processes.start()
        if not self.watcher.running:
            await self.watcher.start()
        self._unwatch = self.watcher.subscribe(self._on_watch_batch)
        if self.processes is not None:
            self.processes.watch_adopted()
        self._lead_task = self.spawner(LEAD_NAME, self.lead.run)
        if self.attach_team:
            self.lead_inbox.scan()
            self.lead.wake.set()

    async def stop(self) -> None:
        """Stop every agent of this process (quitting the app): in-process teammates are
        cancelled; teammate processes go on (``teamdeck attach`` adopts them); files stay."""
        self.settings_watch.stop()
        for runner in list(self.crew.runners.values()):
            _cancel(getattr(runner, "handle", None))  # in-process ones
        if self.processes is not None:
            self.processes.stop()
        _cancel(self._lead_task)
        if self.across is not None:
            await self.across.stop()
        if self._unwatch:
            self._unwatch()
            self._unwatch = None
        if self._owns_watcher:
            await self.watcher.stop()
        await asyncio.sleep(0)
        await self.worktrees.close(self.crew.runners)

    # ================================================================== modes, shutdown

    def set_lead_mode(self, mode: str) -> None:
        """The lead's permission mode (shift+tab): its tools and prompt follow (delegate mode
        keeps only the coordination tools). ValueError for an unknown mode, or for
        bypassPermissions when the person has not allowed it."""
        set_lead_mode(self, self.lead_session, mode, self.team)

    def set_teammate_permission_mode(self, mode: str) -> None:
        """The mode teammates spawned from now on start in (ValueError as for the lead)."""
        checked = allowed_mode(mode, self.allow_bypass)
        if checked != self.teammate_mode:
            self.teammate_mode = checked
            self._emit(TeammateModeChanged(checked))

    def request_shutdown(self, agent: str, reason: str | None = None) -> Answer:
        why = reason or "The person asked you to shut down."
        channel = self.require_channel()
        recipient, request_id = channel.request_shutdown(agent, why, origin=authority.PERSON)
        self.desk.refuse_waiting(recipient, by=USER_NAME)
        text = f"shutdown requested from {recipient}"
        return Answer(AnswerStatus.DONE, text, recipient, request_id)

    # ================================================================== the team (tools, dashboard)

    def current_team(self) -> str | None:
        return self.team

    def team_created(self, team: str) -> None:
        self.team_key = authority.ensure_key(self.home.root, team)
        self.team = team
        self.lead_session.identity.team = team
        self._channel = TeamChannel(
            self.home, team, LEAD_NAME, "blue", on_sent=self._on_sent, key=self.team_key
        )
        self.crew.clear()  # a new team: the previous team's panels are history
        if self.lead_session.mode == "delegate":  # the delegate prompt names the team
            self.lead_session.system_prompt = prompt_for(self, "delegate", team)
        self.queue.clear()
        if self.processes is not None:  # the team may outlive this runtime
            self.processes.team_created(team)
        if self.across is not None:
            self.across.start(self.home, self.team_key)
        self._emit(TeamLifecycle(team, "created"))

    def team_deleted(self, team: str) -> None:
        if self.processes is not None:
            self.processes.team_deleted()
        self.team = None
        self.team_key = None
        self._channel = None
        self.lead_session.identity.team = None
        self._emit(TeamLifecycle(team, "deleted"))

    async def spawn_teammate(
        self,
        caller: AgentIdentity | str,
        spec: dict[str, Any] | str,
        *,
        plan_mode: bool = False,
        agent_type: str | None = None,
        mode: str | None = None,
    ) -> Any:
        """From the Task tool: ``spawn_teammate(caller, spec)`` -> the seeds' result data.
        From the dashboard: ``spawn_teammate(name, prompt, plan_mode=..., mode=...)`` -> the
        name (``mode``: the teammate's permission mode, else the team's)."""
        if isinstance(caller, str):
            assert isinstance(spec, str)
            request = spawning.dashboard_request(
                self, caller, spec, plan_mode=plan_mode, agent_type=agent_type, mode=mode
            )
            return (await spawning.spawn(self, request))["name"]
        assert isinstance(spec, dict)
        return await spawning.spawn(self, spec)

    def hold_teammates(self, hold: bool) -> None:
        """The run's budget is spent or raised again (in-process agents wait in ``gate``)."""
        if self.processes is not None:
            self.processes.hold(hold)

    async def gate(self, session: AgentSession) -> None:
        """Before each model call of any agent of this runtime: hold while the budget is spent."""
        if self.budget is not None:
            await self.budget.wait_for_room(session)

    def _request_dropped(self, request_id: str, outcome: str) -> None:
        """A teammate of this process stopped waiting for an answer: close the request."""
        self.queue.claim(request_id, outcome)

    def _runner_exited(self, runner: Runner) -> None:
        """A teammate left the team (shut down, failed or killed): its requests are void."""
        self.queue.drop_agent(runner.spec.name, "cancelled: agent left")
        self.crew.left(runner)
        self.worktrees.release(runner.spec.team, runner.spec.name)

    # ============================================================ rules, turns

    def _add_rule(self, agent: str, rule: str) -> str | None:
        """Remember an "always allow" rule for ``agent`` and the run (every teammate follows
        the run's rules from its next tool call); a one-line problem, else ``None``."""
        agent_rules = [self.lead_session.rules] if agent == LEAD_NAME else []
        problem = keep_allow_rule(rule, [*agent_rules, self.rules], self.rules_file)
        self.settings_watch.rules_changed()  # the teammate processes' snapshot file
        return problem

    def lead_turn_ended(self, outcome: TurnOutcome) -> None:
        if self.processes is not None:
            self.processes.lead_turn_ended()
        for listener in list(self.lead_turn_listeners):
            listener(outcome)

    # ================================================================== helpers

    def _lead_channel(self) -> TeamChannel | None:
        return self._channel

    def require_channel(self) -> TeamChannel:
        if self._channel is None:
            raise NotFoundError("no team: the lead has not created one")
        return self._channel


def _cancel(handle: Any) -> None:
    cancel = getattr(handle, "cancel", None)
    if cancel is not None:
        with contextlib.suppress(RuntimeError):  # already finished
            cancel()

"""Spawning a teammate, from the lead's Task tool or the dashboard.

The request (the Task tool's input) becomes a :class:`~app.runtime.runners.base.TeammateSpec`
(a name unique in the team, its model, permission mode, colour and working folder, a worktree
with ``--worktrees``); its member entry is written to the team config (off the loop: a lock and
fsyncs that starting teammates contend for); then the runner of the run's teammate mode starts
it: a worker of this event loop (``in-process``) or a process (:mod:`app.runtime.team.processes`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.core import authority
from app.core.errors import NotFoundError
from app.runtime.model.names import resolve_model
from app.runtime.runners.base import Runner, TeammateSpec
from app.runtime.runners.inprocess import InProcessRunner
from app.runtime.runners.remote import RemoteRunner
from app.runtime.sandbox import SandboxConfig
from app.runtime.team.across import Across
from app.runtime.team.crew import Crew, member_entry, spawn_result, teammate_spec
from app.runtime.team.registrar import Registrar

if TYPE_CHECKING:
    import anthropic

    from app.core import Home
    from app.runtime.agent.channel import Sent
    from app.runtime.agent.session import AgentSession
    from app.runtime.api import Spawner
    from app.runtime.events import RuntimeEvent
    from app.runtime.permissions import PermissionRules
    from app.runtime.scheduling.turn_slots import TurnGate
    from app.runtime.team.processes import TeamProcesses
    from app.runtime.team.worktrees import TeamWorktrees


def asyncio_spawner(name: str, factory: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
    """Headless spawner: one asyncio task per agent."""

    async def run() -> None:
        await factory()

    return asyncio.ensure_future(run())


class SpawnHost(Protocol):
    """What spawning reads of the lead's runtime (``team.runtime.TeamRuntime``)."""

    home: Home
    team: str | None
    model: str
    teammate_mode: str
    cwd: Path
    allow_bypass: bool
    plan_mode_required: bool
    crew: Crew
    registrar: Registrar
    call_slots: asyncio.Semaphore
    turn_gate: TurnGate
    worktrees: TeamWorktrees
    lead_session: AgentSession
    processes: TeamProcesses | None
    client: anthropic.AsyncAnthropic
    spawner: Spawner
    rules: PermissionRules
    permission_timeout: float
    sandbox: SandboxConfig | None
    team_key: authority.TeamKey | None
    across: Across | None

    def _emit(self, event: RuntimeEvent) -> None: ...

    def _on_sent(self, sent: Sent) -> None: ...

    def _runner_exited(self, runner: Runner) -> None: ...

    def _request_dropped(self, request_id: str, outcome: str) -> None: ...

    async def gate(self, session: AgentSession) -> None: ...


async def spawn(host: SpawnHost, request: dict[str, Any]) -> dict[str, Any]:
    """Spawn a teammate from a Task tool input into the lead's team; the seeds' result data."""
    team = request.get("team_name") or host.team
    if not team:
        raise NotFoundError("no team yet: the lead must create one first")
    if team != host.team:
        raise NotFoundError(f"can only spawn into the team this lead leads ({host.team})")
    placed = await host.across.choose(request) if host.across is not None else None
    if placed is not None:
        return await _spawn_elsewhere(host, request, team, *placed)
    name = host.registrar.unique_name(team, str(request["name"]))
    try:
        return await _spawn_named(host, request, team, name)
    finally:
        host.registrar.release(team, name)


async def _spawn_elsewhere(
    host: SpawnHost, request: dict[str, Any], team: str, name: str, machine: str
) -> dict[str, Any]:
    """A teammate on a joined machine, under the invited member's name (its role): its entry
    goes into this home's config (its panel) and into the engine (the joined machine starts
    it); what it does reaches this home's files through the relay."""
    assert host.across is not None and host.processes is not None
    if host.crew.runners.get(name) is not None:
        raise NotFoundError(f"{name!r} already runs in team {team}")
    model = resolve_model(request["model"]) if request.get("model") else host.model
    spec = teammate_spec(
        request, team=team, name=name, model=model, mode=host.teammate_mode,
        color=host.crew.next_color(), cwd=host.cwd, bypass_allowed=host.allow_bypass,
        plan_required=host.plan_mode_required,
    )  # fmt: skip
    entry = member_entry(spec, "process")
    runner = RemoteRunner(
        spec, home=host.home, emit=host.processes.from_teammate, on_exit=host._runner_exited,
        relay=host.across, machine=machine,
    )  # fmt: skip
    await host.across.place(name, entry.to_json_dict(), machine)
    await host.registrar.register(team, entry)
    host.crew.add(runner)
    runner.start()
    return {**spawn_result(spec), "machine": machine}


async def _spawn_named(
    host: SpawnHost, request: dict[str, Any], team: str, name: str
) -> dict[str, Any]:
    model = resolve_model(request["model"]) if request.get("model") else host.model
    spec = teammate_spec(
        request,
        team=team,
        name=name,
        model=model,
        mode=host.teammate_mode,
        color=host.crew.next_color(),
        cwd=host.cwd,
        bypass_allowed=host.allow_bypass,
        plan_required=host.plan_mode_required,
    )
    spec = await host.worktrees.prepare(spec)
    runner = make_runner(host, spec)
    # A config rewrite (lock, fsyncs), off the loop, shared with the spawns that overlap it.
    await host.registrar.register(team, member_entry(spec, runner.backend))
    host.crew.add(runner)
    runner.start()
    return spawn_result(spec)


def dashboard_request(
    host: SpawnHost, name: str, prompt: str, *, plan_mode: bool, agent_type: str | None,
    mode: str | None,
) -> dict[str, Any]:  # fmt: skip
    """The Task tool input the dashboard's spawn dialog stands for (``mode``: the teammate's
    permission mode, else the team's)."""
    return {
        "name": name,
        "prompt": prompt,
        "mode": "plan" if plan_mode else mode,
        "subagent_type": agent_type,
        "team_name": host.team,
    }


def make_runner(host: SpawnHost, spec: TeammateSpec) -> Runner:
    """The runner of the run's teammate mode for ``spec`` (not started)."""
    if host.processes is not None:
        return host.processes.make_runner(spec)
    gate: Callable[[AgentSession], Awaitable[None]] = host.gate
    return InProcessRunner(
        spec,
        home=host.home,
        client=host.client,
        spawner=host.spawner,
        emit=host._emit,
        rules=host.rules,
        permission_timeout=host.permission_timeout,
        on_sent=host._on_sent,
        on_exit=host._runner_exited,
        on_request_dropped=host._request_dropped,
        gate=gate,
        sandbox=host.sandbox,
        key=host.team_key,
        bypass_allowed=lambda: host.allow_bypass,
        slots=host.call_slots,
        turn_gate=host.turn_gate,
    )

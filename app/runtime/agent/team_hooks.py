"""The team hooks of one agent, run from the agent's own code paths.

``TaskCreated`` and ``TaskCompleted`` run inside the TaskCreate / TaskUpdate tools (through
``ToolContext.hooks``), ``TeammateIdle`` in the teammate loop just before it would go idle. So
they run the same whether the agent lives in the dashboard's process or in a ``teamdeck agent``
process of its own: nothing here goes through the lead's runtime.

Which hooks: the ``hooks`` of Claude Code's settings files
(:mod:`app.runtime.permissions.settings`) for the agent's project, as the run took them at its
start (:mod:`app.runtime.permissions.snapshot`: a change on disk is used only once the person
accepts it; a teammate in a ``--worktrees`` worktree uses those of the project the worktree
belongs to, where ``settings.local.json`` lives). A hook runs
in the agent's own working directory. ``TEAMDECK_HOOKS=0`` in the environment turns them off
(the demo does).

What the agent and the person see (:mod:`app.runtime.agent.hook_commands` decides the outcome):

- every hook that ran is a :class:`~app.runtime.events.HookRan` event (the dashboard's feed and
  headless output show blocked ones and warnings);
- a block or a warning is also a notice in the agent's transcript;
- a block's feedback goes back to the agent: the tool's error result, or its next prompt.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from pathlib import Path
from typing import Any, Protocol

from app.core.frame_text import describe_hook
from app.core.paths import project_of
from app.runtime.agent.hook_commands import HookRun, hook_input, run_hooks
from app.runtime.events import HookRan, RuntimeEvent, TurnOutcome
from app.runtime.permissions import snapshot
from app.runtime.permissions.settings import HookCommand
from app.runtime.sandbox import SandboxConfig
from app.runtime.scheduling.turn_slots import TurnSlot, waiting
from app.runtime.tools.base import AgentIdentity, TeamServices, ToolHooks

log = logging.getLogger(__name__)
#: ``TEAMDECK_HOOKS=0`` (or ``off``, ``false``, ``no``) runs no hook at all.
SWITCH_ENV = "TEAMDECK_HOOKS"


class HookedSession(Protocol):
    """What the hooks read of their agent's session (``agent.session.AgentSession``), and where
    the session keeps them."""

    hooks: ToolHooks | None
    sandbox: SandboxConfig | None
    #: The turn's slot, given up while the hooks' commands run (``scheduling.turn_slots``).
    turn_slot: TurnSlot | None

    @property
    def identity(self) -> AgentIdentity: ...

    @property
    def name(self) -> str: ...

    @property
    def mode(self) -> str: ...

    @property
    def services(self) -> TeamServices | None: ...

    def emit(self, event: RuntimeEvent) -> None: ...

    def record(self, kind: Any, text: str, **data: Any) -> None: ...


def hooks_enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() not in ("0", "off", "false", "no")


class TeamHooks:
    """One agent's hooks: the run's snapshot, run per event, outcomes reported."""

    def __init__(self, session: HookedSession, *, settings_dir: Path | None = None) -> None:
        self.session = session
        self.settings_dir = settings_dir
        self.session_id = str(uuid.uuid4())
        self._warned: object = None  # the settings whose warnings were logged

    async def _load(self) -> dict[str, list[HookCommand]]:
        """The run's snapshot of the hooks (taken at its start; the person's accepted changes
        since), never the files as they are now."""
        if not hooks_enabled():
            return {}
        where = self.settings_dir or project_of(self.session.identity.cwd)
        settings = await asyncio.to_thread(snapshot.current, where)
        if self._warned is not settings:
            self._warned = settings
            for warning in settings.warnings:
                log.warning("%s: %s", self.session.name, warning)
        return settings.hooks

    async def has(self, event: str) -> bool:
        """Whether any hook is configured for ``event``."""
        return bool((await self._load()).get(event))

    async def fire(self, event: str, *, task: Any = None) -> HookRun:
        """Run ``event``'s hooks for this agent (``task``: the task it concerns) and report
        each outcome; the caller acts on ``HookRun.blocked`` / ``feedback``."""
        hooks = (await self._load()).get(event, [])
        if not hooks:
            return HookRun(event)
        session = self.session
        identity = session.identity
        team = identity.team or (session.services.current_team() if session.services else None)
        payload = hook_input(
            event,
            cwd=identity.cwd,
            team_name=team,
            teammate_name=None if identity.is_lead else identity.name,
            task=task,
            session_id=self.session_id,
            permission_mode=session.mode,
        )
        async with waiting(session.turn_slot):  # commands: the turn waits on them
            run = await run_hooks(event, hooks, payload, cwd=identity.cwd, sandbox=session.sandbox)
        task_id = str(task.id) if task is not None else None
        for result in run.results:
            outcome, message = result.outcome, result.message
            ran = HookRan(session.name, event, outcome, result.command, message, task_id, team)
            session.emit(ran)
            if outcome != "ok":
                line = describe_hook(session.name, event, outcome, message, task_id)
                session.record("notice", line.text, hook=event, outcome=outcome)
        return run


def hooks_of(session: HookedSession) -> ToolHooks:
    """The session's hooks (made at first use)."""
    if session.hooks is None:
        session.hooks = TeamHooks(session)
    return session.hooks


#: TeammateIdle blocks in a row after which the teammate goes idle anyway (a hook that never
#: lets go would otherwise keep it calling the model for ever).
MAX_IDLE_BLOCKS = 5


async def idle_feedback(
    session: HookedSession, outcome: TurnOutcome, blocked_before: int = 0
) -> str | None:
    """Before a teammate goes idle: run its ``TeammateIdle`` hooks. A block keeps it working:
    the feedback is returned as its next prompt (``None``: go idle). A turn that was
    interrupted or failed goes idle without asking the hooks (the person or an error stopped
    it, not the teammate); after ``MAX_IDLE_BLOCKS`` blocks in a row it goes idle with a
    warning in its transcript."""
    if outcome.status in ("interrupted", "error") or session.identity.is_lead:
        return None
    run = await hooks_of(session).fire("TeammateIdle")
    if not run.blocked:
        return None
    if blocked_before + 1 >= MAX_IDLE_BLOCKS:
        session.record(
            "error",
            f"TeammateIdle hooks blocked {MAX_IDLE_BLOCKS} times in a row; going idle anyway. "
            f"Their last feedback: {run.feedback}",
        )
        return None
    return f"A TeammateIdle hook kept you working. Its feedback:\n{run.feedback}"

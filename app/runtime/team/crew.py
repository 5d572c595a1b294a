"""The crew: the current team's teammates as the lead's runtime knows them.

One :class:`~app.runtime.runners.Runner` per teammate still in the team, the snapshots of those
that left (shut down, failed, killed: their panels stay until a new team starts), and how a
teammate is described to its runner and to the team config (:func:`teammate_spec`,
:func:`member_entry`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core import TeamMember
from app.core.errors import NotFoundError, TeamdeckError
from app.core.models import now_ms
from app.core.protocol import Frame
from app.core.teams import COLORS
from app.runtime.api import AgentSnapshot
from app.runtime.events import TranscriptEntry
from app.runtime.runners.base import Runner, TeammateSpec
from app.runtime.runners.inprocess import InProcessRunner


class Crew:
    def __init__(self) -> None:
        self.runners: dict[str, Runner] = {}
        #: Teammates of the current team that left, by name (their last snapshot).
        self.departed: dict[str, AgentSnapshot] = {}
        self._gone: dict[str, Runner] = {}
        self._colored = 0  # colours handed out in this team (spawns still starting included)
        #: The order teammates were added in: spawns (or adoptions) in one millisecond share
        #: a start time, and departing must not reorder them (the panels' digits would change).
        self._added: dict[str, int] = {}

    def clear(self) -> None:
        """A new team starts: the previous team's teammates are history."""
        self.departed.clear()
        self._gone.clear()
        self._added.clear()
        self._colored = 0

    def next_color(self) -> str:
        """The next teammate's colour: spawns that overlap (one response's) each get their own."""
        index = max(self._colored, len(self.runners) + len(self.departed))
        self._colored = index + 1
        return COLORS[index % len(COLORS)]

    def add(self, runner: Runner) -> None:
        self.runners[runner.spec.name] = runner
        self._added.setdefault(runner.spec.name, len(self._added))

    def left(self, runner: Runner) -> bool:
        """``runner``'s teammate left the team; False if it was not (or no longer) here."""
        name = runner.spec.name
        if self.runners.get(name) is not runner:
            return False
        del self.runners[name]
        self._gone[name] = runner
        self.departed[name] = runner.snapshot()
        return True

    def require(self, name: str) -> Runner:
        runner = self.runners.get(name)
        if runner is None:
            raise NotFoundError(f"no running teammate named {name!r}")
        return runner

    def any(self, name: str) -> Runner | None:
        """The teammate's runner, present or gone."""
        return self.runners.get(name) or self._gone.get(name)

    def status_of(self, name: str) -> str:
        """A teammate's status, present or gone (NotFoundError for a name never seen)."""
        runner = self.any(name)
        if runner is None:
            raise NotFoundError(f"unknown agent {name!r}")
        return runner.snapshot().status

    def snapshots(self) -> list[AgentSnapshot]:
        """Present and departed teammates, in spawn order."""
        snaps = [r.snapshot() for r in self.runners.values()] + list(self.departed.values())
        added = self._added
        snaps.sort(key=lambda snap: (snap.started_at, added.get(snap.name, len(added))))
        return snaps

    def transcript(self, name: str) -> list[TranscriptEntry]:
        runner = self.any(name)
        return runner.transcript() if runner is not None else []

    def hand_over(self, agent: str, frame: Frame, origin: str) -> None:
        """A signed answer for ``agent``: an in-process teammate gets it from here (one in a
        process of its own reads it, signed, from its inbox)."""
        runner = self.runners.get(agent)
        if isinstance(runner, InProcessRunner):
            runner.teammate.answers.give(frame, origin)


BYPASS = "bypassPermissions"
#: Seed 001 §7 ("Force plan mode for all agents"): ``isPlanModeRequired()`` falls back to it.
PLAN_MODE_REQUIRED_ENV = "CLAUDE_CODE_PLAN_MODE_REQUIRED"


class BypassNotAllowedError(TeamdeckError, ValueError):
    """bypassPermissions asked for (a spawn, a mode switch) that the person did not allow."""


def plan_mode_required_by_env(env: Mapping[str, str] | None = None) -> bool:
    """``CLAUDE_CODE_PLAN_MODE_REQUIRED=true`` in teamdeck's environment: every teammate starts
    in plan mode (seed 001 §7-§8: ``process.env.CLAUDE_CODE_PLAN_MODE_REQUIRED === "true"``)."""
    return (os.environ if env is None else env).get(PLAN_MODE_REQUIRED_ENV) == "true"


def teammate_spec(
    request: dict[str, Any],
    *,
    team: str,
    name: str,
    model: str,
    mode: str,
    color: str,
    cwd: Path,
    bypass_allowed: bool = False,
    plan_required: bool = False,
) -> TeammateSpec:
    """A Task tool call (``name``, ``prompt``, ``mode``, ``subagent_type``...) as a spec;
    ``model``/``mode`` are the defaults when the call names none.

    ``mode: "bypassPermissions"`` is refused (:class:`BypassNotAllowedError`, which the Task
    tool returns as its error) unless the person allowed bypass for this run
    (``--dangerously-skip-permissions``, or the dashboard's confirmation): seed 000 §"Permission
    modes" says bypass "requires flag", and a model must not grant itself what the person did
    not. Refused rather than downgraded, so the model knows which mode its teammate really has.
    ``plan_required`` (``CLAUDE_CODE_PLAN_MODE_REQUIRED``) puts every teammate in plan mode."""
    requested = request.get("mode") or None
    if requested == BYPASS and not bypass_allowed:
        raise BypassNotAllowedError(
            f"cannot spawn {name!r} in bypassPermissions mode: the person has not allowed it "
            "for this run (teamdeck --dangerously-skip-permissions, or the dashboard's "
            "confirmation); spawn it in another mode (default, acceptEdits, plan, dontAsk)"
        )
    plan = requested == "plan" or plan_required
    return TeammateSpec(
        team=team,
        name=name,
        prompt=str(request["prompt"]),
        model=model,
        mode="plan" if plan else (requested or mode),
        color=color,
        cwd=cwd,
        agent_type=request.get("subagent_type") or "general-purpose",
        plan_mode=plan,
    )


def member_entry(spec: TeammateSpec, backend: str) -> TeamMember:
    """The teammate's entry in the team config."""
    return TeamMember(
        agent_id=f"{spec.name}@{spec.team}",
        name=spec.name,
        agent_type=spec.agent_type,
        model=spec.model,
        prompt=spec.prompt,
        color=spec.color,
        plan_mode_required=spec.plan_mode,
        joined_at=now_ms(),
        tmux_pane_id=backend,
        cwd=str(spec.cwd),
        subscriptions=[],
        backend_type=backend,
        worktree_path=str(spec.worktree) if spec.worktree else None,
        mode=spec.mode,
        is_active=True,
    )


def spawn_result(spec: TeammateSpec) -> dict[str, Any]:
    """What the Task tool returns for a spawned teammate (the seeds' shape)."""
    agent_id = f"{spec.name}@{spec.team}"
    return {
        "teammate_id": agent_id,
        "agent_id": agent_id,
        "agent_type": spec.agent_type,
        "model": spec.model,
        "name": spec.name,
        "color": spec.color,
        "team_name": spec.team,
        "plan_mode_required": spec.plan_mode,
    }

"""The one interface every teammate mode implements.

A runner starts one teammate from its :class:`TeammateSpec` and can stop it; whatever the mode,
the teammate speaks to its team only through the files, and what the dashboard shows of it
(status, transcript, usage) arrives as runtime events. The in-process runner
(:mod:`app.runtime.runners.inprocess`) runs the loop as a worker of the dashboard's event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from app.core.models import TeamMember
from app.runtime.api import AgentSnapshot
from app.runtime.events import TranscriptEntry
from app.runtime.model.names import resolve_model


@dataclass(frozen=True)
class TeammateSpec:
    """Everything a runner needs to start a teammate (also its member entry in the config)."""

    team: str
    name: str
    prompt: str
    model: str
    mode: str
    color: str
    cwd: Path
    agent_type: str = "general-purpose"
    plan_mode: bool = False
    #: ``--worktrees``: its own git worktree (then also its ``cwd``).
    worktree: Path | None = None


class Runner(Protocol):
    """One running teammate."""

    spec: TeammateSpec
    #: ``in-process``, ``process`` or ``tmux`` (the config's ``backendType``).
    backend: str

    @property
    def finished(self) -> bool:
        """The teammate's loop has ended (it left the team)."""

    @property
    def pid(self) -> int | None:
        """The OS process running it (``None`` in-process)."""

    def start(self) -> None: ...

    def kill(self) -> None:
        """Stop it now: its turn ends, its tasks return to the board, the lead is told."""

    def interrupt(self) -> None:
        """End its current turn (it stays in the team)."""

    def inject(self, text: str) -> None:
        """A message from the person, handled before any other mail."""

    def wake(self) -> None:
        """Its inbox or the task list changed: look again."""

    def snapshot(self) -> AgentSnapshot: ...

    def transcript(self) -> list[TranscriptEntry]: ...


def spec_from_member(team: str, member: TeamMember, default_cwd: Path) -> TeammateSpec:
    """A teammate's spec from its entry in the team config."""
    return TeammateSpec(
        team=team,
        name=member.name,
        prompt=member.prompt or "",
        model=resolve_model(member.model),
        mode=member.mode or ("plan" if member.plan_mode_required else "default"),
        color=member.color or "blue",
        cwd=Path(member.cwd) if member.cwd else default_cwd,
        agent_type=member.agent_type or "general-purpose",
        plan_mode=bool(member.plan_mode_required),
    )

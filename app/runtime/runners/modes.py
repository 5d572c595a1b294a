"""The teammate modes and the runner each one uses (``--teammate-mode``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.runtime.events import RuntimeEvent
from app.runtime.runners.base import TeammateSpec
from app.runtime.runners.external import ExternalRunner
from app.runtime.runners.launch import AgentLaunch
from app.runtime.runners.process import ProcessRunner
from app.runtime.runners.process_record import read_record
from app.runtime.runners.tmux import TmuxRunner, tmux_command

if TYPE_CHECKING:
    from app.core import Home
    from app.core.models import TeamMember
    from app.runtime.runners.forkserver import ForkServer

#: ``in-process`` (the default: a worker of the lead's event loop), ``process`` (an OS process
#: each), ``tmux`` (an OS process each, in a window of a tmux session named after the team).
BACKENDS: tuple[str, ...] = ("in-process", "process", "tmux")


def check_backend(backend: str) -> None:
    """One line if ``backend`` cannot run here (tmux not installed)."""
    if backend == "tmux":
        tmux_command()


def external_runner(
    backend: str,
    spec: TeammateSpec,
    *,
    home: Home,
    emit: Callable[[RuntimeEvent], None],
    on_exit: Callable[[ExternalRunner], None],
    launch: AgentLaunch,
    forks: ForkServer | None = None,
) -> ExternalRunner:
    """The runner of a new teammate; a ``process`` one is forked from ``forks`` if given."""
    if backend == "tmux":
        return TmuxRunner(spec, home=home, emit=emit, on_exit=on_exit, launch=launch)
    return ProcessRunner(spec, home=home, emit=emit, on_exit=on_exit, launch=launch, forks=forks)


def adopt_runner(
    home: Home,
    team: str,
    member: TeamMember,
    cwd: Path,
    *,
    emit: Callable[[RuntimeEvent], None],
    on_exit: Callable[[ExternalRunner], None],
    launch: AgentLaunch,
) -> ExternalRunner:
    """A runner for a member an earlier runtime started (by its record; a member with none,
    e.g. an in-process teammate of a dashboard that has ended, is reaped at once)."""
    from app.runtime.runners.base import spec_from_member

    spec = spec_from_member(team, member, cwd)
    found = read_record(home.layout.agent_record_path(team, member.name))
    backend = found[0].backend if found else (member.backend_type or "process")
    kind = TmuxRunner if backend == "tmux" else ProcessRunner
    runner = kind(
        spec, home=home, emit=emit, on_exit=on_exit, launch=launch,
        record=found[0] if found else None, orphan=found is None,
    )  # fmt: skip
    if member.joined_at:  # panels keep the order teammates joined in
        runner.agent.snapshot.started_at = member.joined_at / 1000
    return runner

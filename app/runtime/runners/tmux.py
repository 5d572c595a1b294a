"""``--teammate-mode tmux``: like ``process``, each teammate in a window of a tmux session
named after the team (``teamdeck-<team>``), printing its transcript there, so a person can
watch it raw (``tmux attach -t teamdeck-<team>``).

The tmux server is the one ``$TMUX`` names when the dashboard runs inside tmux, else the
default one; ``$TEAMDECK_TMUX_SOCKET`` picks another (``tmux -L NAME``). A window closes when
its teammate's process ends.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

from app.core.errors import TeamdeckError
from app.runtime.runners.external import ExternalRunner

if TYPE_CHECKING:
    from app.runtime.runners.launch import AgentLaunch

SOCKET_ENV = "TEAMDECK_TMUX_SOCKET"
TMUX_TIMEOUT = 10.0


class TmuxUnavailableError(TeamdeckError):
    """``--teammate-mode tmux`` without a usable tmux."""


def tmux_command() -> list[str]:
    """``tmux`` (with ``-L`` when ``$TEAMDECK_TMUX_SOCKET`` is set); TmuxUnavailableError if
    tmux is not installed."""
    path = shutil.which("tmux")
    if path is None:
        raise TmuxUnavailableError("--teammate-mode tmux needs tmux, which is not installed")
    socket = os.environ.get(SOCKET_ENV, "").strip()
    return [path, "-L", socket] if socket else [path]


def session_name(team: str) -> str:
    return f"teamdeck-{team}"


def run_tmux(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*tmux_command(), *args], capture_output=True, text=True, timeout=TMUX_TIMEOUT
    )


class TmuxRunner(ExternalRunner):
    backend = "tmux"

    def __init__(self, *args: Any, launch: AgentLaunch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.launch_config = launch
        self.target: str | None = None

    def launch(self) -> None:
        spec = self.spec
        session = session_name(spec.team)
        command = shlex.join([*self.launch_config.command(spec, self.backend), "--print"])
        env: list[str] = []
        for key, value in self.launch_config.passed_environment(spec).items():
            env += ["-e", f"{key}={value}"]
        window = ["-n", spec.name, "-c", str(spec.cwd), "-P", "-F", "#{session_name}:#{window_id}"]
        made = run_tmux("new-window", "-d", "-t", f"={session}:", *window, *env, command)
        if made.returncode != 0:  # no such session yet: start it with this window
            made = run_tmux(
                "new-session", "-d", "-s", session, "-x", "160", "-y", "48", *window, *env, command
            )
            if made.returncode != 0 and "duplicate" in made.stderr:  # a sibling was first
                made = run_tmux("new-window", "-d", "-t", f"={session}:", *window, *env, command)
        if made.returncode != 0:
            reason = " ".join((made.stderr or made.stdout).split()) or f"exit {made.returncode}"
            raise TeamdeckError(f"tmux could not open a window for {spec.name}: {reason}")
        self.target = made.stdout.strip() or session

"""``--teammate-mode tmux``: like ``process``, each teammate in a window of a tmux session
named after the team (``teamdeck-<team>``), printing its transcript there, so a person can
watch it raw (``tmux attach -t teamdeck-<team>``).

The tmux server is the one ``$TMUX`` names when the dashboard runs inside tmux, else the
default one; ``$TEAMDECK_TMUX_SOCKET`` picks another (``tmux -L NAME``). A window closes when
its teammate's process ends.

The tmux server starts the teammate, so it inherits nothing from the runtime: the API
credentials are offered on a Unix socket in a private folder, served once and only to the
teammate's own process (the pane ``exec``s it, so its pid is the pane's;
:class:`~app.runtime.runners.handoff.SocketOffer`). tmux itself runs without them in its
environment.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import subprocess
from typing import TYPE_CHECKING, Any

from app.core.errors import TeamdeckError
from app.runtime.runners import handoff
from app.runtime.runners.external import ExternalRunner
from app.runtime.tools.workspace import child_env

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
    """Run a tmux command; its output comes back over sockets, not pipes: another process
    can reopen a pipe through ``/proc/<pid>/fd`` and take the output (the pane's pid, which
    the credentials are served to), but not a socket."""
    command = [*tmux_command(), *args]
    out, out_child = socket.socketpair()
    err, err_child = socket.socketpair()
    with out, err:
        try:
            done = subprocess.run(
                command, stdin=subprocess.DEVNULL,
                stdout=out_child.fileno(), stderr=err_child.fileno(), timeout=TMUX_TIMEOUT,
                env=child_env(),  # a tmux server it starts must not hold the credentials
            )  # fmt: skip
        finally:
            out_child.close()
            err_child.close()
        return subprocess.CompletedProcess(command, done.returncode, _drain(out), _drain(err))


def _drain(sock: socket.socket) -> str:
    """What the ended command wrote (whatever is there: it may have left a daemon behind)."""
    sock.setblocking(False)
    data = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            data += chunk
    return data.decode(errors="replace")


class TmuxRunner(ExternalRunner):
    backend = "tmux"

    def __init__(self, *args: Any, launch: AgentLaunch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.launch_config = launch
        self.target: str | None = None

    def launch(self) -> None:
        credentials = self.launch_config.credentials()
        offer = handoff.SocketOffer(credentials) if credentials else None
        try:
            pane_pid = self._open_window(offer)
        except BaseException:
            if offer is not None:
                offer.close()
            raise
        if offer is not None:
            offer.expect(pane_pid)

    def _open_window(self, offer: handoff.SocketOffer | None) -> int:
        """Open the teammate's window; the pid of its pane (the teammate's process)."""
        spec = self.spec
        session = session_name(spec.team)
        argv = [*self.launch_config.command(spec, self.backend), "--print"]
        if offer is not None:
            argv += ["--credentials-socket", str(offer.path)]
        command = "exec " + shlex.join(argv)  # the pane's process is the teammate's
        env: list[str] = []
        for key, value in self.launch_config.passed_environment(spec).items():
            env += ["-e", f"{key}={value}"]
        shown = "#{session_name}:#{window_id} #{pane_pid}"
        window = ["-n", spec.name, "-c", str(spec.cwd), "-P", "-F", shown]
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
        target, _, pid = made.stdout.strip().partition(" ")
        self.target = target or session
        return int(pid) if pid.isdigit() else -1

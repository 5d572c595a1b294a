"""``--teammate-mode process``: each teammate its own OS process (``teamdeck agent``).

The process starts in a session of its own (so the dashboard's terminal and its ctrl+c do not
reach it, and it outlives the dashboard when the person leaves the team running); its output is
its event log, its stderr goes to ``agents/{name}.stderr`` for a post-mortem. Where a fork
server runs (:mod:`~app.runtime.runners.forkserver`), the process is forked from it instead of
exec'd: the same process, without a second of imports.

The API credentials reach it over a socket only it holds (:mod:`~app.runtime.runners.handoff`):
passed with ``pass_fds`` when it is exec'd, sent in the fork server's request otherwise.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.runtime.runners import handoff
from app.runtime.runners.external import ExternalRunner
from app.runtime.runners.process_record import pid_exists

if TYPE_CHECKING:
    from app.runtime.runners.forkserver import Forked, ForkServer
    from app.runtime.runners.launch import AgentLaunch

log = logging.getLogger(__name__)


class ProcessRunner(ExternalRunner):
    backend = "process"

    def __init__(
        self, *args: Any, launch: AgentLaunch, forks: ForkServer | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.launch_config = launch
        self.forks = forks
        self.popen: subprocess.Popen[bytes] | None = None
        self.forked: Forked | None = None

    @property
    def pid(self) -> int | None:
        if self.popen is not None:
            return self.popen.pid
        if self.forked is not None and self.forked.pid is not None:
            return self.forked.pid
        return super().pid

    def _stderr_path(self) -> Path:
        spec = self.spec
        path = self.home.layout.agents_dir(spec.team) / f"{spec.name}.stderr"
        path.parent.mkdir(mode=0o700, exist_ok=True)
        return path

    def launch(self) -> None:
        spec = self.spec
        env = self.launch_config.environment(spec)
        if self.forks is not None and self.forks.usable_for(env):
            try:
                self.forked = self.forks.spawn(
                    self.launch_config.arguments(spec, self.backend),
                    cwd=spec.cwd, env=env, stderr=self._stderr_path(),
                    credentials=self.launch_config.credentials() or None,
                )  # fmt: skip
                return
            except OSError as exc:
                log.info("%s: not forked (%s), started as a new process", spec.name, exc)
        self._exec(env)

    def _exec(self, env: dict[str, str]) -> None:
        spec = self.spec
        command = self.launch_config.command(spec, self.backend)
        credentials = self.launch_config.credentials()
        held = handoff.socket_holding(credentials) if credentials else None
        if held is not None:  # the child's end of a socketpair: only it ever holds it
            command += [handoff.CREDENTIALS_FD_OPTION, str(held.fileno())]
        fd = os.open(
            self._stderr_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
        try:
            self.popen = subprocess.Popen(
                command,
                cwd=spec.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=fd,
                pass_fds=(held.fileno(),) if held is not None else (),
                start_new_session=True,
            )
        finally:
            os.close(fd)
            if held is not None:
                held.close()

    def _finish(self) -> None:
        super()._finish()
        self._collect()

    def _collect(self) -> None:
        """Wait for the process in a thread of its own once the teammate is finished. Its exit
        line comes before its end (a teammate killed mid-turn writes it as it stops), and
        nothing polls it after that line: without this wait it would stay a zombie for as
        long as this process runs (``join``, the dashboard). A killed one still running once
        the kill's grace is over is killed for good, its commands too."""
        popen = self.popen
        if popen is None or popen.poll() is not None:
            return
        name = f"collect {self.spec.name}"
        threading.Thread(
            target=_collect, args=(popen, self._kill_at), name=name, daemon=True
        ).start()

    def kill(self) -> None:
        if self.forked is not None and self.forks is not None:
            self.forks.cancel(self.forked)  # not started yet: it never runs
        super().kill()

    def process_alive(self) -> bool:
        if self.popen is not None:
            if self.popen.poll() is not None:  # ended (and reaped: no zombie)
                return False
            super().process_alive()  # picks up the record (the pid the log names)
            return True
        forked = self.forked
        if forked is None:  # adopted from an earlier dashboard
            return super().process_alive()
        if forked.lost:  # the fork server ended before it started this one
            self.forked = None
            try:
                self._exec(self.launch_config.environment(self.spec))
            except OSError as exc:
                self.start_error = str(exc)
                return False
            return True
        if forked.error is not None:
            self.start_error = forked.error
            return False
        if forked.pid is None:  # the server is still importing
            return super().process_alive()
        if not pid_exists(forked.pid):  # the server reaps its children as they end
            return False
        super().process_alive()
        return True


def _collect(popen: subprocess.Popen[bytes], kill_at: float | None) -> None:
    """``waitpid`` on a finished teammate's process (``kill_at``: when a kill asked of it turns
    into SIGKILL)."""
    if kill_at is not None:
        try:
            popen.wait(max(0.0, kill_at - time.monotonic()))
            return
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):  # it leads its session's group (not reaped yet)
                os.killpg(popen.pid, signal.SIGKILL)
    popen.wait()

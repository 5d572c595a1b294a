"""``--teammate-mode process``: each teammate its own OS process (``teamdeck agent``).

The process starts in a session of its own (so the dashboard's terminal and its ctrl+c do not
reach it, and it outlives the dashboard when the person leaves the team running); its output is
its event log, its stderr goes to ``agents/{name}.stderr`` for a post-mortem.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Any

from app.runtime.runners.external import ExternalRunner

if TYPE_CHECKING:
    from app.runtime.runners.launch import AgentLaunch


class ProcessRunner(ExternalRunner):
    backend = "process"

    def __init__(self, *args: Any, launch: AgentLaunch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.launch_config = launch
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen is not None else super().pid

    def launch(self) -> None:
        spec = self.spec
        stderr_path = self.home.layout.agents_dir(spec.team) / f"{spec.name}.stderr"
        stderr_path.parent.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(stderr_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            self.popen = subprocess.Popen(
                self.launch_config.command(spec, self.backend),
                cwd=spec.cwd,
                env=self.launch_config.environment(spec),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=fd,
                start_new_session=True,
            )
        finally:
            os.close(fd)

    def process_alive(self) -> bool:
        if self.popen is None:  # adopted from an earlier dashboard
            return super().process_alive()
        if self.popen.poll() is not None:  # ended (and reaped: no zombie)
            return False
        super().process_alive()  # picks up the record (the pid the log names)
        return True

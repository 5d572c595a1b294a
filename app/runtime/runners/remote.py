"""A teammate the lead placed on another machine of a team across machines (the PostgreSQL
engine, ``app.engine.relay``).

The joined machine runs it as a teammate process of its own home; its event log, messages and
claims reach this home's files through the relay, so the lead's runtime sees it exactly as a
local teammate process (:class:`~app.runtime.runners.external.ExternalRunner`): the dashboard
shows its panel, status, transcript and requests, answered by the same keys. What differs is
liveness and steering: it is alive while the engine counts its machine alive (a member silent
past the heartbeat timeout is gone, its tasks back on the board), and it has no pid here to
signal: ``K`` and the palette's "Interrupt" reach its machine as the desk's requests through
the engine, and the person's messages reach it through its inbox.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from app.runtime.agent.channel import TeamChannel
from app.runtime.api import AgentSnapshot
from app.runtime.runners.external import ExternalRunner

#: Seconds the joined machine has to start a placed teammate before it counts as failed.
REMOTE_START = 60.0


class RemoteRunner(ExternalRunner):
    def __init__(self, *args: Any, relay: Any, machine: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.relay = relay
        self.machine = machine

    def snapshot(self) -> AgentSnapshot:
        return dataclasses.replace(super().snapshot(), machine=self.machine)

    def launch(self) -> None:
        """Placed already (``spawning``, off the loop): the joined machine starts it."""

    def process_alive(self) -> bool:
        if not self.relay.alive(self.spec.name):
            return False
        if self.agent.snapshot.status == "running" and not self.reader.path.exists():
            return time.monotonic() - self._since < REMOTE_START
        return True

    def _check(self) -> None:
        self.on_log()
        if self._finished or self.process_alive():
            return
        self.on_log()  # its last words, if they arrived
        if not self._finished:
            self._reap(f"its machine ({self.machine}) stopped answering", status="failed")

    def _finish(self) -> None:
        """Its log says it left the team on its machine: it leaves this home's config too
        (a local teammate process removes itself; this one's process is elsewhere)."""
        if self.agent.exit is not None and self.error is None and not self._finished:
            spec = self.spec
            channel = TeamChannel(self.home, spec.team, spec.name, spec.color, backend="process")
            channel.leave("shutdown", tell_lead=False)
        super()._finish()

    def kill(self) -> None:
        """No process here to signal: the engine carries the desk's request to its machine,
        whose ``join`` kills the process there (``app.runtime.team.joined``); here it leaves
        the team as killed at once, as a local teammate process does."""
        if self._finished:
            return
        self.relay.kill(self.spec.name)
        self._reap(f"killed (its machine, {self.machine}, is told to stop it)", status="killed")

    def interrupt(self) -> None:
        """No process here to signal: the engine carries the desk's request to its machine,
        whose ``join`` interrupts the process there as a local one is (SIGINT: the turn ends,
        the teammate stays and takes its next message)."""
        if not self._finished:
            self.relay.interrupt(self.spec.name)

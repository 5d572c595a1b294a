"""A joined machine of a team across machines (``teamdeck join``): it runs the teammate the
lead places here.

The machine's role is one invited member's. Until the lead places that member here, the
relay (``app.engine.relay``) keeps the member alive in the engine (heartbeats) and the lead's
spread finds it free; once placed, this home gets the team's files (its config with the
member's entry, its own team key: keys never leave their home) and the teammate runs as a
teammate process of this home (``process`` mode), whose inbox, tasks and event log the relay
keeps in step with the engine, and so with the lead's machine. The teammate's requests are
signed with this home's key and cross as the engine's word; the desk's answers come back the
same way (``app.engine.projection``). The desk's role may ask its current turn ended (the
palette's "Interrupt": :meth:`Relay.interrupt`), which it interrupts as a local teammate
process is (SIGINT). It ends when the teammate leaves the team, or when the desk's role asks
its process stopped (the lead's ``K``: :meth:`Relay.kill`), which it then kills as a local
teammate process is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from app.core import authority
from app.core.home import Home
from app.core.models import TeamMember
from app.engine.errors import EngineError
from app.engine.relay import PLACED, Relay, identity
from app.runtime.events import RuntimeEvent
from app.runtime.runners.base import spec_from_member
from app.runtime.runners.external import ExternalRunner
from app.runtime.runners.launch import AgentLaunch
from app.runtime.runners.process import ProcessRunner
from app.runtime.sandbox import SandboxConfig


class Joined:
    def __init__(
        self,
        home: Home,
        url: str,
        *,
        folder: Path,
        offline: bool,
        sandbox: SandboxConfig | None = None,
        interval: float = 0.2,
    ) -> None:
        who = identity(url)
        if who is None or who.desk:
            from app.core.errors import TeamdeckError

            raise TeamdeckError("this URL is no joined agent's (run `teamdeck join URL`)")
        self.home = home
        self.team, self.member = who.team, who.member
        self.folder = folder
        self.offline = offline
        self.sandbox = sandbox
        self.key = authority.ensure_key(home.root, self.team)
        self.relay = Relay(
            home, self.team, url, member=self.member, desk=False, key=self.key,
            machine="", interval=interval,
        )  # fmt: skip
        self.relay.states = self.relay._read_states()
        state = self.relay.states.get(self.member)
        self.relay.machine = (state.machine if state else None) or ""
        self.runner: ExternalRunner | None = None
        self.said: list[str] = []
        if home.teams.get(self.team) is None:  # before any pass writes into its folders
            home.teams.create(self.team, cwd=str(folder), dedupe=False)

    def _place(self, data: dict[str, Any]) -> ExternalRunner:
        entry = {k: v for k, v in data.items() if k != PLACED}
        entry["cwd"] = str(self.folder)
        member = TeamMember.model_validate(entry)
        teams = self.home.teams
        config = teams.require(self.team)
        if config.member(self.member) is None:
            teams.add_member(self.team, member)
        spec = spec_from_member(self.team, member, self.folder)
        launch = AgentLaunch(
            home=self.home.root, offline=self.offline, sandbox=self.sandbox,
            team_key=self.key.hex(),
        )  # fmt: skip
        return ProcessRunner(
            spec, home=self.home, emit=self._event, on_exit=self._exited, launch=launch
        )

    def _event(self, event: RuntimeEvent) -> None:
        """Its events are the log's lines: the relay sends the log itself."""

    def _exited(self, runner: ExternalRunner) -> None:
        self.said.append(f"{self.member} left team {self.team}")

    async def run(self) -> int:
        """Until the teammate placed here has left the team."""
        relay = self.relay
        try:
            data = None
            while data is None:
                await asyncio.to_thread(relay.one_pass)
                data = await asyncio.to_thread(relay.placement)
                if data is None:
                    await relay.pause()
            await asyncio.to_thread(relay.one_pass)  # its first messages and tasks, first
            self.runner = self._place(data)
            self.runner.start()
            killing = False
            interrupts = relay.interrupts()  # the ones asked before it started are past
            while not self.runner.finished:
                self.runner.on_log()
                try:
                    await asyncio.to_thread(relay.one_pass)
                except (EngineError, OSError) as exc:  # said, tried again
                    relay.error = str(exc)
                if relay.interrupts() > interrupts:  # the desk's interrupt (its role only)
                    interrupts = relay.interrupts()
                    self.said.append(f"{self.member}'s turn interrupted from the lead's dashboard")
                    self.runner.interrupt()
                if relay.killed() and not killing:  # the desk's K (only its role may ask)
                    killing = True
                    self.said.append(f"{self.member} killed from the lead's dashboard")
                    self.runner.tell_lead = False  # the lead's dashboard told the lead
                    self.runner.kill()
                await relay.pause()
            await asyncio.to_thread(relay.one_pass)  # its last words
            return 0
        finally:
            if self.runner is not None and not self.runner.finished:
                self.runner.detach()
            await relay.unwatch()
            with contextlib.suppress(Exception):
                relay.close()

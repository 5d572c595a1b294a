"""The lead's side of a team across machines (``teamdeck run --engine URL [--spread]``).

The run leads the engine's team its desk role stands for: the lead's TeamCreate makes that
team whatever name the model gives (:meth:`Across.team_name`). Once the team exists, one
relay (``app.engine.relay``) keeps this home's files and the engine in step while the run
lasts. Spawning asks :meth:`Across.choose` where a teammate runs: the ``Task`` tool's
``machine``, or with ``--spread`` the joined machines in turn (each invited member whose
machine joined takes the next teammate, under its invited name: its role is that member's),
then this machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.errors import NotFoundError
from app.core.paths import LEAD_NAME

if TYPE_CHECKING:
    from app.core import Home
    from app.core.authority import TeamKey
    from app.engine.relay import Relay
    from app.runtime.api import AgentSnapshot


@dataclass
class Across:
    url: str
    """The team's desk role (never the administrator's)."""
    team: str
    spread: bool = False
    machine: str = field(default_factory=socket.gethostname)
    relay: Relay | None = None
    _task: asyncio.Task[None] | None = None
    taken: set[str] = field(default_factory=set)
    """Members chosen for a spawn (spawns run at once: each takes a different one)."""
    _kills: set[asyncio.Future[None]] = field(default_factory=set)
    """Kill and interrupt requests on their way to the engine (awaited before the relay
    closes)."""
    _choosing: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One choice at a time, in the order the spawns asked (the lead's first teammate takes
    the first joined machine)."""

    def team_name(self, requested: str) -> str:
        return self.team

    def start(self, home: Home, key: TeamKey | None) -> None:
        if self.relay is not None:
            return
        from app.engine.relay import Relay  # PostgreSQL's driver: only a run across machines

        self.relay = Relay(
            home, self.team, self.url, member=LEAD_NAME, desk=True, key=key, machine=self.machine
        )
        self._task = asyncio.ensure_future(self.relay.run())

    async def choose(self, request: dict[str, Any]) -> tuple[str, str] | None:
        """``(member name, machine)`` for a teammate that runs elsewhere, ``None`` here."""
        async with self._choosing:
            return await self._choose(request)

    async def _choose(self, request: dict[str, Any]) -> tuple[str, str] | None:
        relay = self.relay
        asked = request.get("machine")
        if relay is None or (asked in (None, "", self.machine) and not self.spread):
            return None
        free = [f for f in await asyncio.to_thread(relay.free) if f[0] not in self.taken]
        if asked and asked != self.machine:
            for name, machine in free:
                if machine == asked:
                    self.taken.add(name)
                    return name, machine
            raise NotFoundError(
                f"no invited teammate waits on machine {asked!r}: run `teamdeck invite "
                f"{self.team} --name NAME --machine {asked}` and `teamdeck join` there"
            )
        if asked or not free:
            return None
        self.taken.add(free[0][0])
        return free[0]

    async def place(self, name: str, entry: dict[str, Any], machine: str) -> None:
        assert self.relay is not None
        await asyncio.to_thread(self.relay.place, name, entry, machine)

    def kill(self, name: str) -> None:
        """Ask the joined machine running teammate ``name`` to stop its process: sent off the
        loop; a refusal or a link down past its deadline is kept in the relay's ``error``."""
        if self.relay is not None:
            self._ask(self.relay.kill, name)

    def interrupt(self, name: str) -> None:
        """Ask the joined machine running teammate ``name`` to end its current turn (sent as
        :meth:`kill` is)."""
        if self.relay is not None:
            self._ask(self.relay.interrupt, name)

    def _ask(self, call: Callable[[str], None], name: str) -> None:
        relay = self.relay
        assert relay is not None
        sent = asyncio.ensure_future(asyncio.to_thread(call, name))
        self._kills.add(sent)

        def done(future: asyncio.Future[None]) -> None:
            self._kills.discard(future)
            if not future.cancelled() and future.exception() is not None:
                relay.error = str(future.exception())

        sent.add_done_callback(done)

    async def kills_sent(self) -> None:
        """Until every kill and interrupt asked so far reached the engine (or failed)."""
        if self._kills:
            await asyncio.gather(*self._kills, return_exceptions=True)

    def alive(self, name: str) -> bool:
        return self.relay is None or self.relay.alive(name)

    def name_machines(self, agents: list[AgentSnapshot]) -> list[AgentSnapshot]:
        """Each agent with the machine it runs on: a teammate placed on a joined machine, the
        one the engine's members say (the machine its joined machine registered; until the
        relay has read it, the one it was placed on); the lead and the others, this one."""
        states = self.relay.states if self.relay is not None else {}
        named = []
        for agent in agents:
            state = states.get(agent.name)
            placed = state is not None and state.placed
            elsewhere = (state.machine or state.placed) if state is not None and placed else None
            machine = elsewhere or agent.machine or self.machine
            if machine != agent.machine:
                agent = dataclasses.replace(agent, machine=machine)
            named.append(agent)
        return named

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.kills_sent()
        if self.relay is not None:
            await asyncio.to_thread(self.relay.one_pass)  # what the last moments wrote
            self.relay.close()
            self.relay = None

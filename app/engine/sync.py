"""Keeping one machine's files in step with the engine while a team runs (``teamdeck sync``).

One loop per machine and team: the engine's feed says when a local member's inbox grew (then
``Projection.pull``), the files' watcher when a remote member's inbox file grew here (then
``Projection.push``); every ``heartbeat`` seconds this machine's members say they are alive,
and on the desk's machine the silent ones are reaped. The passes run in a worker thread, one
at a time; a change that arrives during a pass runs another after it, so none is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Mapping

from app.core.events import ChangeEvent, InboxChanged
from app.core.home import Home
from app.core.watch import Watcher
from app.engine.link import Link
from app.engine.members import EngineTeams
from app.engine.projection import Projection
from app.engine.watch import EngineFeed


class Sync:
    def __init__(
        self,
        home: Home,
        team: str,
        url: str,
        *,
        local: set[str],
        links: Mapping[str, Link],
        desk: bool = False,
        heartbeat: float = 5.0,
    ) -> None:
        self.home = home
        self.team = team
        self.url = url
        self.local = set(local)
        self.desk = desk
        self.heartbeat = heartbeat
        self.reader = Link(url)
        self.projection = Projection(home, team, self.local, self.reader, links)
        self.members = EngineTeams(self.reader)
        self.passes = 0
        self._wake = asyncio.Event()
        self._pass_lock = threading.Lock()

    def remote(self) -> set[str]:
        names = set(self.members.machine_of(self.team))
        names |= {"team-lead", "user"}
        return names - self.local

    def one_pass(self) -> tuple[int, int]:
        """Pull, then push; (copied, sent). One at a time: two pulls at once could both
        find a message missing from the file and both append it."""
        with self._pass_lock:
            copied = self.projection.pull()
            sent = self.projection.push(self.remote())
            self.passes += 1
            return copied, sent

    def _beat(self) -> None:
        for name in self.local - {"team-lead", "user"}:
            self.members.heartbeat(self.team, name, machine=socket.gethostname(), pid=os.getpid())
        if self.desk:
            self.members.reap(self.team)

    async def run(self, ready: asyncio.Event | None = None) -> None:
        """Until cancelled."""
        feed = EngineFeed(self.url, self.team)
        watcher = Watcher(self.home, agent_logs=False)

        def on(events: list[ChangeEvent]) -> None:
            if any(isinstance(e, InboxChanged) and e.team == self.team for e in events):
                self._wake.set()

        feed.subscribe(on)
        watcher.subscribe(on)
        await feed.start()
        await watcher.start()
        try:
            await asyncio.to_thread(self.one_pass)  # what happened while this loop was away
            await asyncio.to_thread(self._beat)
            if ready is not None:
                ready.set()
            while True:
                with contextlib.suppress(TimeoutError):
                    # Not wait_for: Python 3.11's loses a cancel met by a wake (the loop
                    # went on); asyncio.timeout keeps it.
                    async with asyncio.timeout(self.heartbeat):
                        await self._wake.wait()
                if self._wake.is_set():
                    self._wake.clear()
                    await asyncio.to_thread(self.one_pass)
                else:
                    await asyncio.to_thread(self._beat)
        finally:
            await watcher.stop()
            await feed.stop()

    def close(self) -> None:
        self.reader.close()

"""Registering spawned teammates in the team config, many in one write.

Each spawn used to rewrite the config on its own (its lock, an atomic write with fsyncs, and
every watcher's re-read), each rewrite longer than the last: spawning a team cost time
quadratic in its size. Here spawns that overlap share a write (group commit): the first one
writes at once, those that arrive while it is written wait and go together in the next. A lead
whose one response spawns a hundred teammates (the agent loop runs a response's Task calls
together) registers them in two writes. Each spawn still returns only once its entry is on
disk, so nothing a teammate does can run ahead of its membership.

Names are reserved as they are chosen (``unique_name``), so overlapping spawns of the same name
get ``name``, ``name-2``... as sequential ones do.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from app.core import Home
from app.core.errors import TeamdeckError
from app.core.models import TeamMember
from app.runtime.scheduling import offload


@dataclass
class _Pending:
    team: str
    member: TeamMember
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Registrar:
    """Adds members to a team config, overlapping requests in one write."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._queue: list[_Pending] = []
        self._writer: asyncio.Task[None] | None = None
        self._reserved: dict[str, set[str]] = {}
        #: Config writes made (what the tests count).
        self.writes = 0

    def unique_name(self, team: str, wanted: str) -> str:
        """A member name free in the team and among the spawns still being registered."""
        reserved = self._reserved.setdefault(team, set())
        name = self.home.teams.unique_member_name(team, wanted)
        base, counter = name, 2
        while name in reserved:
            name = self.home.teams.unique_member_name(team, f"{base}-{counter}")
            counter += 1
        reserved.add(name)
        return name

    async def register(self, team: str, member: TeamMember) -> None:
        """Write ``member``'s entry (with the spawns that overlap it); its error, if refused."""
        pending = _Pending(team, member)
        self._queue.append(pending)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write_all())
        await asyncio.shield(pending.done)

    def release(self, team: str, name: str) -> None:
        """``name`` is registered (or its spawn gave up): the config speaks for it now."""
        self._reserved.get(team, set()).discard(name)

    async def _write_all(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            for team in dict.fromkeys(p.team for p in batch):
                mine = [p for p in batch if p.team == team]
                try:
                    outcome = await offload.off_loop(
                        self.home.teams.add_members, team, [p.member for p in mine]
                    )
                except (TeamdeckError, OSError) as exc:
                    outcome = [TeamdeckError(str(exc))] * len(mine)
                self.writes += 1
                for pending, error in zip(mine, outcome, strict=True):
                    if pending.done.done():
                        continue
                    if error is None:
                        pending.done.set_result(None)
                    else:
                        pending.done.set_exception(error)

"""One machine's side of a team across machines, for the runtime (``app.runtime`` reaches the
engine through this and ``app.engine.choose`` only).

The lead's machine (``desk``: the team's desk role) and each joined machine (its agent's role)
run one :class:`Relay`: every pass projects messages (``projection``), the task board
(``board``) and event logs (``logs``) between this home's files and the engine, says this
machine's members are alive, and reads every member's machine and state. The lead's side also
places teammates on joined machines (:meth:`Relay.place`: the member's row carries the spawn,
the joined machine starts it), asks one stopped or its turn ended (:meth:`Relay.kill`,
:meth:`Relay.interrupt`: the member's row carries the request, only the desk's role may write
it) and reaps the silent ones; a joined machine waits for its placement
(:meth:`Relay.placement`) and stops or interrupts its teammate when asked.

The passes are blocking calls (the link retries while the server is away): :meth:`Relay.run`
runs them one at a time, each in a thread of its own, and between two passes waits for a
change or the interval (``app.engine.pace``: the feed and the files' watcher, the pass's
thread, and how a stop never waits without bound).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from app.core.authority import TeamKey
from app.core.errors import TeamdeckError
from app.core.home import Home
from app.core.models import InboxMessage, TeamMember
from app.core.paths import LEAD_NAME, USER_NAME
from app.core.protocol import parse_frame
from app.engine.board import Board
from app.engine.errors import AccessRefusedError, EngineError
from app.engine.link import Link
from app.engine.logs import pull_logs, push_log
from app.engine.members import EngineTeams
from app.engine.pace import Pace, in_thread
from app.engine.projection import Projection

log = logging.getLogger(__name__)

PLACED = "teamdeckPlacedOn"
"""The member data's field naming the machine the lead placed the teammate on."""
KILL = "teamdeckKill"
"""The member data's field by which the desk asks the joined machine to stop its teammate's
process (only the desk's role may change a member's data: the server refuses an agent's)."""
INTERRUPT = "teamdeckInterrupt"
"""The member data's count of the desk's requests to end the teammate's current turn (the
joined machine interrupts it each time the count grows; only the desk's role may write it)."""


@dataclass(frozen=True)
class Identity:
    team: str
    member: str
    desk: bool


def identity(url: str) -> Identity | None:
    """Whom ``url``'s role stands for (``None``: the administrator, or no role of teamdeck)."""
    try:
        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            row = conn.execute(
                "SELECT team, member, desk FROM teamdeck.identities WHERE role = current_user"
            ).fetchone()
    except psycopg.Error as exc:
        raise EngineError(f"cannot use the engine: {str(exc).strip().splitlines()[0]}") from None
    return Identity(str(row[0]), str(row[1]), bool(row[2])) if row else None


@dataclass
class MemberState:
    machine: str | None
    state: str
    placed: str | None
    killed: bool = False
    interrupts: int = 0


class Relay:
    def __init__(
        self,
        home: Home,
        team: str,
        url: str,
        *,
        member: str,
        desk: bool,
        key: TeamKey | None,
        machine: str,
        interval: float = 0.2,
        heartbeat: float = 2.0,
    ) -> None:
        self.home = home
        self.team = team
        self.member = member
        self.desk = desk
        self.machine = machine
        self.interval = interval
        self.heartbeat = heartbeat
        self.link = Link(url)
        local = {LEAD_NAME, USER_NAME} if desk else {member}
        self.local = local
        links = {name: self.link for name in local}
        self.projection = Projection(
            home, team, set(local), self.link, links, key=key, arriving=self._arriving,
            mirrors=desk,
        )  # fmt: skip
        self.board = Board(home, team, self.link, local=set(local), desk=desk)
        self.members = EngineTeams(self.link)
        self.states: dict[str, MemberState] = {}
        self.passes = 0
        self.error: str | None = None
        self._lock = threading.Lock()
        self._beaten = 0.0
        self._known: set[str] = set()
        """Members :meth:`_know_members` added (or tried to) to this home's config."""
        self.pace = Pace(home, team, url, interval, fetch=local)
        self.projection.ready = self.pace.take

    # ------------------------------------------------------------------ members

    def _read_states(self) -> dict[str, MemberState]:
        rows = self.link.read(
            lambda c: c.execute(
                "SELECT name, machine, state, data->>%s, data ? %s, data->%s"
                " FROM teamdeck.members WHERE team = %s",
                (PLACED, KILL, INTERRUPT, self.team),
            ).fetchall()
        )
        return {
            r[0]: MemberState(r[1], r[2], r[3], bool(r[4]), r[5] if isinstance(r[5], int) else 0)
            for r in rows
        }

    def remote(self) -> set[str]:
        """Members running elsewhere: the ones the desk placed on a joined machine (two homes
        may share a host name: placing is what says the member runs in another home)."""
        return {n for n, s in self.states.items() if s.placed}

    def free(self) -> list[tuple[str, str]]:
        """Invited members whose machine joined and that run nothing yet: ``(name, machine)``,
        in name order (the lead places its teammates on them)."""
        self.states = self._read_states()
        return sorted(
            (n, s.machine)
            for n, s in self.states.items()
            if s.machine and not s.placed and s.state in ("joined", "running") and n != LEAD_NAME
        )

    def place(self, name: str, entry: dict[str, Any], machine: str) -> None:
        """The desk places teammate ``name`` (its config entry) on ``machine``."""
        data = {**entry, PLACED: machine}
        self.link.run(
            lambda c: c.execute(
                "UPDATE teamdeck.members SET data = %s WHERE team = %s AND name = %s",
                (Jsonb(data), self.team, name),
            )
        )
        self.states[name] = MemberState(machine, "joined", machine)

    def kill(self, name: str) -> None:
        """The desk asks the machine running teammate ``name`` to stop its process (the
        joined machine's ``join`` acts on it: :attr:`MemberState.killed`). The server refuses
        it from an agent's role (``AccessRefusedError``): no agent stops another's teammate."""
        rows = self.link.run(
            lambda c: c.execute(
                "UPDATE teamdeck.members SET data = data || %s WHERE team = %s AND name = %s"
                " RETURNING name",
                (Jsonb({KILL: True}), self.team, name),
            ).fetchall()
        )
        if not rows:
            raise AccessRefusedError(
                f"the engine refused: no member {name!r} of team {self.team} to stop"
            )

    def interrupt(self, name: str) -> None:
        """The desk asks the machine running teammate ``name`` to end its current turn (the
        joined machine's ``join`` interrupts it as the dashboard interrupts a local teammate
        process: :meth:`interrupts` grows). Refused by the server from an agent's role, as
        :meth:`kill` is."""
        rows = self.link.run(
            lambda c: c.execute(
                "UPDATE teamdeck.members SET data = data || jsonb_build_object(%s::text,"
                " CASE WHEN jsonb_typeof(data->%s) = 'number' THEN (data->>%s)::numeric::bigint"
                " ELSE 0 END + 1) WHERE team = %s AND name = %s RETURNING name",
                (INTERRUPT, INTERRUPT, INTERRUPT, self.team, name),
            ).fetchall()
        )
        if not rows:
            raise AccessRefusedError(
                f"the engine refused: no member {name!r} of team {self.team} to interrupt"
            )

    def interrupts(self) -> int:
        """How many times the desk asked this machine's member's turn ended (as of the last
        pass): the joined machine interrupts it when the count grows."""
        state = self.states.get(self.member)
        return state.interrupts if state is not None else 0

    def killed(self) -> bool:
        """The desk asked this machine to stop its member's process (as of the last pass)."""
        state = self.states.get(self.member)
        return state is not None and state.killed

    def placement(self) -> dict[str, Any] | None:
        """This machine's member's config entry once the lead placed it here (not once the
        desk asked it stopped: a ``join`` run again does not start a killed teammate)."""
        row = self.link.run(
            lambda c: c.execute(
                "SELECT data FROM teamdeck.members WHERE team = %s AND name = %s",
                (self.team, self.member),
            ).fetchone()
        )
        data = row[0] if row else None
        placed = isinstance(data, dict) and data.get(PLACED) and not data.get(KILL)
        return data if placed else None

    def _arriving(self, recipient: str, message: InboxMessage) -> None:
        """A remote teammate's shutdown approval: it has left the team on its machine, so it
        leaves this home's config before the lead reads the approval (as a local teammate
        process leaves before it approves)."""
        frame = parse_frame(message.text)
        if (
            self.desk
            and frame is not None
            and frame.type == "shutdown_approved"
            and message.sender in self.remote()
        ):
            self.home.teams.remove_member(self.team, name=message.sender)

    def _enlist(self) -> None:
        """The desk's side: the teammates running in this home are members in the engine too,
        on this machine (a remote teammate's message to one of them is then accepted), their
        inboxes and claims are this home's to project, and what they write to a teammate on
        a joined machine goes out on the desk's link: the server lets the desk send as a
        member its machine hosts (no role of its own, placed nowhere), and as no other."""
        config = self.home.teams.get(self.team)
        if config is None:
            return
        here = {m.name for m in config.members} - self.remote()
        for member in config.members:
            if member.name not in self.states and member.name != LEAD_NAME:
                self.members.add_member(self.team, member, machine=self.machine or None)
        self.local = {LEAD_NAME, USER_NAME} | here
        self.projection.local = set(self.local)
        self.projection.links = {name: self.link for name in self.local}
        self.board.local = set(self.local)

    def _know_members(self) -> None:
        """A joined machine's side: the team's other members (on the lead's machine or a
        third one) are members in this home's config too, so its teammate can address them;
        what it writes to them goes to the engine on its own role (:meth:`Projection.push`)
        and reaches their machines."""
        config = self.home.teams.get(self.team)
        if config is None:
            return
        others = sorted(set(self.states) - {self.member, LEAD_NAME, USER_NAME} - self._known)
        missing = [
            TeamMember(agent_id=f"{name}@{self.team}", name=name)
            for name in others
            if config.member(name) is None
        ]
        if missing:  # a name this home cannot take stays unaddressable here, tried once
            self.home.teams.add_members(self.team, missing)
        self._known.update(others)

    def alive(self, name: str) -> bool:
        state = self.states.get(name)
        return state is None or state.state != "gone"

    # ------------------------------------------------------------------ a pass

    def one_pass(self) -> None:
        """Messages, the board and the logs, once; the heartbeat when due. All the pass's
        changes go to the engine in one transaction (``Link.batch``: one commit, one flush to
        disk, then one wake for all), however many teammates wrote here since the last pass."""
        with self._lock:
            with self.link.batch():
                self._pass()
            self.passes += 1

    def _pass(self) -> None:
        self.states = self._read_states()
        if self.desk:
            self._enlist()
        remote = self.remote() if self.desk else (set(self.states) | {LEAD_NAME, USER_NAME})
        remote -= self.local
        # The board and the logs first: a message saying a task is done finds it done in
        # the files, one saying a teammate stopped finds its log's last lines there.
        self.board.step()
        if self.desk:
            pull_logs(self.home, self.team, self.remote(), self.link)
        else:
            push_log(self.home, self.team, self.member, self.link)
        self.projection.pull()
        self.projection.push(remote)
        if self.desk:
            self.projection.mirror(self.remote())
        else:
            self._know_members()
        if time.monotonic() - self._beaten >= self.heartbeat:
            self._beaten = time.monotonic()
            if self.desk:
                self.members.reap(self.team)
            else:
                self.members.heartbeat(
                    self.team, self.member, machine=self.machine, pid=os.getpid()
                )

    async def run(self) -> None:
        """Passes until cancelled (a failing pass is logged in ``error`` and tried again).

        Cancelled during a pass, it returns once that pass's thread has ended, or once it was
        given its time (``app.engine.pace.in_thread``: its queries are cancelled, then it is
        left behind with a log line): a pass still using the link when the caller closes it,
        or makes its last pass, raced them."""
        try:
            while True:
                try:
                    await in_thread(self.one_pass, link=self.link, what=f"relay of {self.team}")
                    self.error = None
                except (TeamdeckError, psycopg.Error, OSError) as exc:
                    # Kept and tried again at the next pass: a relay that stopped here would
                    # leave its machine's teammates cut off for the rest of the run.
                    self.error = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                await self.pause()
        finally:
            await self.unwatch()

    async def pause(self) -> None:
        """Until the next pass is due (``Pace.pause``): a change of the team, or the
        interval."""
        await self.pace.pause()

    async def unwatch(self) -> None:
        """Stop the feed and the files' watcher :meth:`pause` started."""
        await self.pace.unwatch()

    def close(self) -> None:
        """Close the link (a pass still running on it has its queries cancelled)."""
        with contextlib.suppress(Exception):
            self.link.close()

"""The engine tests' handles on their throwaway server: teams with a desk and agents."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from app.core import Home
from app.core.models import TeamMember
from app.engine import roles
from app.engine.link import Link
from app.engine.relay import Relay
from app.engine.server import LocalServer

_counter = [0]


@dataclass
class Engine:
    server: LocalServer
    admin_url: str

    def admin(self) -> Link:
        return Link(self.admin_url)

    def team(self, members: list[str]) -> Team:
        """A fresh team with a desk and one role per member."""
        _counter[0] += 1
        name = f"t{_counter[0]}"
        with self.admin() as admin:
            roles.create_team(admin, name, {"description": "test"})
            desk = roles.desk(admin, name)
            agents = {m: roles.agent(admin, name, m) for m in members}
        return Team(
            name, desk.url(self.admin_url), {m: c.url(self.admin_url) for m, c in agents.items()}
        )


@dataclass
class Team:
    name: str
    desk_url: str
    urls: dict[str, str]

    def member(self, name: str) -> TeamMember:
        return TeamMember(agent_id=f"{name}@{self.name}", name=name)


def team_home(root: Path, team: str, *members: str) -> Home:
    """A home on one of the test's "machines": ``team`` made there, with ``members`` (the
    teammates that machine knows of)."""
    home = Home(root)
    home.teams.create(team, dedupe=False)
    for name in members:
        home.teams.add_member(team, TeamMember(agent_id=f"{name}@{team}", name=name))
    return home


def desk_and_gpu(
    team: Team, root: Path, *, desk_knows: tuple[str, ...] = ("gpu",), **options: Any
) -> tuple[Home, Home, Relay, Relay]:
    """The two machines of a relay test: the desk's home and relay (the lead's, its home
    knowing ``desk_knows``) and a "gpu" machine's, ``gpu`` placed there. Their interval is an
    hour unless ``options`` say otherwise (``Relay``'s keywords): a pass comes from a wake (or
    the test's own ``one_pass``), never from the clock."""
    options.setdefault("interval", 3600)
    first = team_home(root / "first", team.name, *desk_knows)
    second = team_home(root / "second", team.name, "gpu")
    desk = Relay(first, team.name, team.desk_url, member="team-lead", desk=True, key=None,
                 machine="desk-box", **options)  # fmt: skip
    gpu = Relay(second, team.name, team.urls["gpu"], member="gpu", desk=False, key=None,
                machine="gpu-box", **options)  # fmt: skip
    desk.place("gpu", {"name": "gpu"}, "gpu-box")
    return first, second, desk, gpu


def quiet_message(admin_url: str, team: str, recipient: str, sender: str, text: str = "") -> None:
    """A message committed whose wake no watcher heard (a feed's link down at that moment):
    numbered as ``teamdeck.send`` numbers, written with its numbers so no trigger notifies."""
    with psycopg.connect(admin_url) as conn:  # one transaction
        row = conn.execute(
            "INSERT INTO teamdeck.inboxes AS i (team, name, last_seq) VALUES (%s, %s, 1)"
            " ON CONFLICT (team, name) DO UPDATE SET last_seq = i.last_seq + 1"
            " RETURNING id, last_seq",
            (team, recipient),
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body, seq, inbox)"
            " VALUES (%s, %s, gen_random_uuid(), %s, %s, %s, %s)",
            (team, recipient, sender, Jsonb(_entry(sender, text)), row[1], row[0]),
        )


def _entry(sender: str, text: str) -> dict[str, str]:
    return {"from": sender, "text": text, "timestamp": "2026-01-01T00:00:00.000Z"}


@dataclass
class Commits:
    """What :func:`commits` counted: transactions that changed teamdeck's tables (``data``)
    and transactions that wrote nothing but their commit (``bare``: a wake)."""

    data: int = 0
    bare: int = 0


@contextmanager
def commits(admin_url: str) -> Iterator[Commits]:
    """Count the commits made while the block runs, from the server's write-ahead log
    (``pg_walinspect``): a COMMIT record whose transaction, or one of its savepoints, wrote a
    row of the ``teamdeck`` schema is ``data``; one whose transaction wrote nothing else,
    ``bare``. Other commits (autovacuum's statistics) are left out. Counted once the block
    ends, by the records, not by time."""
    counted = Commits()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        start = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        assert start is not None
        yield counted
        end = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        assert end is not None
        if end[0] == start[0]:
            return  # nothing was written
        give_up = time.monotonic() + 30
        while not conn.execute("SELECT pg_current_wal_flush_lsn() >= %s", end).fetchone()[0]:  # type: ignore[index]
            assert time.monotonic() < give_up, "the server did not flush its log"
            time.sleep(0.05)
        ours = {
            str(r[0])
            for r in conn.execute(
                "SELECT pg_relation_filenode(c.oid) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'teamdeck'"
                " AND pg_relation_filenode(c.oid) IS NOT NULL"
            )
        }
        records = conn.execute(
            "SELECT xid::text, resource_manager, record_type, description, block_ref"
            " FROM pg_get_wal_records_info(%s, %s)",
            (start[0], end[0]),
        ).fetchall()
    wrote: dict[str, bool] = {}  # xid -> wrote a teamdeck row
    for xid, manager, _, _, refs in records:
        if manager != "Transaction":
            touched = any(f"/{node} " in f"{refs} " for node in ours) if refs else False
            wrote[xid] = wrote.get(xid, False) or touched
    for xid, manager, kind, description, _ in records:
        if manager != "Transaction" or not kind.startswith("COMMIT"):
            continue
        subs = (
            description.split("subxacts:")[1].split(";")[0].split()
            if "subxacts:" in description
            else []
        )
        xids = [xid, *subs]
        if any(wrote.get(x) for x in xids):
            counted.data += 1
        elif not any(x in wrote for x in xids):
            counted.bare += 1


async def until(check: object, seconds: float = 60) -> None:
    """Wait (polling, the loop free meanwhile) until ``check()`` is true; fail after ``seconds``."""
    assert callable(check)
    give_up = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < give_up, "timed out"
        await asyncio.sleep(0.02)

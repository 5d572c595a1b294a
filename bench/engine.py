"""The PostgreSQL engine beside the file store, in the same run on the same machine.

    .venv/bin/python bench/engine.py [--messages N] [--tasks N] [--read N] [--rounds N]
                                     [--delivery-only]

* **delivery**: a sender appends one message; a watcher of the recipient's inbox on another
  connection hears of it and reads it (the engine: ``EngineFeed``, woken by the send's commit
  with the inbox's number and the message's seq (schema version 9), reads the new messages on
  the connection that heard it and hands them over (``fetch``, ``take``), as to a relay's pull;
  the files: ``Watcher`` through inotify, then the unread entries; bare PostgreSQL: below).
  The sender runs in a process of its own, as a teammate on another machine does (its own
  interpreter, its own connection or ``Home``): latency = the sender's clock just before it
  calls the append (the message already made) -> the message read by the watcher here, when
  the watcher's read returns (``time.perf_counter``: CLOCK_MONOTONIC, one clock for every
  process of the machine; the stamp travels back by a pipe after the send, outside the timed
  span).
  Until round 9 the sender ran in a thread of the watcher's process (``asyncio.to_thread``),
  whose hop alone cost ~0.6 ms of every harness's figure. N messages one after the other,
  the engine's, bare PostgreSQL's and the files' by turns, message by message (others' runs
  load this machine from one second to the next: each harness meets the same load).
* **claims**: 8 claimers (threads; in the engine each on its own role and connection) run a
  teammate's cycle until the board is empty: the task in hand completed and the next claimed
  (the engine: one call, ``claim_next(..., done=...)``, schema version 6; the files and bare
  PostgreSQL: a claim, then the completion); claims per second, and whether every task was
  claimed exactly once (and, in the engine, completed). The engine's runs and bare
  PostgreSQL's by turns, three each; the median of each.
* **per message / per claim cycle**: the server's committed transactions (every statement of
  an autocommit connection is one, and a listener's read of a notification too) and WAL
  flushes to disk (``pg_stat_wal.wal_sync``: concurrent commits share one), counted over the
  measure (the delivery's apart, 100 messages each), per item; and the round trips the sender
  (the claimer) waits for, counted on the wire in a pass of their own (``bench/roundtrips.py``:
  a loopback relay in front of the server, left out of the timed measures).
* **read**: one inbox of N messages read whole (``read``: every message built). The engine's
  inbox is filled by the administrator in one statement (each message numbered in place, the
  counter set once); the fill's time is shown too.
* **bare PostgreSQL** (the floor, the issue's own harness): the same two measures on plain
  tables as the administrator, no roles, policies or triggers: an ``INSERT`` that notifies
  with the new id, the listener ``SELECT``s it; a ``SKIP LOCKED`` claim then its completion.
  What is left between this row and the engine's is teamdeck's.
* **the commit's cost** (diagnosis): delivery and claims again with ``synchronous_commit``
  off for the run (``ALTER SYSTEM``, reset after): what is left when a commit does not wait
  for the disk's flush. teamdeck never runs so (a crash of the machine could lose an
  acknowledged message); the row says how much of the figures above the flush is.
* **kill -9**: R rounds of a burst of sends with the server killed (``kill -9`` of its
  process group) and restarted in the middle; lost and duplicated messages.

Targets (issue 31, loopback): delivery p50 <= 2 ms, claims >= 1,000/s exactly once,
0 lost over 5 kill -9 rounds. The file store is the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402
from psycopg.types.json import Jsonb  # noqa: E402

from app.core.events import ChangeEvent, InboxChanged  # noqa: E402
from app.core.home import Home  # noqa: E402
from app.core.models import InboxMessage, TeamMember  # noqa: E402
from app.core.watch import Watcher  # noqa: E402
from app.engine import roles  # noqa: E402
from app.engine.link import Link  # noqa: E402
from app.engine.messages import EngineMailbox  # noqa: E402
from app.engine.server import LocalServer, find_bin  # noqa: E402
from app.engine.tasks import EngineTasks  # noqa: E402
from app.engine.watch import EngineFeed  # noqa: E402
from bench.roundtrips import RoundTrips  # noqa: E402

CLAIMERS = 8
CLAIM_TURNS = 3
"""Claim runs of the engine and of bare PostgreSQL, by turns (the median of each is shown)."""
T = TypeVar("T")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# ----------------------------------------------------------------------------- delivery


class _Harness:
    """One way to deliver: ``start``, then ``one(i)`` per message (its latency in ms), then
    ``stop``. The harnesses take turns message by message (:func:`deliveries`): the machine's
    load, which others' runs change from second to second, weighs on each alike."""

    async def start(self) -> None: ...

    async def one(self, i: int) -> float:
        raise NotImplementedError

    async def stop(self) -> None: ...


def _sender(kind: str, config: dict[str, str], pipe: Connection) -> None:
    """A sender process (a teammate elsewhere): told ``i``, it makes message ``i``, stamps the
    clock, sends the message and answers with the stamp; ``None`` ends it. The message is made
    before the stamp, in every harness alike (since round 10): the append is timed, not the
    building of what it appends."""
    send: Callable[[object], object]
    make: Callable[[int], object]
    if kind == "engine":
        link = Link(config["url"], max_size=1)
        box = EngineMailbox(link, config["team"])
        make = lambda i: InboxMessage(sender="alice", text=f"m{i}")  # noqa: E731
        send = lambda m: box.append("bob", m)  # type: ignore[arg-type]  # noqa: E731
    elif kind == "files":
        files = Home(Path(config["root"])).mailbox("bench")
        make = lambda i: InboxMessage(sender="alice", text=f"m{i}")  # noqa: E731
        send = lambda m: files.append("bob", m)  # type: ignore[arg-type]  # noqa: E731
    else:
        conn = psycopg.connect(config["url"], autocommit=True)
        make = lambda i: Jsonb({"text": f"m{i}"})  # noqa: E731
        send = lambda m: conn.execute(BARE_SEND, (m,))  # noqa: E731
    pipe.send("ready")
    while (i := pipe.recv()) is not None:
        message = make(i)
        stamp = time.perf_counter()
        send(message)
        pipe.send(stamp)


class _Remote(_Harness):
    """A sender in a process of its own; this process watches and reads. The latency is the
    sender's clock just before its append -> the message read here (``time.perf_counter``:
    CLOCK_MONOTONIC, one clock for every process of the machine)."""

    kind = ""

    def __init__(self, config: dict[str, str]) -> None:
        self.config = config
        self.pipe: Connection | None = None
        self.process: BaseProcess | None = None

    async def start(self) -> None:
        context = multiprocessing.get_context("spawn")  # this process has threads: no fork
        self.pipe, theirs = context.Pipe()
        self.process = context.Process(target=_sender, args=(self.kind, self.config, theirs))
        self.process.start()
        if not await asyncio.to_thread(self.pipe.poll, 60):
            raise RuntimeError(f"the {self.kind} sender did not start")
        self.pipe.recv()
        await self.listen()

    async def listen(self) -> None: ...

    async def received(self, i: int) -> float:
        """Until message ``i`` was read here; when it was (``time.perf_counter``)."""
        raise NotImplementedError

    async def one(self, i: int) -> float:
        assert self.pipe is not None
        self.pipe.send(i)
        read = await self.received(i)
        stamp = self.pipe.recv() if self.pipe.poll(0) else await asyncio.to_thread(self.pipe.recv)
        return (read - float(stamp)) * 1000

    async def stop(self) -> None:
        if self.pipe is not None:
            self.pipe.send(None)
        if self.process is not None:
            await asyncio.to_thread(self.process.join, 30)


class _Watched(_Remote):
    """A subscriber of a change feed reads on the news (in the feed's callback: the message
    is read when the callback's read returns)."""

    def __init__(self, config: dict[str, str]) -> None:
        super().__init__(config)
        self.got = asyncio.Event()
        self.received_count = 0
        self.read_at = 0.0

    def on(self, events: list[ChangeEvent]) -> None:
        if any(isinstance(e, InboxChanged) and e.agent == "bob" for e in events):
            count = self.take()
            if count:
                self.read_at = time.perf_counter()
                self.received_count += count
                self.got.set()

    def take(self) -> int:
        """Read what is new; how many."""
        raise NotImplementedError

    async def received(self, i: int) -> float:
        while self.received_count <= i:
            await self.got.wait()
            self.got.clear()
        return self.read_at


class EngineDelivery(_Watched):
    """The engine: ``EngineFeed`` woken by the send's commit reads the inbox's new messages on
    the connection that heard it (``fetch``) and hands them over (``take``), as to a relay's
    pull (``EngineMailbox.since`` when it does not hold them all)."""

    kind = "engine"

    def __init__(self, team: dict[str, str], name: str) -> None:
        super().__init__({"url": team["alice"], "team": name})
        self.reader = Link(team["bob"], max_size=1)
        self.box_in = EngineMailbox(self.reader, name)
        self.cursor = 0
        self.feed = EngineFeed(team["bob"], name, fetch={"bob"})

    def take(self) -> int:
        new = self.feed.take("bob", self.cursor)
        if new is None:
            new = self.box_in.since("bob", self.cursor)
        if new:
            self.cursor = new[-1][0]
        return len(new)

    async def listen(self) -> None:
        self.feed.subscribe(self.on)
        await self.feed.start()

    async def stop(self) -> None:
        await super().stop()
        await self.feed.stop()
        self.reader.close()


class FileDelivery(_Watched):
    """The files: ``Watcher`` through inotify; the sender's own ``Home`` in its own process."""

    kind = "files"

    def __init__(self, root: Path) -> None:
        super().__init__({"root": str(root)})
        home = Home(root)
        home.teams.create("bench")
        for member in ("alice", "bob"):
            home.teams.add_member("bench", TeamMember(agent_id=f"{member}@bench", name=member))
        self.box_in = home.mailbox("bench")
        self.watcher = Watcher(home)

    def take(self) -> int:
        unread = self.box_in.unread("bob")
        if unread:
            self.box_in.mark_read("bob", [i for i, _ in unread], durable=False)
        return len(unread)

    async def listen(self) -> None:
        self.watcher.subscribe(self.on)
        await self.watcher.start()

    async def stop(self) -> None:
        await super().stop()
        await self.watcher.stop()


BARE_SEND = (
    "WITH m AS (INSERT INTO bench_messages (body) VALUES (%s) RETURNING id)"
    " SELECT pg_notify('bench', id::text) FROM m"
)


class BareDelivery(_Remote):
    """An insert that notifies with its id; the listener reads the row by that id."""

    kind = "bare"

    def __init__(self, admin_url: str) -> None:
        super().__init__({"url": admin_url})
        self.listener: psycopg.AsyncConnection | None = None

    async def start(self) -> None:
        with psycopg.connect(self.config["url"], autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS bench_messages (id bigserial PRIMARY KEY, body jsonb)"
            )
        await super().start()

    async def listen(self) -> None:
        self.listener = await psycopg.AsyncConnection.connect(self.config["url"], autocommit=True)
        await self.listener.execute("LISTEN bench")

    async def received(self, i: int) -> float:
        assert self.listener is not None
        # The notes first: the generator holds the connection the read needs.
        notes = [n async for n in self.listener.notifies(stop_after=1)]
        cur = await self.listener.execute(
            "SELECT body FROM bench_messages WHERE id = %s", (int(notes[-1].payload),)
        )
        await cur.fetchone()
        return time.perf_counter()

    async def stop(self) -> None:
        await super().stop()
        if self.listener is not None:
            await self.listener.close()


async def deliveries(harnesses: dict[str, _Harness], count: int) -> dict[str, list[float]]:
    """Each harness's latencies (ms), the harnesses taking turns message by message."""
    samples: dict[str, list[float]] = {name: [] for name in harnesses}
    for harness in harnesses.values():
        await harness.start()
    try:
        for i in range(count):
            for name, harness in harnesses.items():
                samples[name].append(await harness.one(i))
                await asyncio.sleep(0.002)
    finally:
        for harness in harnesses.values():
            await harness.stop()
    return samples


# ----------------------------------------------------------------------------- claims


def claims(
    make: Callable[[str], tuple[Callable[[str], object], Callable[[], None]]],
    names: list[str],
    admin_url: str | None = None,
) -> tuple[float, list[str]]:
    """Run the claimers; (seconds, every claimed id). With ``admin_url``, the server's
    transactions and flushes per claim over the run are kept in ``counts['claims']``."""
    if admin_url is not None:
        before = server_counts(admin_url)
    claimed: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(names) + 1)

    def work(name: str) -> None:
        claim_and_finish, close = make(name)
        barrier.wait()
        try:
            while True:
                task_id = claim_and_finish(name)
                if task_id is None:
                    return
                with lock:
                    claimed.append(str(task_id))
        finally:
            close()

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    if admin_url is not None:
        counts["claims"] = per_item(before, server_counts(admin_url), len(claimed))
    return seconds, claimed


def engine_claims(admin_url: str, tasks: int) -> tuple[float, bool]:
    """A teammate's cycle: the task in hand completed and the next claimed, in one call
    (``EngineTasks.claim_next(..., done=...)``); the last call completes the last task."""
    names = [f"w{i}" for i in range(CLAIMERS)]
    team, urls = make_team(admin_url, names)
    with Link(urls["desk"]) as desk:
        board = EngineTasks(desk, team)
        ids = [board.create(f"t{i}").id for i in range(tasks)]

    def make(name: str) -> tuple[Callable[[str], object], Callable[[], None]]:
        link = Link(urls[name], max_size=1)
        board = EngineTasks(link, team)
        held: list[str | None] = [None]

        def claim(agent: str) -> object:
            got = board.claim_next(agent, status="in_progress", done=held[0])
            held[0] = got.task.id if got is not None and got.success and got.task else None
            return held[0]

        return claim, link.close

    seconds, claimed = claims(make, names, admin_url)
    with Link(urls["desk"]) as desk:
        finished = all(t.status == "completed" for t in EngineTasks(desk, team).list())
    return seconds, finished and sorted(claimed, key=int) == ids


def file_claims(root: Path, tasks: int) -> tuple[float, bool]:
    home = Home(root)
    home.teams.create("claims")
    board = home.tasks("claims")
    ids = [board.create(f"t{i}").id for i in range(tasks)]
    names = [f"w{i}" for i in range(CLAIMERS)]

    def make(name: str) -> tuple[Callable[[str], object], Callable[[], None]]:
        mine = Home(root).tasks("claims")

        def claim(agent: str) -> object:
            got = mine.claim_next(agent)
            if got is None or not got.task:
                return None
            mine.update(got.task.id, status="completed")
            return got.task.id

        return claim, lambda: None

    seconds, claimed = claims(make, names)
    return seconds, sorted(claimed, key=int) == ids


def bare_claims(admin_url: str, tasks: int) -> tuple[float, bool]:
    """The claim cycle on a plain table: one ``SKIP LOCKED`` statement, then the completion."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_tasks"
            " (id serial PRIMARY KEY, status text, owner text)"
        )
        conn.execute("TRUNCATE bench_tasks RESTART IDENTITY")
        conn.execute(
            "INSERT INTO bench_tasks (status) SELECT 'pending' FROM generate_series(1, %s)",
            (tasks,),
        )

    def make(name: str) -> tuple[Callable[[str], object], Callable[[], None]]:
        conn = psycopg.connect(admin_url, autocommit=True)

        def claim(agent: str) -> object:
            row = conn.execute(
                "UPDATE bench_tasks SET owner = %s, status = 'in_progress' WHERE id = ("
                " SELECT id FROM bench_tasks WHERE status = 'pending' ORDER BY id LIMIT 1"
                " FOR UPDATE SKIP LOCKED) RETURNING id",
                (agent,),
            ).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE bench_tasks SET status = 'completed' WHERE id = %s", row)
            return row[0]

        return claim, conn.close

    seconds, claimed = claims(make, [f"w{i}" for i in range(CLAIMERS)], admin_url)
    return seconds, sorted(claimed, key=int) == [str(i) for i in range(1, tasks + 1)]


# ----------------------------------------------------------------------------- read


def engine_read(admin_url: str, count: int) -> tuple[float, float]:
    """(seconds to fill, seconds to read): the inbox filled in one statement as the
    administrator, each message numbered in place and the inbox's counter set once (rather
    than the trigger's counter update row by row), then read whole through the reader's role."""
    team, urls = make_team(admin_url, ["reader"])
    start = time.perf_counter()
    with psycopg.connect(admin_url) as conn:  # one transaction; set-up only: no FK checks
        conn.execute("SET LOCAL session_replication_role = replica")
        row = conn.execute(
            "INSERT INTO teamdeck.inboxes (team, name, last_seq) VALUES (%s, 'reader', %s)"
            " RETURNING id",
            (team, count),
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body, seq, inbox)"
            " SELECT %s, 'reader', gen_random_uuid(), 'team-lead',"
            " %s || jsonb_build_object('text', 'message ' || g), g, %s"
            " FROM generate_series(1, %s) g",
            (team, Jsonb({"from": "team-lead", "timestamp": "2026-01-01T00:00:00.000Z"}), row[0],
             count),
        )  # fmt: skip
    filled = time.perf_counter() - start
    with Link(urls["reader"]) as link:
        box = EngineMailbox(link, team)
        start = time.perf_counter()
        messages = box.read("reader")
        seconds = time.perf_counter() - start
    assert len(messages) == count
    return filled, seconds


def file_read(root: Path, count: int) -> float:
    home = Home(root)
    home.teams.create("reads")
    home.teams.add_member("reads", TeamMember(agent_id="reader@reads", name="reader"))
    import json

    path = home.mailbox("reads").path("reader")
    entries = [
        {
            "from": "team-lead",
            "text": f"message {i}",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "read": False,
        }
        for i in range(count)
    ]
    path.write_text(json.dumps(entries))
    fresh = Home(root).mailbox("reads")
    start = time.perf_counter()
    messages = list(fresh.read("reader"))
    seconds = time.perf_counter() - start
    assert len(messages) == count
    return seconds


# ----------------------------------------------------------------------------- kill -9


def kill_rounds(server: LocalServer, admin_url: str, rounds: int, burst: int) -> tuple[int, int]:
    """(lost, duplicated) over all rounds."""
    lost = duplicated = 0
    for r in range(rounds):
        team, urls = make_team(admin_url, ["s", "inbox"])
        sent = [0]

        def send(urls: dict[str, str] = urls, team: str = team, sent: list[int] = sent) -> None:
            with Link(urls["s"], max_size=1) as link:
                box = EngineMailbox(link, team)
                for i in range(burst):
                    box.append(
                        "inbox", InboxMessage(sender="s", text=f"{i}"), uuid=str(uuid.uuid4())
                    )
                    sent[0] += 1

        thread = threading.Thread(target=send)
        thread.start()
        while sent[0] < burst // 2:
            time.sleep(0.002)
        server.kill()
        time.sleep(0.2)
        server.start()
        thread.join()
        with Link(urls["inbox"]) as link:
            texts = [m.text for m in EngineMailbox(link, team).read("inbox")]
        lost += len(set(map(str, range(burst))) - set(texts))
        duplicated += len(texts) - len(set(texts))
        print(f"  kill -9 round {r + 1}: {sent[0]} acknowledged, {len(texts)} stored", flush=True)
    return lost, duplicated


def commit_cost(admin_url: str, args: argparse.Namespace) -> tuple[list[float], float]:
    """Delivery and claims with ``synchronous_commit`` off (then reset)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET synchronous_commit = off")
        conn.execute("SELECT pg_reload_conf()")
    try:
        name, urls = make_team(admin_url, ["alice", "bob"])
        ms = asyncio.run(deliveries({"e": EngineDelivery(urls, name)}, args.messages))["e"]
        secs, _ = engine_claims(admin_url, args.tasks)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM RESET synchronous_commit")
            conn.execute("SELECT pg_reload_conf()")
    print("  the commit's cost measured", flush=True)
    return ms, secs


# ----------------------------------------------------------------------------- counts


def server_counts(admin_url: str) -> tuple[int, int]:
    """(transactions committed, WAL flushes to disk) by the whole server so far. Every
    statement of an autocommit connection is a transaction: the first is the round trips.
    Read after the measured connections closed (a backend reports its counts as it ends)."""
    time.sleep(0.5)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT sum(xact_commit) FROM pg_stat_database),"
            " (SELECT wal_sync FROM pg_stat_wal)"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


counts: dict[str, str] = {}
"""The last measure's "transactions / flushes" per item (``claims``)."""


def per_item(before: tuple[int, int], after: tuple[int, int], items: int) -> str:
    """ "transactions / flushes" per item between two ``server_counts`` (the second count's
    own connection, a few transactions, is left out)."""
    xacts, flushes = (a - b for a, b in zip(after, before, strict=True))
    return f"{max(0, xacts - 3) / items:.1f} / {flushes / items:.2f}"


def counted(admin_url: str, per: int, run: Callable[[], T]) -> tuple[T, str]:
    """``run()``'s result, and "transactions / flushes" per item (``per`` items)."""
    before = server_counts(admin_url)
    result = run()
    return result, per_item(before, server_counts(admin_url), per)


def wire_counts(admin_url: str, count: int = 100) -> dict[str, float]:
    """Round trips a sender waits for per message, and a claimer per claim cycle, counted on
    the wire (``bench/roundtrips.py``), the engine's and bare PostgreSQL's harness."""
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    wire = RoundTrips(str(info["host"]), int(str(info["port"])))
    out: dict[str, float] = {}
    try:
        team, urls = make_team(admin_url, ["alice", "bob", "w0"])
        with Link(wire.url(urls["alice"]), max_size=1) as link:
            box = EngineMailbox(link, team)
            box.append("bob", InboxMessage(sender="alice", text="warm"))
            before = wire.count
            for i in range(count):
                box.append("bob", InboxMessage(sender="alice", text=f"m{i}"))
            out["engine message"] = (wire.count - before) / count
        with Link(urls["desk"]) as desk:
            board = EngineTasks(desk, team)
            for i in range(count + 1):
                board.create(f"t{i}")
        with Link(wire.url(urls["w0"]), max_size=1) as link:
            board = EngineTasks(link, team)
            got = board.claim_next("w0", status="in_progress")
            held = got.task.id if got and got.task else None
            before = wire.count
            for _ in range(count):
                got = board.claim_next("w0", status="in_progress", done=held)
                held = got.task.id if got and got.task else None
            out["engine claim"] = (wire.count - before) / count
        with psycopg.connect(wire.url(admin_url), autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS bench_messages (id bigserial PRIMARY KEY, body jsonb)"
            )
            before = wire.count
            for i in range(count):
                conn.execute(BARE_SEND, (Jsonb({"text": f"m{i}"}),))
            out["bare message"] = (wire.count - before) / count
            out["bare claim"] = 2.0  # the harness's claim, then its completion: two statements
    finally:
        wire.close()
    return out


# ----------------------------------------------------------------------------- set-up

_teams = [0]


def make_team(admin_url: str, members: list[str]) -> tuple[str, dict[str, str]]:
    _teams[0] += 1
    name = f"b{_teams[0]}"
    with Link(admin_url) as admin:
        roles.create_team(admin, name)
        urls = {"desk": roles.desk(admin, name).url(admin_url)}
        for m in members:
            urls[m] = roles.agent(admin, name, m).url(admin_url)
    return name, urls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--file-tasks", type=int, default=200)
    parser.add_argument("--read", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--burst", type=int, default=400)
    parser.add_argument(
        "--delivery-only", action="store_true", help="the delivery's three harnesses only"
    )
    args = parser.parse_args()
    if find_bin() is None:
        print("bench/engine.py needs PostgreSQL (apt-get install postgresql)")
        return 1
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-bench-"))
    folder.chmod(0o711)
    server = LocalServer(folder / "server", child=True)
    try:
        admin_url = server.init()
        print(f"load before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
        name, urls = make_team(admin_url, ["alice", "bob"])
        delivered = asyncio.run(
            deliveries(
                {
                    "engine": EngineDelivery(urls, name),
                    "bare": BareDelivery(admin_url),
                    "files": FileDelivery(folder / "home-delivery"),
                },
                args.messages,
            )
        )
        engine_ms, bare_ms, file_ms = delivered["engine"], delivered["bare"], delivered["files"]
        print("  delivery done (engine, bare PostgreSQL and files by turns)", flush=True)
        if args.delivery_only:
            for label, ms in (("engine", engine_ms), ("bare", bare_ms), ("files", file_ms)):
                print(f"{label:<8} p50 {statistics.median(ms):6.2f}  p99 {pct(ms, 99):6.2f} ms")
            times = statistics.median(engine_ms) / statistics.median(bare_ms)
            print(f"engine / bare p50: {times:.2f}; load after: {os.getloadavg()[0]:.2f}")
            return 0
        per = min(args.messages, 100)  # counted apart: the counts are the server's, all of it
        name, urls = make_team(admin_url, ["alice", "bob"])
        _, e_dcount = counted(
            admin_url, per, lambda: asyncio.run(deliveries({"e": EngineDelivery(urls, name)}, per))
        )
        _, b_dcount = counted(
            admin_url, per, lambda: asyncio.run(deliveries({"b": BareDelivery(admin_url)}, per))
        )
        # Claims: the engine's and bare PostgreSQL's runs by turns, CLAIM_TURNS each.
        e_runs, b_runs = [], []
        for _ in range(CLAIM_TURNS):
            e_runs.append(engine_claims(admin_url, args.tasks))
            e_ccount = counts["claims"]
            b_runs.append(bare_claims(admin_url, args.tasks))
            b_ccount = counts["claims"]
        e_secs = statistics.median(secs for secs, _ in e_runs)
        b_secs = statistics.median(secs for secs, _ in b_runs)
        e_once = all(once for _, once in e_runs)
        b_once = all(once for _, once in b_runs)
        f_secs, f_once = file_claims(folder / "home-claims", args.file_tasks)
        print("  claims done", flush=True)
        wires = wire_counts(admin_url)
        nosync_ms, nosync_secs = commit_cost(admin_url, args)
        e_fill, e_read = engine_read(admin_url, args.read)
        f_read = file_read(folder / "home-read", args.read)
        print("  reads done", flush=True)
        lost, duplicated = kill_rounds(server, admin_url, args.rounds, args.burst)
        print()
        print(f"{'measure':<34}{'engine':>16}{'files':>16}{'target':>18}")
        print(
            f"{'delivery p50 (ms)':<34}{statistics.median(engine_ms):>16.2f}"
            f"{statistics.median(file_ms):>16.2f}{'<= 2':>18}"
        )
        print(
            f"{'delivery p99 (ms)':<34}{pct(engine_ms, 99):>16.2f}{pct(file_ms, 99):>16.2f}{'':>18}"
        )
        print(
            f"{'claims/s, 8 claimers':<34}{args.tasks / e_secs:>16.0f}"
            f"{args.file_tasks / f_secs:>16.0f}{'>= 1000':>18}"
        )
        print(
            f"{'  every task claimed exactly once':<34}{str(e_once):>16}{str(f_once):>16}"
            f"{'True':>18}"
        )
        print(
            f"{'  bare PostgreSQL: p50 / claims/s':<34}"
            f"{f'{statistics.median(bare_ms):.2f} / {args.tasks / b_secs:.0f}':>16}"
            f"{'-':>16}{'':>18}"
        )
        ratio = (
            f"{statistics.median(engine_ms) / statistics.median(bare_ms):.2f}"
            f" / {b_secs / e_secs:.2f}"
        )
        print(f"{'  engine / bare: p50 / claims/s':<34}{ratio:>16}{'-':>16}{'':>18}")
        print(f"{'  per message: xacts / flushes':<34}{e_dcount:>16}{'-':>16}{'':>18}")
        print(f"{'    bare PostgreSQL':<34}{b_dcount:>16}{'-':>16}{'':>18}")
        trips = f"{wires['engine message']:.2f} / {wires['bare message']:.2f}"
        print(f"{'    sender round trips: / bare':<34}{trips:>16}{'-':>16}{'':>18}")
        print(f"{'  per claim cycle: xacts / flushes':<34}{e_ccount:>16}{'-':>16}{'':>18}")
        print(f"{'    bare PostgreSQL':<34}{b_ccount:>16}{'-':>16}{'':>18}")
        trips = f"{wires['engine claim']:.2f} / {wires['bare claim']:.2f}"
        print(f"{'    claimer round trips: / bare':<34}{trips:>16}{'-':>16}{'':>18}")
        print(
            f"{'  without the flush: p50 / claims/s':<34}"
            f"{f'{statistics.median(nosync_ms):.2f} / {args.tasks / nosync_secs:.0f}':>16}"
            f"{'-':>16}{'':>18}"
        )
        print(f"{f'read {args.read:,} messages (s)':<34}{e_read:>16.2f}{f_read:>16.2f}{'':>18}")
        print(f"{'  (filling the inbox took, s)':<34}{e_fill:>16.2f}{'-':>16}{'':>18}")
        print(
            f"{f'kill -9 x{args.rounds}: lost / duplicated':<34}{f'{lost} / {duplicated}':>16}"
            f"{'-':>16}{'0 / 0':>18}"
        )
        if not b_once:
            print("  bare PostgreSQL: a task was NOT claimed exactly once")
        print(f"load after: {os.getloadavg()[0]:.2f} (1 min)")
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

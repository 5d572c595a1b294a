"""Two revisions of the engine's delivery by turns in one run, with bare PostgreSQL between.

    .venv/bin/python bench/engine_turns.py --base DIR [--messages N]

``DIR`` is a checkout of another revision (``git worktree add /tmp/base main``, or
``git archive main app bench | tar -x -C /tmp/base``). One PostgreSQL cluster: a database of
its own for the base revision, migrated by the base's code, and this checkout's; each engine's
sender and its watcher (``EngineFeed`` with ``fetch``, as ``bench/engine.py``'s) run in
processes of their own with their revision's code, so their Python and schema are each
revision's own. The three senders take turns message by message, each message made before the
sender stamps the clock; latency = the stamp -> the message handed over to the watcher's
subscriber (``time.perf_counter``: CLOCK_MONOTONIC, one clock for every process).

Why: on a machine shared with other runs, ``bench/engine.py`` run once per revision compares
different minutes' load; by turns, each revision meets the same load, and the ratio to bare
PostgreSQL in the same run says what is the engine's own.
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
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

HERE = str(Path(__file__).resolve().parent.parent)
BARE = (
    "WITH m AS (INSERT INTO bench_messages (body) VALUES (%s) RETURNING id)"
    " SELECT pg_notify('bench', id::text) FROM m"
)


def _use(tree: str) -> None:
    sys.path.insert(0, tree)


def _watcher(tree: str, url: str, team: str, migrate: bool, pipe: Connection) -> None:
    """Make the team (and, for the base, its schema) with ``tree``'s code, then watch bob's
    inbox; told ``i``, answer when message ``i`` was handed over."""
    _use(tree)
    import psycopg

    from app.core.events import ChangeEvent, InboxChanged
    from app.engine import roles
    from app.engine.link import Link
    from app.engine.messages import EngineMailbox
    from app.engine.migrate import migrate as apply
    from app.engine.watch import EngineFeed

    if migrate:
        with psycopg.connect(url) as conn:
            apply(conn)
    with Link(url) as admin:
        roles.create_team(admin, team)
        urls = {m: roles.agent(admin, team, m).url(url) for m in ("alice", "bob")}
    pipe.send(urls)

    async def watch() -> None:
        feed = EngineFeed(urls["bob"], team, fetch={"bob"})
        reader = Link(urls["bob"], max_size=1)
        box = EngineMailbox(reader, team)
        got = asyncio.Event()
        seen = {"cursor": 0, "count": 0, "at": 0.0}

        def on(events: list[ChangeEvent]) -> None:
            if any(isinstance(e, InboxChanged) and e.agent == "bob" for e in events):
                new = feed.take("bob", int(seen["cursor"]))
                if new is None:
                    new = box.since("bob", int(seen["cursor"]))
                if new:
                    seen["cursor"] = new[-1][0]
                    seen["count"] += len(new)
                    seen["at"] = time.perf_counter()
                    got.set()

        feed.subscribe(on)
        await feed.start()
        pipe.send("ready")
        while (i := await asyncio.to_thread(pipe.recv)) is not None:
            while seen["count"] <= i:
                await got.wait()
                got.clear()
            pipe.send(seen["at"])
        await feed.stop()
        reader.close()

    asyncio.run(watch())


def _sender(tree: str, url: str, team: str, pipe: Connection) -> None:
    _use(tree)
    from app.core.models import InboxMessage
    from app.engine.link import Link
    from app.engine.messages import EngineMailbox

    box = EngineMailbox(Link(url, max_size=1), team)
    pipe.send("ready")
    while (i := pipe.recv()) is not None:
        message = InboxMessage(sender="alice", text=f"m{i}")
        stamp = time.perf_counter()
        box.append("bob", message)
        pipe.send(stamp)


def _bare_sender(url: str, pipe: Connection) -> None:
    import psycopg
    from psycopg.types.json import Jsonb

    conn = psycopg.connect(url, autocommit=True)
    pipe.send("ready")
    while (i := pipe.recv()) is not None:
        body = Jsonb({"text": f"m{i}"})
        stamp = time.perf_counter()
        conn.execute(BARE, (body,))
        pipe.send(stamp)


async def _run(base: str, count: int, folder: Path) -> dict[str, list[float]]:
    _use(HERE)
    import psycopg

    from app.engine.server import LocalServer

    server = LocalServer(folder / "server", child=True)
    context = multiprocessing.get_context("spawn")
    processes: list[Any] = []

    def start(target: Any, *args: Any) -> Connection:
        ours, theirs = context.Pipe()
        process = context.Process(target=target, args=(*args, theirs))
        process.start()
        processes.append(process)
        return ours

    try:
        url = server.init()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE turns_base")
            conn.execute("CREATE TABLE bench_messages (id bigserial PRIMARY KEY, body jsonb)")
        base_url = psycopg.conninfo.make_conninfo(url, dbname="turns_base")
        pipes: dict[str, tuple[Connection, Connection]] = {}
        for name, tree, where, migrate in (
            ("base", base, base_url, True),
            ("this", HERE, url, False),
        ):
            watcher = start(_watcher, tree, where, f"turns_{name}", migrate)
            urls = watcher.recv()
            sender = start(_sender, tree, urls["alice"], f"turns_{name}")
            assert sender.recv() == "ready" and watcher.recv() == "ready"
            pipes[name] = (sender, watcher)
        bare = start(_bare_sender, url)
        assert bare.recv() == "ready"
        listener = await psycopg.AsyncConnection.connect(url, autocommit=True)
        await listener.execute("LISTEN bench")
        samples: dict[str, list[float]] = {"base": [], "this": [], "bare": []}
        for i in range(count):
            for name in samples:
                if name == "bare":
                    bare.send(i)
                    notes = [n async for n in listener.notifies(stop_after=1)]
                    cur = await listener.execute(
                        "SELECT body FROM bench_messages WHERE id = %s", (int(notes[-1].payload),)
                    )
                    await cur.fetchone()
                    read, stamp = time.perf_counter(), bare.recv()
                else:
                    sender, watcher = pipes[name]
                    watcher.send(i)
                    sender.send(i)
                    read, stamp = await asyncio.to_thread(watcher.recv), sender.recv()
                samples[name].append((read - stamp) * 1000)
                await asyncio.sleep(0.002)
        for sender, watcher in pipes.values():
            sender.send(None)
            watcher.send(None)
        bare.send(None)
        await listener.close()
        for process in processes:
            process.join(30)
        return samples
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="a checkout of the other revision")
    parser.add_argument("--messages", type=int, default=300)
    args = parser.parse_args()
    base = str(Path(args.base).resolve())
    if not (Path(base) / "app" / "engine").is_dir():
        print(f"{base} is no teamdeck checkout (no app/engine)")
        return 1
    before = os.getloadavg()[0]
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-turns-"))
    folder.chmod(0o711)  # run as root, the server runs as postgres: it must pass through
    try:
        samples = asyncio.run(_run(base, args.messages, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    bare = statistics.median(samples["bare"])
    for name, values in samples.items():
        p50 = statistics.median(values)
        print(f"{name:<5} delivery p50 {p50:6.2f} ms  / bare {p50 / bare:5.2f}")
    gap = statistics.median(samples["this"]) - statistics.median(samples["base"])
    print(f"this - base: {gap:+.2f} ms; load {before:.2f} before, {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

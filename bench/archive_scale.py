"""The archive at scale: a run of 180,000 events (100,000 messages, 40,000 transcript entries,
40,000 model calls) recorded, shown, exported and replayed, each row against a baseline
measured in the same run.

    .venv/bin/python bench/archive_scale.py [--quick] [--json]

* recording: the events go through the real recorder and writer thread (``start_run``,
  ``on_event``, ``close``, which returns once everything is committed), events/s from the first
  event to the end of ``close``. Baseline: the same number of rows inserted into the same
  schema with one ``executemany`` (SQLite's floor). Target >= 10,000 events/s.
* ``teamdeck history show RUN --json`` and ``history export RUN``: peak RSS of the command.
  Baseline: a bare interpreter that imports sqlite3. Target <= 100 MB.
* ``teamdeck history show RUN``: time from starting the command to its first timeline line,
  and to its end. Baseline: ``teamdeck history`` (the run list) as a command. Target <= 1 s.
* replay open: ``Replay.load`` plus the first frame's data (the state at the end, the feed,
  a transcript), in a fresh process: time (its imports apart) and peak RSS. ``Replay.load``
  reads the run's index as the recorder stored it while writing the run (``replay_segments``)
  and walks only the events after it. Baselines: reading the run's rows with a plain SELECT;
  the same open once the stored index is deleted (a walk over the whole run, as an archive
  from before schema 4 opens); a bare interpreter that imports sqlite3. Targets <= 1 s,
  <= 150 MB.

``--quick``: a tenth of the run (18,000 events). Exit status 1 if a target is missed (the
absolute targets assume a quiet machine: the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.archive import Recorder, connect, start_run  # noqa: E402
from app.core import Home  # noqa: E402
from app.runtime.events import (  # noqa: E402
    MessageSent,
    StatusChanged,
    TranscriptEntry,
    UsageChanged,
)

AGENTS = [f"worker-{i}" for i in range(1, 9)]


def run_events(messages: int, entries: int) -> list[Any]:
    """The runtime's events of a long run: every agent starts, then messages, with a transcript
    entry (an assistant line or a tool call) and its model call between them."""
    rng = random.Random(1)
    events: list[Any] = [StatusChanged(a, "running") for a in ["team-lead", *AGENTS]]
    usage = dict.fromkeys(AGENTS, 0)
    written = 0
    for n in range(1, messages + 1):
        agent = AGENTS[n % len(AGENTS)]
        text = (
            f"Task #{n % 500} done by {agent}: found {rng.randint(1, 99)} files in"
            f" src/module_{n % 37}/ and summarized them ({n})"
        )
        stamp = f"2026-11-26T10:{n:08d}Z"
        events.append(
            MessageSent("big", agent, "team-lead", text, f"task {n % 500} done", None, stamp)
        )
        while written < entries and written * messages < n * entries:
            written += 1
            worker = AGENTS[written % len(AGENTS)]
            if written % 2:
                line = f"Working on step {written}: reading the files for task {written % 500}."
                events.append(TranscriptEntry(worker, "assistant", line, {}))
            else:
                path = f"src/module_{written % 37}/file_{written}.py"
                data = {
                    "tool": "read_file",
                    "tool_use_id": f"tu_{written}",
                    "input": {"path": path},
                }
                events.append(TranscriptEntry(worker, "tool_call", "", data))
            usage[worker] += 1
            k = usage[worker]
            events.append(UsageChanged(worker, k * 900, k * 120, k * 3000, k * 200, k, k))
    return events


def build_run(home: Home, messages: int, entries: int) -> tuple[int, int, float]:
    """Record the run through the real recorder; ``(run id, events, seconds)``, the seconds
    running from the first event to the end of ``close`` (everything committed)."""
    events = run_events(messages, entries)
    recorder = start_run(home, None, source="headless", goal="a very long run")
    assert isinstance(recorder, Recorder)
    recorder.model = "claude-sonnet-5-5"
    recorder.team = "big"
    t0 = time.perf_counter()
    for event in events:
        recorder.on_event(event)
    recorder.close("finished", "bench")
    return int(recorder.run_id), len(events), time.perf_counter() - t0


def insert_floor(root: Path, count: int) -> float:
    """Seconds to insert ``count`` message-like rows with one executemany (same schema)."""
    conn = connect(root / "floor.db")
    conn.execute("INSERT INTO runs (source, started_at) VALUES ('bench', 0)")
    text = "Task #12 done by worker-3: found 12 files in src/module_3/ and summarized them (1)"
    rows = [
        (1, float(n), "message", "worker-3", "team-lead", "message", text, 80) for n in range(count)
    ]
    t0 = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO events (run_id, at, kind, agent, target, frame, text, size)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.execute("COMMIT")
    took = time.perf_counter() - t0
    conn.close()
    return took


#: Runs a command and prints its peak RSS in KiB on stderr. A small process of its own: a
#: child forked from this one (which holds the run's events) would count its pages too.
RSS_WRAPPER = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]);"
    " print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr);"
    " sys.exit(code)"
)


def measure(argv: list[str], first: str | None = None) -> dict[str, Any]:
    """Run ``argv``: wall time, peak RSS (MB), its output's last line and, with ``first``, the
    time to the first line of its output starting with ``first``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", RSS_WRAPPER, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first_at = None
    last = b""
    for line in proc.stdout:
        last = line
        if first is not None and first_at is None and line.startswith(first.encode()):
            first_at = time.perf_counter() - t0
    errors = proc.stderr.read().decode()
    took = time.perf_counter() - t0
    if proc.wait() != 0:
        raise SystemExit(f"{argv} failed: {errors}")
    rss = int(errors.split()[-1]) / 1024
    return {"wall": took, "rss": rss, "first": first_at or took, "out": last.decode()}


REPLAY_OPEN = """
import sys, time
t0 = time.perf_counter()
import sqlite3
from app.archive.replay import Replay
imported = time.perf_counter() - t0
t0 = time.perf_counter()
conn = sqlite3.connect(sys.argv[1] + "?mode=ro", uri=True)
replay = Replay.load(conn, sys.argv[2])
conn.close()
state = replay.state_at(len(replay))
feed = replay.feed(len(replay))
entries = replay.transcript("worker-3", len(replay))
assert state.position == len(replay) and feed and entries
print(time.perf_counter() - t0, len(replay), imported)
"""

SELECT_ROWS = """
import sys, time, sqlite3
t0 = time.perf_counter()
conn = sqlite3.connect(sys.argv[1] + "?mode=ro", uri=True)
rows = conn.execute("SELECT id, at, kind, agent, target, frame, text, size, data FROM events"
                    " WHERE run_id = ?", (int(sys.argv[2]),)).fetchall()
print(time.perf_counter() - t0, len(rows))
"""


def figures(root: Path, messages: int, entries: int) -> list[dict[str, Any]]:
    home = Home(root / "home")
    run_id, count, wrote = build_run(home, messages, entries)
    db = home.root / "history.db"
    conn = connect(db)
    stored = conn.execute("SELECT count(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
    index_bytes = conn.execute(
        "SELECT coalesce(sum(length(ids) + length(times) + length(messages) + length(entries)"
        " + length(state)), 0) FROM replay_segments WHERE run_id = ?",
        (run_id,),
    ).fetchone()[0]
    conn.close()
    db_bytes = sum(p.stat().st_size for p in db.parent.glob("history.db*"))
    if stored != count:
        raise SystemExit(f"recorded {stored:,} of {count:,} events: the writer lost some")
    floor = insert_floor(root, count)
    cli = [sys.executable, "-m", "app.cli.main", "--home", str(home.root)]
    bare = measure([sys.executable, "-c", "import sqlite3"])
    listing = measure([*cli, "history"])
    show_json = measure([*cli, "history", "show", str(run_id), "--json"])
    export = measure([*cli, "history", "export", str(run_id)])
    show = measure([*cli, "history", "show", str(run_id)], first="  +")
    opened = measure([sys.executable, "-c", REPLAY_OPEN, db.as_uri(), str(run_id)])
    took, _, imports = opened["out"].split()
    replay_open, replay_rss = float(took), opened["rss"]
    selected = measure([sys.executable, "-c", SELECT_ROWS, db.as_uri(), str(run_id)])
    select_s, select_rss = float(selected["out"].split()[0]), selected["rss"]
    conn = connect(db)
    conn.execute("DELETE FROM replay_segments WHERE run_id = ?", (run_id,))
    conn.close()
    walked = measure([sys.executable, "-c", REPLAY_OPEN, db.as_uri(), str(run_id)])
    walk_s, walk_rss = float(walked["out"].split()[0]), walked["rss"]
    size = f"{count:,} events"

    def row(
        measure: str, value: float, unit: str, baseline: str, target: str, ok: bool
    ) -> dict[str, Any]:
        return {
            "measure": measure,
            "value": round(value, 3),
            "unit": unit,
            "baseline": baseline,
            "target": target,
            "met": ok,
        }

    return [
        row(
            f"recording {size} (recorder + writer, to the end of close)",
            count / wrote,
            "events/s",
            f"one executemany of as many rows: {count / floor:,.0f} events/s (the archive:"
            f" {db_bytes / 1e6:.0f} MB, the replay's index {index_bytes / 1e6:.1f} MB of it)",
            ">= 10,000 events/s",
            count / wrote >= 10_000,
        ),
        row(
            "history show RUN --json, peak RSS",
            show_json["rss"],
            "MB",
            f"bare interpreter importing sqlite3: {bare['rss']:.0f} MB"
            f" (the command took {show_json['wall']:.2f} s)",
            "<= 100 MB",
            show_json["rss"] <= 100,
        ),
        row(
            "history export RUN, peak RSS",
            export["rss"],
            "MB",
            f"bare interpreter importing sqlite3: {bare['rss']:.0f} MB"
            f" (the command took {export['wall']:.2f} s)",
            "<= 100 MB",
            export["rss"] <= 100,
        ),
        row(
            "history show RUN, start to the first timeline line",
            show["first"],
            "s",
            f"`teamdeck history` as a command: {listing['wall']:.2f} s; the whole timeline"
            f" {show['wall']:.2f} s, peak {show['rss']:.0f} MB",
            "<= 1 s",
            show["first"] <= 1.0,
        ),
        row(
            "replay open (load, state at the end, feed, transcript), fresh process",
            replay_open,
            "s",
            f"a plain SELECT of the run's rows: {select_s:.2f} s; without the stored index (a"
            f" walk over the run): {walk_s:.2f} s, {walk_rss:.0f} MB (importing the replay"
            f" before it: {float(imports):.2f} s)",
            "<= 1 s",
            replay_open <= 1.0,
        ),
        row(
            "replay open, peak RSS",
            replay_rss,
            "MB",
            f"bare interpreter importing sqlite3: {bare['rss']:.0f} MB; the plain SELECT:"
            f" {select_rss:.0f} MB",
            "<= 150 MB",
            replay_rss <= 150,
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the run")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    messages, entries = (10_000, 4_000) if args.quick else (100_000, 40_000)
    load = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="teamdeck-archive-scale-"))
    try:
        rows = figures(root, messages, entries)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "load": load, "rows": rows}, indent=2))
    else:
        print(f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in load)}")
        print("| measure | teamdeck | baseline in the same run | target | met |")
        print("|---|---|---|---|---|")
        for r in rows:
            value = f"{r['value']:,.0f} {r['unit']}" if r["unit"] != "s" else f"{r['value']:.2f} s"
            met = "yes" if r["met"] else "NO"
            print(f"| {r['measure']} | {value} | {r['baseline']} | {r['target']} | {met} |")
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

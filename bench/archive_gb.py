"""A 1 GB archive: what the person does with it, against a small archive in the same run.

    .venv/bin/python bench/archive_gb.py [--mb N] [--quick] [--json]

The archive is made quickly: one run of 18,000 events recorded through the real recorder (its
replay index included, as every run now has), and before it as many older runs as make the file
``--mb`` (1,024) MB, bulk-inserted into the same schema (message, transcript and model-call
events with realistic text and data; ~40,000 events a run). The small archive holds the
recorded run alone. In each, as the person would:

* ``teamdeck history`` (the run list): wall time and peak RSS;
* ``teamdeck history show RUN`` (the recorded run): time to the first timeline line, peak RSS;
* the replay's open of that run (``Replay.load``, the state at the end, the feed, a transcript),
  in a fresh process: time and peak RSS;
* the dashboard's start (``teamdeck`` in a 120x40 pseudo-terminal, which opens the archive to
  record its run): seconds to the first frame and the process's peak RSS.

``--quick``: a 100 MB archive. Also used by ``bench/bounds.py`` (its ``archive`` row).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from archive_scale import REPLAY_OPEN, build_run, measure  # noqa: E402
from startup import command_env, first_frame, teamdeck  # noqa: E402

from app.archive import connect  # noqa: E402
from app.core import Home  # noqa: E402

#: Events per older run, and of the recorded run (its messages, transcript entries).
RUN_EVENTS = 40_000
RECORDED = (10_000, 4_000)
AGENTS = ["team-lead", *(f"worker-{i}" for i in range(1, 9))]


def _filler_rows(run_id: int, first_id: int, start: float, rng: random.Random) -> list[tuple]:
    rows: list[tuple] = []
    at = start
    for n in range(RUN_EVENTS):
        at += rng.random()
        agent = rng.choice(AGENTS)
        kind = ("message", "transcript", "usage")[n % 3]
        if kind == "message":
            text = (
                f"Task #{n % 300} done: found {n % 40} files in src/module_{n % 17}/ and "
                "summarized what each does; the parser's error paths need a second look. " * 2
            )
            data = json.dumps({"summary": f"Task #{n % 300} done"})
            row = (kind, agent, "team-lead", "message", text, len(text), data)
        elif kind == "transcript":
            text = f"Reading src/module_{n % 17}/part_{n % 50}.py\n" + "    line of code\n" * 60
            data = json.dumps({"tool": "Read", "input": {"file_path": f"src/m{n % 17}.py"}})
            row = (kind, agent, None, "tool_result", text, len(text), data)
        else:
            data = json.dumps({"input": 12_000 + n, "output": 800, "cache_read": 9_000})
            row = (kind, agent, None, "claude-sonnet-5-5", "", 0, data)
        rows.append((first_id + n, run_id, at, *row))
    return rows


def fill(db: Path, target_mb: int) -> tuple[int, float]:
    """Older runs bulk-inserted until ``db`` is ``target_mb`` MB: ``(runs, seconds)``."""
    connect(db).close()  # the schema, as teamdeck makes it
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    rng = random.Random(28)
    t0 = time.perf_counter()
    runs = 0
    next_id = 1
    while db.stat().st_size < target_mb * 1024 * 1024:
        runs += 1
        start = 1.7e9 + runs * 86_400
        conn.execute(
            "INSERT INTO runs (id, team, goal, source, started_at, ended_at, outcome, events)"
            " VALUES (?, 'big', 'an older run', 'dashboard', ?, ?, 'finished', ?)",
            (runs, start, start + RUN_EVENTS, RUN_EVENTS),
        )
        conn.executemany(
            "INSERT INTO events (id, run_id, at, kind, agent, target, frame, text, size, data)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _filler_rows(runs, next_id, start, rng),
        )
        conn.commit()
        next_id += RUN_EVENTS
    conn.close()
    return runs, time.perf_counter() - t0


def peak_rss_mb(pid: int) -> float:
    """A running process's peak RSS (``VmHWM``) in MB; 0 if it cannot be read."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def dashboard_start(home: Path, settle: float = 0.0, limit: float = 120.0) -> tuple[float, float]:
    """``teamdeck`` on ``home``: (seconds to its first frame, peak RSS in MB by then, or
    ``settle`` seconds later)."""
    peak: list[float] = []
    report = home.parent / "first-frame.txt"
    seconds = first_frame(
        teamdeck(),
        command_env(home),
        report,
        limit,
        lambda pid: peak.append(peak_rss_mb(pid)),
        settle,
    )
    return seconds, peak[0] if peak else 0.0


def person(home: Home, run_id: int) -> dict[str, float]:
    """What the person does with the archive of ``home``."""
    db = home.root / "history.db"
    cli = [sys.executable, "-m", "app.cli.main", "--home", str(home.root)]
    listing = measure([*cli, "history"])
    show = measure([*cli, "history", "show", str(run_id)], first="  +")
    opened = measure([sys.executable, "-c", REPLAY_OPEN, db.as_uri(), str(run_id)])
    frame_s, frame_mb = dashboard_start(home.root)
    return {
        "list_s": listing["wall"],
        "list_mb": listing["rss"],
        "show_first_s": show["first"],
        "show_mb": show["rss"],
        "replay_s": float(opened["out"].split()[0]),
        "replay_mb": opened["rss"],
        "dashboard_s": frame_s,
        "dashboard_mb": frame_mb,
    }


def row_archive(mb: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="teamdeck-archive-gb-"))
    try:
        small, big = Home(root / "small"), Home(root / "big")
        small_run, _, _ = build_run(small, *RECORDED)
        runs, filled = fill(big.root / "history.db", mb)
        big_run, _, _ = build_run(big, *RECORDED)
        size = sum(p.stat().st_size for p in big.root.glob("history.db*")) / 1e6
        base = person(small, small_run)
        got = person(big, big_run)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    keys = ("list", "show", "replay", "dashboard")
    ratio = {k: got[f"{k}_mb"] / base[f"{k}_mb"] for k in keys}

    def cell(f: dict[str, float], k: str) -> str:
        s = f.get(f"{k}_first_s", f.get(f"{k}_s", 0.0))
        return f"{k} {s:.2f} s / {f[f'{k}_mb']:.0f} MB"

    return {
        "row": "archive",
        "measure": f"a {size:,.0f} MB archive ({runs + 1} runs, filled in {filled:.0f} s): the run"
        " list, history show (first line), the replay's open, the dashboard's first frame",
        "value": "; ".join(cell(got, k) for k in keys),
        "baseline": "the recorded run alone: " + "; ".join(cell(base, k) for k in keys),
        "target": "memory and time of each as with a small archive (peak RSS ratio: "
        + ", ".join(f"{k} {ratio[k]:.2f}x" for k in keys)
        + ")",
        "archive_mb": size,
        "big": got,
        "small": base,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--quick", action="store_true", help="a 100 MB archive")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    row = row_archive(100 if args.quick else args.mb)
    if args.json:
        print(json.dumps(row, indent=2, default=str))
        return 0
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}")
    print(f"{row['measure']}\n    {row['value']}\n    baseline: {row['baseline']}")
    print(f"    [{row['target']}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

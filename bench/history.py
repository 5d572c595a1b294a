"""The run archive: its overhead on a team, replay, ``teamdeck history``, search, SIGKILL safety.

    .venv/bin/python bench/history.py [--tasks 60] [--teammates 6] [--rounds 2] [--quick]

Measured, each with its baseline from the same run:

* overhead: bench/team.py's workload (offline team working ``--tasks`` tasks), recorded
  (a recorder on the runtime's events and the watcher, as ``teamdeck run`` does) against
  ``--no-history``, alternating ``--rounds`` times; wall time to the last completion, and the
  longest event-loop stall. Target: <= 5% wall.
* replay of a run with 50,000 messages and 20,000 transcript entries (written through the
  recorder, as a run writes them): open (read the timeline, build the checkpoints, the first
  frame's state and feed) and scrub to 200 random points (state + feed + a transcript), p95.
  Baseline: reading the rows alone. Targets: <= 1 s / <= 100 ms p95.
* ``teamdeck history`` over 1,000 runs, in-process and as a command (interpreter start
  included). Baseline: ``teamdeck team list`` of an empty home. Target: <= 300 ms.
* feed search over 50,000 messages: typing a query one key at a time, each keystroke ->
  filtered list, p95. Baseline: one plain substring scan of the raw texts. Target: <= 100 ms.
  Replay's search over the archived run, and the live dashboard's (``/`` in the leader view
  of bench/ui.py's home: 50 teammates, 50,000 messages), keystroke -> the filtered feed on
  screen (from the key event posted to the app to the screen refresh after the box took it).
  Baseline: the same keys typed into the box when typing filters nothing.
* committed events lost across 40 SIGKILLs of a writing process (the test's procedure): 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ["TEAMDECK_OFFLINE_PACE"] = "0"

from app.archive import Recorder, connect, start_run  # noqa: E402
from app.archive.replay import Replay, Search  # noqa: E402
from app.core import Home  # noqa: E402
from app.runtime.events import (  # noqa: E402
    MessageSent,
    StatusChanged,
    TranscriptEntry,
    UsageChanged,  # noqa: E402
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# ----------------------------------------------------------------------------- overhead


async def overhead(tasks: int, teammates: int, rounds: int) -> dict[str, Any]:
    import team as team_bench  # bench/team.py

    from app.runtime.team.runtime import TeamRuntime

    class RecordedRuntime(TeamRuntime):
        """bench/team.py's runtime with the archive recording it, as ``teamdeck run`` does."""

        async def start(self) -> None:
            self.recorder = start_run(self.home, self, source="headless", goal="bench")
            await super().start()
            self.recorder.watch(self.watcher)

        async def stop(self) -> None:
            await super().stop()
            self.recorder.close("finished")

    walls: dict[str, list[float]] = {"recorded": [], "no-history": []}
    stalls: dict[str, list[float]] = {"recorded": [], "no-history": []}
    for _ in range(rounds):
        for label, runtime_class in (("no-history", TeamRuntime), ("recorded", RecordedRuntime)):
            team_bench.TeamRuntime = runtime_class  # type: ignore[attr-defined]
            result = await team_bench.run_team(label, tasks, tasks, teammates, "policy", 300.0)
            if result.wall_s is None:
                raise SystemExit(f"{label} run did not finish: {result.notes}")
            walls[label].append(result.wall_s)
            stalls[label].extend(result.stalls)
            print(f"  {label}: {result.wall_s:.2f} s", flush=True)
    team_bench.TeamRuntime = TeamRuntime  # type: ignore[attr-defined]
    return {"walls": walls, "stalls": stalls}


# ----------------------------------------------------------------------------- a big run


def record_big_run(home: Home, messages: int, entries: int) -> tuple[int, float]:
    """A run with ``messages`` messages and ``entries`` transcript entries, written through the
    recorder (its writer thread, batched), plus usage, status and task events around them."""
    recorder = start_run(home, None, source="headless", goal="a very long run")
    assert isinstance(recorder, Recorder)
    recorder.model = "claude-sonnet-5-5"
    recorder.team = "big"
    rng = random.Random(1)
    agents = [f"worker-{i}" for i in range(1, 9)]
    t0 = time.perf_counter()
    for agent in ["team-lead", *agents]:
        recorder.on_event(StatusChanged(agent, "running"))
    usage = dict.fromkeys(agents, 0)
    sent = written = 0
    while sent < messages or written < entries:
        agent = rng.choice(agents)
        if sent < messages:
            sent += 1
            text = f"Task #{sent % 500} done by {agent}: found {rng.randint(1, 99)} files ({sent})"
            recorder.on_event(
                MessageSent(
                    "big", agent, "team-lead", text, f"task {sent % 500} done", None, str(sent)
                )
            )
        if written < entries and rng.random() < entries / messages:
            written += 1
            recorder.on_event(
                TranscriptEntry(agent, "assistant", f"Working on step {written}.", {})
            )
            usage[agent] += 1
            n = usage[agent]
            recorder.on_event(UsageChanged(agent, n * 900, n * 120, n * 3000, n * 200, n, n))
    # close() returns once every queued event is committed: the figures below read it all.
    recorder.close("finished", "bench")
    return int(recorder.run_id), time.perf_counter() - t0


def replay_figures(path: Path, run_id: int, points: int = 200) -> dict[str, Any]:
    t0 = time.perf_counter()
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT id, at, kind, agent, target, frame, text, size, data FROM events WHERE run_id = ?",
        (run_id,),
    ).fetchall()
    conn.close()
    read_rows = time.perf_counter() - t0

    t0 = time.perf_counter()
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    replay = Replay.load(conn, str(run_id))
    conn.close()
    state = replay.state_at(0)
    feed = replay.feed(0)
    opened = time.perf_counter() - t0
    assert state.position == 0 and feed == []

    rng = random.Random(2)
    scrubs = []
    for _ in range(points):
        position = rng.randint(0, len(replay))
        t1 = time.perf_counter()
        state = replay.state_at(position)
        replay.feed(position)
        replay.transcript("worker-3", position)
        scrubs.append(time.perf_counter() - t1)
    kinds = {e.kind for e in replay.events}
    return {
        "events": len(replay),
        "messages": len(replay.messages),
        "entries": sum(len(v) for v in replay.by_agent.values()),
        "rows": len(rows),
        "read_rows": read_rows,
        "open": opened,
        "scrub_p50": pct(scrubs, 50),
        "scrub_p95": pct(scrubs, 95),
        "kinds": sorted(kinds),
        "replay": replay,
    }


def search_figures(replay: Replay) -> dict[str, Any]:
    messages = [replay.events[i] for i in replay.messages]
    t0 = time.perf_counter()
    search = Search(messages)
    index = time.perf_counter() - t0
    query = "worker-3 task #42 done"
    per_key = []
    hits = 0
    for n in range(1, len(query) + 1):
        t1 = time.perf_counter()
        hits = len(search.hits(query[:n]))
        per_key.append(time.perf_counter() - t1)
    # Deleting back to nothing (no narrowing shortcut).
    for n in range(len(query) - 1, 0, -3):
        t1 = time.perf_counter()
        search.hits(query[:n])
        per_key.append(time.perf_counter() - t1)
    raw = [e.text for e in messages]
    t0 = time.perf_counter()
    plain = sum("task #42" in t for t in raw)
    baseline = time.perf_counter() - t0
    return {
        "messages": len(messages),
        "index": index,
        "p50": pct(per_key, 50),
        "p95": pct(per_key, 95),
        "hits": hits,
        "baseline": baseline,
        "plain_hits": plain,
    }


async def live_search_figures(root: Path, query: str = "agent-7 progress 12") -> dict[str, Any]:
    """``/`` in the live dashboard over bench/ui.py's home; see the module docstring."""
    import ui as ui_bench  # bench/ui.py
    from textual import events

    from app.dashboard.app import TeamDeckApp
    from app.dashboard.team_source import FilesSource
    from widgets.message_feed import MessageFeed
    from widgets.search_bar import SearchBar

    ui_bench.build(str(root))
    app = TeamDeckApp(Home(root), FilesSource(team=ui_bench.TEAM))
    per_key: list[float] = []
    idle: list[float] = []
    first = 0.0
    async with app.run_test(size=(120, 40)) as pilot:
        feed = app.screen.query_one(MessageFeed)
        await ui_bench.until(lambda: app.loaded and feed.item_count >= ui_bench.MESSAGES)
        await asyncio.sleep(0.5)
        total = feed.item_count
        await pilot.press("slash")
        await ui_bench.until(
            lambda: app.screen.query(SearchBar) and app.screen.query_one(SearchBar).is_open
        )
        box = app.screen.query_one(SearchBar).input
        await asyncio.sleep(1.0)  # the person starts typing (search texts are prepared)

        async def keystroke(key: str, char: str | None) -> float:
            """From the key event to the next screen refresh after the box took it."""
            before = box.value
            t0 = time.perf_counter()
            app.post_message(events.Key(key, char))
            await ui_bench.until(lambda: box.value != before, 0.001)
            drawn = asyncio.Event()
            app.call_after_refresh(drawn.set)
            await drawn.wait()
            return time.perf_counter() - t0

        def keys(text: str) -> list[tuple[str, str | None]]:
            return [("space" if c == " " else c, c) for c in text]

        for key, char in keys(query):
            took = await keystroke(key, char)
            first = first or took
            per_key.append(took)
        hits = feed.item_count
        for _ in range(len(query) // 2):  # deleting: each key widens the search again
            per_key.append(await keystroke("backspace", None))
        # Baseline: the same keys when typing filters nothing (the box alone).
        search = app.screen.search  # type: ignore[attr-defined]
        search.typed = lambda text: None
        await pilot.press("escape", "slash")
        await asyncio.sleep(0.2)
        for key, char in keys(query):
            idle.append(await keystroke(key, char))
    return {
        "messages": total,
        "p50": pct(per_key, 50),
        "p95": pct(per_key, 95),
        "first": first,
        "hits": hits,
        "baseline_p50": pct(idle, 50),
        "baseline_p95": pct(idle, 95),
    }


# ----------------------------------------------------------------------------- history list


def history_figures(root: Path, runs: int = 1000) -> dict[str, Any]:
    home = Home(root / "home")
    path = home.root / "history.db"
    conn = connect(path)
    now = time.time()
    conn.execute("BEGIN")
    for i in range(runs):
        conn.execute(
            "INSERT INTO runs (team, goal, source, model, offline, home, pid, started_at,"
            " ended_at, outcome, reason, agents, messages, tasks_done, events, input_tokens,"
            " output_tokens, cost_usd) VALUES (?, ?, 'headless', 'claude-sonnet-5-5', 0, ?, 0,"
            " ?, ?, 'finished', 'team finished', 4, 120, 12, 900, 50000, 9000, 0.42)",
            (
                f"team-{i}",
                f"goal number {i}: summarize the files",
                str(home.root),
                now - i * 60,
                now - i * 60 + 50,
            ),
        )
    conn.execute("COMMIT")
    conn.close()

    from app.cli import main as cli

    env = dict(os.environ, TEAMDECK_HOME=str(home.root), PYTHONPATH=str(ROOT))
    inproc, command, base_inproc, base_command = [], [], [], []
    empty = root / "empty"
    empty.mkdir()
    for _ in range(7):
        for target, times, argv in (
            (home.root, inproc, ["history"]),
            (empty, base_inproc, ["team", "list"]),
        ):
            out = io.StringIO()
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(out):
                code = cli.main(["--home", str(target), *argv])
            times.append(time.perf_counter() - t0)
            assert code == 0
    lines = len(out.getvalue().splitlines())
    for _ in range(5):
        for target, times, argv in (
            (home.root, command, ["history"]),
            (empty, base_command, ["team", "list"]),
        ):
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "app.cli.main", "--home", str(target), *argv],
                env=env,
                capture_output=True,
                check=True,
            )
            times.append(time.perf_counter() - t0)
    return {
        "runs": runs,
        "inproc": statistics.median(inproc),
        "command": statistics.median(command),
        "base_inproc": statistics.median(base_inproc),
        "base_command": statistics.median(base_command),
        "listed": lines,
    }


# ----------------------------------------------------------------------------- SIGKILL


def sigkill_figures(root: Path, kills: int = 40) -> dict[str, Any]:
    from tests.archive.test_archive_safety import WRITER

    home_root = root / "kill-home"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rng = random.Random(8)
    lost = committed = 0
    for _ in range(kills):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home_root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        last = 0
        for _ in range(rng.randint(1, 30)):
            line = proc.stdout.readline()
            if not line:
                break
            last = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        conn = connect(home_root / "history.db")
        run_id = conn.execute("SELECT max(id) FROM runs").fetchone()[0]
        texts = {t for (t,) in conn.execute("SELECT text FROM events WHERE run_id = ?", (run_id,))}
        conn.close()
        committed += last
        lost += sum(f"event {n}" not in texts for n in range(1, last + 1))
    conn = connect(home_root / "history.db")
    ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
    conn.close()
    return {"kills": kills, "committed": committed, "lost": lost, "integrity": ok}


# ----------------------------------------------------------------------------- report


def row(measure: str, target: str, measured: str, baseline: str, ok: bool | None) -> str:
    verdict = "-" if ok is None else ("PASS" if ok else "FAIL")
    return f"| {measure} | {target} | {measured} | {baseline} | {verdict} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--teammates", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="skip the team runs and the kills")
    args = parser.parse_args()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load} (other work on the machine skews figures)")
    root = Path(tempfile.mkdtemp(prefix="teamdeck-history-bench-"))
    rows: list[str] = []
    failed = False
    try:
        if not args.quick:
            print("overhead: bench/team.py's workload, recorded and not", flush=True)
            over = asyncio.run(overhead(args.tasks, args.teammates, args.rounds))
            rec = statistics.median(over["walls"]["recorded"])
            base = statistics.median(over["walls"]["no-history"])
            extra = (rec - base) / base * 100
            ok = extra <= 5.0
            failed |= not ok
            rows.append(
                row(
                    f"archive overhead, {args.tasks} tasks / {args.teammates} teammates"
                    f" (median of {args.rounds})",
                    "<= 5% wall",
                    f"{rec:.2f} s ({extra:+.1f}%)",
                    f"{base:.2f} s --no-history",
                    ok,
                )
            )
            rows.append(
                row(
                    "event-loop stall during the runs (10 ms ticker), p99",
                    "-",
                    f"{pct(over['stalls']['recorded'], 99):.1f} ms",
                    f"{pct(over['stalls']['no-history'], 99):.1f} ms --no-history",
                    None,
                )
            )

        print(
            f"writing a run with {args.messages:,} messages and {args.entries:,} transcript"
            " entries",
            flush=True,
        )
        home = Home(root / "big")
        run_id, wrote = record_big_run(home, args.messages, args.entries)
        rep = replay_figures(home.root / "history.db", run_id)
        if rep["messages"] != args.messages:
            raise SystemExit(f"the archive holds {rep['messages']:,} of {args.messages:,} messages")
        rows.append(
            row(
                f"recording {rep['events']:,} events through the writer thread",
                "-",
                f"{wrote:.2f} s ({rep['events'] / wrote:,.0f} events/s)",
                "-",
                None,
            )
        )
        ok = rep["open"] <= 1.0
        failed |= not ok
        rows.append(
            row(
                f"replay open to first frame ({rep['messages']:,} messages,"
                f" {rep['entries']:,} transcript entries)",
                "<= 1 s",
                f"{rep['open']:.2f} s",
                f"{rep['read_rows']:.2f} s reading the rows",
                ok,
            )
        )
        ok = rep["scrub_p95"] <= 0.1
        failed |= not ok
        rows.append(
            row(
                "replay scrub to any point (state, feed, transcript), 200 points",
                "<= 100 ms p95",
                f"p95 {ms(rep['scrub_p95'])} (p50 {ms(rep['scrub_p50'])})",
                "-",
                ok,
            )
        )
        found = search_figures(rep["replay"])
        ok = found["p95"] <= 0.1
        failed |= not ok
        rows.append(
            row(
                f"feed search over {found['messages']:,} messages, keystroke -> filtered",
                "<= 100 ms p95",
                f"p95 {ms(found['p95'])} (p50 {ms(found['p50'])}; index {ms(found['index'])})",
                f"{ms(found['baseline'])} one raw substring scan",
                ok,
            )
        )
        print("the live dashboard's feed search over 50,000 messages", flush=True)
        live = asyncio.run(live_search_figures(root / "live"))
        ok = live["p95"] <= 0.1
        failed |= not ok
        rows.append(
            row(
                f"live feed search (`/`) over {live['messages']:,} messages, keystroke ->"
                " filtered feed on screen",
                "<= 100 ms p95",
                f"p95 {ms(live['p95'])} (p50 {ms(live['p50'])}; first key {ms(live['first'])})",
                f"p95 {ms(live['baseline_p95'])} (p50 {ms(live['baseline_p50'])}) the same keys"
                " in the box, filtering nothing",
                ok,
            )
        )
        hist = history_figures(root)
        ok = hist["command"] <= 0.3 or hist["inproc"] <= 0.3
        failed |= hist["inproc"] > 0.3
        rows.append(
            row(
                f"`teamdeck history` over {hist['runs']:,} runs (in-process / as a command)",
                "<= 300 ms",
                f"{ms(hist['inproc'])} / {ms(hist['command'])}",
                f"{ms(hist['base_inproc'])} / {ms(hist['base_command'])} `team list`, empty home",
                hist["inproc"] <= 0.3,
            )
        )
        if not args.quick:
            print("40 SIGKILLs of a writing process", flush=True)
            kill = sigkill_figures(root)
            ok = kill["lost"] == 0 and kill["integrity"] == "ok"
            failed |= not ok
            rows.append(
                row(
                    f"committed events lost across {kill['kills']} SIGKILLs",
                    "0",
                    f"{kill['lost']} of {kill['committed']:,} (integrity {kill['integrity']})",
                    "-",
                    ok,
                )
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print()
    print("| measure | target | measured | baseline | verdict |")
    print("|---|---|---|---|---|")
    for line in rows:
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

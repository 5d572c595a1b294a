"""Inbox append throughput and read latency: teamdeck vs Claude Code's algorithm, same run.

    .venv/bin/python bench/mailbox.py [--quick] [--rounds N] [--dir PATH]

For inboxes of 0, 1,000 and 10,000 messages and 1 or 8 writer processes, it measures

* append throughput (appends/s, all writers together, from the first timed append to the last;
  each writer process makes one untimed warm-up append first, as a long-lived writer would
  have), and
* read latency (median ms to read the whole inbox into messages),

for teamdeck (``Mailbox.append``: lock, splice, atomic write with fsync of file and directory)
and for a baseline that is Claude Code's ``writeToMailbox`` in Python: the same lock, read the
whole file, ``json.loads``, append, ``json.dumps(arr, indent=2)``, write the whole file in place
with no fsync (as ``fs.writeFileSync``). Its read is ``readMailbox``: read + ``json.loads``.

Targets (issue "Foundation"): teamdeck >= 3x the baseline's throughput at 1,000 messages and
>= 5x at 10,000, while keeping its atomic, fsynced, crash-safe write.

Each cell alternates the two implementations ``--rounds`` times and keeps each one's best, and
the fsync latency of the disk is printed first and last: teamdeck's two fsyncs per append are
its floor, so on a disk other jobs are hammering its lead shrinks (``--dir /dev/shm`` shows the
CPU side alone, where fsync is free). Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core import Home, InboxMessage, TeamMember  # noqa: E402
from app.core.files import dumps_array  # noqa: E402

TEAM = "bench"
AGENT = "worker"
SIZES = (0, 1_000, 10_000)
WRITERS = (1, 8)
TARGETS = {1_000: 3.0, 10_000: 5.0}
# Appends per cell (all writers together), chosen so the slowest cell stays around 2 s.
APPENDS = {0: 320, 1_000: 160, 10_000: 48}


def message(i: int, sender: str = "team-lead") -> InboxMessage:
    return InboxMessage(
        sender=sender,
        text=f"Please review the auth module and report what you find (message {i}).",
        summary="auth review",
        color="cyan",
    )


# ----------------------------------------------------------------------------- implementations


def teamdeck_append(home: Home, i: int, sender: str) -> None:
    home.mailbox(TEAM).append(AGENT, message(i, sender))


def baseline_append(home: Home, i: int, sender: str) -> None:
    """Claude Code's writeToMailbox: lock, read all, JSON.parse, push, stringify, write in place."""
    path = home.mailbox(TEAM).path(AGENT)
    if not path.exists():
        path.write_text("[]", "utf-8")
    with home.lock(path):
        messages = json.loads(path.read_text("utf-8"))
        messages.append({**message(i, sender).to_json_dict(), "read": False})
        with open(path, "w", encoding="utf-8") as fh:  # writeFileSync: truncate + write, no fsync
            fh.write(json.dumps(messages, indent=2, ensure_ascii=False))


def teamdeck_read(home: Home) -> int:
    return len(home.mailbox(TEAM).read(AGENT))


def baseline_read(home: Home) -> int:
    """Claude Code's readMailbox: readFileSync + JSON.parse."""
    path = home.mailbox(TEAM).path(AGENT)
    return len(json.loads(path.read_text("utf-8")))


IMPLS: dict[str, tuple[Callable[[Home, int, str], None], Callable[[Home], int]]] = {
    "baseline": (baseline_append, baseline_read),
    "teamdeck": (teamdeck_append, teamdeck_read),
}


# ----------------------------------------------------------------------------- measurement


def make_home(root: Path, size: int) -> Home:
    home = Home(root)
    home.teams.create(TEAM, description="bench")
    home.teams.add_member(TEAM, TeamMember(agent_id="", name=AGENT))
    path = home.mailbox(TEAM).path(AGENT)
    entries = [message(i).to_json_dict() for i in range(size)]
    path.write_text(dumps_array(entries), "utf-8")  # as Claude Code would have left it
    return home


def _writer(
    impl: str,
    root: str,
    count: int,
    wid: int,
    ready: mp.Queue,  # type: ignore[type-arg]
    start: mp.Event,  # type: ignore[valid-type]
    out: mp.Queue,  # type: ignore[type-arg]
) -> None:
    append = IMPLS[impl][0]
    home = Home(root)
    append(home, -1, f"writer-{wid}")  # warm-up, untimed: a long-lived writer's steady state
    ready.put(wid)
    start.wait()
    t0 = time.perf_counter()
    for i in range(count):
        append(home, i, f"writer-{wid}")
    out.put((t0, time.perf_counter()))


def throughput(impl: str, root: Path, writers: int, total: int) -> float:
    ctx = mp.get_context("fork")
    ready: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    start = ctx.Event()
    out: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    per = total // writers
    procs = [
        ctx.Process(target=_writer, args=(impl, str(root), per, w, ready, start, out))
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    for _ in procs:  # every writer has done its warm-up append and waits at the start line
        ready.get(timeout=300)
    start.set()
    spans = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"{impl} writer failed with exit code {p.exitcode}")
    elapsed = max(e for _, e in spans) - min(s for s, _ in spans)
    return per * writers / elapsed


def read_latency(impl: str, home: Home, size: int) -> float:
    read = IMPLS[impl][1]
    repeats = 30 if size < 10_000 else 10
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = read(home)
        samples.append(time.perf_counter() - t0)
        assert n == size, (impl, n, size)
    return statistics.median(samples) * 1000


def verify(home: Home, expected: int) -> None:
    """Every append landed (both implementations are lossless under their lock)."""
    got = len(home.mailbox(TEAM).read(AGENT))
    if got != expected:
        raise SystemExit(f"lost messages: expected {expected}, found {got}")


def fsync_latency(directory: Path, samples: int = 20) -> float:
    """Median ms of one small write + fsync here: what a busy shared disk costs right now."""
    probe = directory / ".fsync-probe"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT, 0o600)
    times = []
    try:
        for _ in range(samples):
            os.write(fd, b"x" * 512)
            t0 = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        probe.unlink()
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the appends")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="alternate the two implementations this many times per cell and keep each one's"
        " best (the machine may be busy with other work)",
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--writers", type=int, nargs="*", default=list(WRITERS))
    parser.add_argument("--dir", help="where to make the bench homes (default: a temp dir)")
    args = parser.parse_args()
    scale = 4 if args.quick else 1
    base = Path(tempfile.mkdtemp(prefix="teamdeck-bench-", dir=args.dir))
    print(f"bench/mailbox.py  python {sys.version.split()[0]}  cpus {os.cpu_count()}  dir {base}")
    print(f"fsync of a small file here: {fsync_latency(base):.2f} ms (median)")
    print(
        "throughput = appends/s over all writers; read = median ms to read the whole inbox;"
        f" best of {args.rounds} alternating rounds\n"
    )
    header = (
        f"{'messages':>8} {'writers':>7} | {'baseline/s':>10} {'teamdeck/s':>10} {'speedup':>8}"
        f" | {'base read ms':>12} {'td read ms':>10} | target"
    )
    print(header)
    print("-" * len(header))
    failures = []
    started = time.perf_counter()
    try:
        for size in args.sizes:
            for writers in args.writers:
                total = max(APPENDS.get(size, 100) // scale, writers * 2)
                total -= total % writers
                rates = dict.fromkeys(IMPLS, 0.0)
                reads = dict.fromkeys(IMPLS, float("inf"))
                for _ in range(max(1, args.rounds)):
                    for impl in IMPLS:
                        root = base / f"{impl}-{size}-{writers}"
                        home = make_home(root, size)
                        reads[impl] = min(reads[impl], read_latency(impl, home, size))
                        # Start each run with no dirty pages: the baseline never fsyncs, and
                        # its unwritten data would otherwise be flushed by (and billed to)
                        # the next run's fsyncs -- ext4's ordered mode writes it with them.
                        os.sync()
                        rates[impl] = max(rates[impl], throughput(impl, root, writers, total))
                        verify(home, size + total + writers)  # + the warm-ups
                        shutil.rmtree(root)
                ratio = rates["teamdeck"] / rates["baseline"]
                target = TARGETS.get(size)
                verdict = ""
                if target is not None:
                    ok = ratio >= target
                    verdict = f">= {target:g}x {'ok' if ok else 'MISSED'}"
                    if not ok:
                        failures.append((size, writers, ratio, target))
                slow, fast = rates["baseline"], rates["teamdeck"]
                print(
                    f"{size:>8} {writers:>7} | {slow:>10.1f} {fast:>10.1f} {ratio:>7.1f}x"
                    f" | {reads['baseline']:>12.2f} {reads['teamdeck']:>10.2f} | {verdict}",
                    flush=True,
                )
        fsync_after = fsync_latency(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(
        f"\n{time.perf_counter() - started:.1f} s; teamdeck appends are atomic + fsynced"
        f" (fsync at the end: {fsync_after:.2f} ms)."
    )
    if failures:
        for size, writers, ratio, target in failures:
            print(f"MISSED: {size} messages, {writers} writer(s): {ratio:.1f}x < {target:g}x")
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

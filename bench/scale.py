"""The core at scale: inbox reads, read flags, appends and the task list, each against its floor.

    .venv/bin/python bench/scale.py [--quick] [--json] [--rounds N] [--dir PATH]

Every row is a ratio: teamdeck's operation over a baseline measured in the same run, on the
same file, alternating the two and keeping each one's median (the machine is shared, so the
absolute times are context only). Curves at 1k / 10k / 100k messages and 100 / 1k / 10k tasks
(``--quick``: 1k / 10k messages, 100 / 1k tasks, fewer samples).

Inbox rows (issue 21). The inbox holds ``N`` messages like the runtime's, all read but the last
ten (a long-lived inbox: its history read, a few new):

* ``read`` / ``unread``, cold (a process that has never seen the file: the per-process caches
  emptied) and cached (the same file read again), against ``json.loads`` of the file's bytes
  (the bytes read in both). Target <= 1.3x.
* ``read()`` cold with every message then looked at (no target: context). ``read()`` hands
  out a sequence that builds each ``InboxMessage`` on first access, so the rows above time
  the decode and validation; this one adds building all ``N`` models.
* ``mark_read`` of one unread message, after the ``unread()`` that found it (as an agent does),
  against the floor of writing the resulting bytes: temp file, write, fsync, rename, fsync of
  the folder (the least a crash-safe replace costs). Target <= 1.3x.
* a cold ``append`` (a process that has not seen the file) against the same floor for the
  bytes it leaves. Target <= 2x at 10k.

Task rows. A board of ``N`` pending tasks:

* ``claim_next`` (a fresh agent each time, so the busy check passes) against ``claim(id)`` of
  a given pending task. Target <= 3x at 1k and 10k tasks.
* ``create`` against the floor of one fsynced write of the new task's bytes (as above). Target
  <= 2x.
* ``list`` against reading every task file and ``json.loads`` of each. Target <= 1.5x.

Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core import Home, InboxMessage, TeamMember, inbox_cache  # noqa: E402
from app.core import mailbox as mailbox_module  # noqa: E402
from app.core.files import dumps_array  # noqa: E402

TEAM = "bench"
AGENT = "worker"
UNREAD = 10
MESSAGES = (1_000, 10_000, 100_000)
TASKS = (100, 1_000, 10_000)


@dataclass
class Row:
    name: str
    size: int
    value_ms: float
    baseline_ms: float
    baseline: str
    target: float | None

    @property
    def ratio(self) -> float:
        return self.value_ms / self.baseline_ms if self.baseline_ms else float("inf")

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target


# ----------------------------------------------------------------------------- helpers


def floor_write(path: Path, data: bytes) -> None:
    """The least a crash-safe replace costs: temp file, write, fsync, rename, fsync the folder."""
    tmp = path.with_name(f".{path.name}.floor")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def forget_inboxes() -> None:
    """Empty this process's inbox caches: what a process that never saw the file has."""
    inbox_cache.parsed = inbox_cache.ParsedInboxes()
    with mailbox_module._known_lock:
        mailbox_module._known.clear()


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def compare(
    samples: int,
    ours: Callable[[], float],
    base: Callable[[], float],
) -> tuple[float, float]:
    """Medians of ``samples`` alternating runs of each (each callable returns its own ms),
    taking turns at going first (a write's cost depends on what the disk did just before)."""
    a, b = [], []
    for i in range(samples):
        if i % 2:
            b.append(base())
            a.append(ours())
        else:
            a.append(ours())
            b.append(base())
    return statistics.median(a), statistics.median(b)


def message(i: int) -> dict[str, object]:
    entry = InboxMessage(
        sender="team-lead",
        text=f"Please review the auth module and report what you find (message {i}).",
        summary="auth review",
        color="cyan",
    ).to_json_dict()
    return entry


def inbox_bytes(size: int) -> bytes:
    entries = [{**message(i), "read": i < size - UNREAD} for i in range(size)]
    return dumps_array(entries).encode()


# ----------------------------------------------------------------------------- inbox rows


def inbox_rows(base: Path, size: int, samples: int) -> list[Row]:
    home = Home(base / f"inbox-{size}")
    home.teams.create(TEAM, description="bench")
    home.teams.add_member(TEAM, TeamMember(agent_id="", name=AGENT))
    box = home.mailbox(TEAM)
    path = box.path(AGENT)
    fixture = inbox_bytes(size)
    path.write_bytes(fixture)  # as Claude Code would have left it
    rows = []

    def loads() -> float:
        return timed(lambda: json.loads(path.read_bytes()))

    def cold(op: Callable[[], object]) -> Callable[[], float]:
        def run() -> float:
            forget_inboxes()
            return timed(op)

        return run

    def warm(op: Callable[[], object]) -> Callable[[], float]:
        op()
        return lambda: timed(op)

    base_name = "json.loads of the file"
    for name, op in (("read", lambda: box.read(AGENT)), ("unread", lambda: box.unread(AGENT))):
        value, baseline = compare(samples, cold(op), loads)
        rows.append(Row(f"{name}() cold", size, value, baseline, base_name, 1.3))
        value, baseline = compare(samples, warm(op), loads)
        rows.append(Row(f"{name}() cached", size, value, baseline, base_name, 1.3))
    value, baseline = compare(samples, cold(lambda: list(box.read(AGENT))), loads)
    rows.append(Row("read() all built", size, value, baseline, base_name, None))

    # mark_read: each sample starts from the fixture, finds the unread (untimed) and marks one.
    def mark() -> float:
        floor_write(path, fixture)  # durable, as the floor's own starting point is
        forget_inboxes()
        unread = box.unread(AGENT)
        return timed(lambda: box.mark_read(AGENT, unread[0][0]))

    marked = box_result_bytes(path)

    def mark_floor() -> float:  # from the same start: the fixture on disk, just read
        floor_write(path, fixture)
        path.read_bytes()
        return timed(lambda: floor_write(path, marked))

    mark_samples = max(3, samples // 2)
    value, baseline = compare(mark_samples, mark, mark_floor)
    rows.append(Row("mark_read(1)", size, value, baseline, "write+fsync+rename", 1.3))

    # A cold append: a process that has not seen the file.
    def append() -> float:
        floor_write(path, fixture)
        forget_inboxes()
        return timed(lambda: box.append(AGENT, InboxMessage(sender="lead", text="next")))

    appended = path.read_bytes()

    def append_floor() -> float:
        floor_write(path, fixture)
        return timed(lambda: floor_write(path, appended))

    value, baseline = compare(mark_samples, append, append_floor)
    target = 2.0 if size == 10_000 else None
    rows.append(Row("append() cold", size, value, baseline, "write+fsync+rename", target))
    shutil.rmtree(home.root)
    return rows


def box_result_bytes(path: Path) -> bytes:
    """The bytes ``mark_read`` leaves (made once, outside the timing)."""
    data = path.read_bytes()
    entries = json.loads(data)
    first = next(i for i, e in enumerate(entries) if not e["read"])
    entries[first]["read"] = True
    return dumps_array(entries).encode()


# ----------------------------------------------------------------------------- task rows


def task_rows(base: Path, size: int, samples: int) -> list[Row]:
    home = Home(base / f"tasks-{size}")
    home.teams.create(TEAM, description="bench")
    tasks = home.tasks(TEAM)
    folder = tasks.dir
    for i in range(1, size + 1):  # written as files, not through create: quicker to set up
        body = {
            "id": str(i),
            "subject": f"Task {i}: review module {i}",
            "description": "Read the module, list what is wrong, report to the lead.",
            "status": "pending",
            "blocks": [],
            "blockedBy": [],
        }
        (folder / f"{i}.json").write_text(json.dumps(body, indent=2), "utf-8")
    (folder / ".highwatermark").write_text(str(size), "utf-8")
    rows = []
    counter = iter(range(10**9))
    next_id = iter(range(size, 0, -1))  # claim(id) takes from the top, claim_next from below

    def claim_next() -> float:
        agent = f"agent-{next(counter)}"
        return timed(lambda: tasks.claim_next(agent))

    def claim_id() -> float:
        agent = f"agent-{next(counter)}"
        task_id = str(next(next_id))
        return timed(lambda: tasks.claim(task_id, agent))

    tasks.claim_next("warm-up")
    value, baseline = compare(samples, claim_next, claim_id)
    target = 3.0 if size >= 1_000 else None
    rows.append(Row("claim_next()", size, value, baseline, "claim(id)", target))

    def listing() -> float:
        return timed(lambda: tasks.list())

    def read_files() -> float:
        def run() -> None:
            for entry in os.scandir(folder):
                if entry.name.endswith(".json"):
                    with open(entry.path, "rb") as fh:
                        json.loads(fh.read())

        return timed(run)

    value, baseline = compare(max(3, samples // 2), listing, read_files)
    rows.append(Row("list()", size, value, baseline, "read + json.loads each file", 1.5))

    def create() -> float:
        return timed(lambda: tasks.create("A new task", "Something to do."))

    probe = folder / "probe.json"
    new_bytes = json.dumps(tasks.get("1").to_json_dict(), indent=2).encode()  # type: ignore[union-attr]

    def create_floor() -> float:
        return timed(lambda: floor_write(probe, new_bytes))

    value, baseline = compare(samples, create, create_floor)
    rows.append(Row("create()", size, value, baseline, "write+fsync+rename", 2.0))
    shutil.rmtree(home.root)
    return rows


# ----------------------------------------------------------------------------- main


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'row':<16} {'size':>7} | {'teamdeck ms':>11} {'baseline ms':>11} {'ratio':>7}"
        f" | {'target':>7} {'':<6} | baseline"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        target = f"<= {r.target:g}x" if r.target is not None else "-"
        verdict = {True: "met", False: "MISSED", None: ""}[r.met]
        print(
            f"{r.name:<16} {r.size:>7} | {r.value_ms:>11.2f} {r.baseline_ms:>11.2f}"
            f" {r.ratio:>6.2f}x | {target:>7} {verdict:<6} | {r.baseline}",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller curves, fewer samples")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--rounds", type=int, default=0, help="samples per row (default 15, 7)")
    parser.add_argument("--dir", help="where to make the bench homes (default: a temp dir)")
    args = parser.parse_args()
    samples = args.rounds or (7 if args.quick else 15)
    messages = MESSAGES[:2] if args.quick else MESSAGES
    task_sizes = TASKS[:2] if args.quick else TASKS
    base = Path(tempfile.mkdtemp(prefix="teamdeck-scale-", dir=args.dir))
    started = time.perf_counter()
    rows: list[Row] = []
    if not args.json:
        load = os.getloadavg()[0]
        print(f"bench/scale.py  python {sys.version.split()[0]}  cpus {os.cpu_count()}", end="")
        print(f"  load {load:.1f}  dir {base}\n")
    try:
        for size in messages:
            rows += inbox_rows(base, size, samples if size < 100_000 else max(3, samples // 3))
        for size in task_sizes:
            rows += task_rows(base, size, samples)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    missed = [r for r in rows if r.met is False]
    if args.json:
        out = [{**asdict(r), "ratio": r.ratio, "met": r.met} for r in rows]
        print(json.dumps({"rows": out, "missed": len(missed), "load": os.getloadavg()[0]}))
    else:
        print_table(rows)
        print(f"\n{time.perf_counter() - started:.1f} s; load {os.getloadavg()[0]:.1f}")
        print("all targets met" if not missed else f"{len(missed)} target(s) missed")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Message delivery latency: send -> the recipient's turn starts. teamdeck vs a 500 ms poller.

    .venv/bin/python bench/delivery.py [--messages N] [--baseline-messages N] [--lanes K]

One idle in-process teammate (``worker``) runs in a ``TeamRuntime`` whose model is a tiny
offline handler that answers every request with a one-word ``end_turn`` (pace 0). For each
message the bench waits until the teammate is idle again (its previous turn ended and its idle
notification went to the lead), pauses a little, then sends and measures

* **in-process**: ``home.mailbox(team).send("worker", InboxMessage(...))`` from this process
  (the lead's side): latency = just before ``send()`` -> the teammate's ``StatusChanged
  "running"`` event (its turn starts). The runtime hears of the write through ``Home.subscribe``.
* **cross-process**: a child process appends to the inbox (``Mailbox.send``), taking
  ``time.time()`` just before the write (also carried in the message text); the parent notes
  ``time.time()`` at the turn start. The runtime hears of it through the core ``Watcher``.

For both it also reports "-> model request": when the offline model received the turn's
first request (so the SDK round trip into the model is included).

Baseline, in the same run: Claude Code's design -- every agent reads its inbox every 500 ms
(an asyncio loop: ``mailbox.unread()``, mark read, sleep 500 ms); the poll that finds the
message is its turn start. Same sends, in-process and from the child. The baseline runs ``K``
independent lanes (one poller agent and one writer each) side by side so 100 samples of a
~250 ms latency do not take a minute; every send is made at a random phase of its poller.

With ``--requests N`` it measures instead how fast a teammate's request reaches the lead's
queue: the in-process teammate sends N plan approval requests (``TeamChannel``), and the
latency is just before the send -> the runtime's ``ApprovalChanged`` for that request (what
puts it in front of the person). The runtime learns of the request through the watcher (its
write to the lead's inbox), then reads the lead's unread mail.

Targets: in-process p50 <= 5 ms, p99 <= 20 ms; cross-process p50 <= 25 ms, p99 <= 80 ms.
The breakdown under the table shows where the in-process time goes (the sender's durable
append, the recipient's durable mark-read before its turn starts).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["TEAMDECK_OFFLINE_PACE"] = "0"

from app.core import Home, InboxMessage, TeamMember  # noqa: E402
from app.core.mailbox import Mailbox  # noqa: E402
from app.runtime.events import ApprovalChanged, RuntimeEvent, StatusChanged  # noqa: E402
from app.runtime.model.client import make_client  # noqa: E402
from app.runtime.offline import ModelRequest, ResponsePlan, reply, text  # noqa: E402
from app.runtime.team.runtime import TeamRuntime  # noqa: E402

TEAM = "bench"
WORKER = "worker"
LEAD = "team-lead"
POLL_INTERVAL = 0.5
SETTLE_MS = (30, 60)  # pause after the teammate went idle before the next send: uniform
WARMUP = 3
TIMEOUT = 5.0  # a message not delivered within this is counted as lost
TARGETS = {"in-process": (5.0, 20.0), "cross-process": (25.0, 80.0)}
SCRIPT = str(Path(__file__).resolve())


# ----------------------------------------------------------------------------- writer child


def child(root: str) -> None:
    """Cross-process writer: for each ``agent seq`` line on stdin, take ``time.time()``, append
    a message carrying it to ``agent``'s inbox, and print the time."""
    box = Home(root).mailbox(TEAM)
    print("ready", flush=True)
    for line in sys.stdin:
        agent, seq = line.split()
        sent = time.time()
        box.send(agent, InboxMessage(sender=LEAD, text=f"ping {seq} sent_at={sent:.6f}"))
        print(f"{sent:.6f}", flush=True)


class Writer:
    """The parent's handle on one writer child."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, root: Path) -> Writer:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            SCRIPT,
            "--child",
            str(root),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        writer = cls(proc)
        assert proc.stdout is not None
        ready = await proc.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError("the writer child did not start")
        return writer

    def send(self, agent: str, seq: int) -> None:
        """Ask the child to send (returns at once; ``sent()`` gives the child's timestamp)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{agent} {seq}\n".encode())

    async def sent(self) -> float:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), TIMEOUT)
        return float(line)

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


# ----------------------------------------------------------------------------- results


@dataclass
class Series:
    label: str
    case: str  # in-process | cross-process
    impl: str  # teamdeck | baseline
    samples: list[float] = field(default_factory=list)  # ms
    model: list[float] = field(default_factory=list)  # ms, send -> model request
    send_cost: list[float] = field(default_factory=list)  # ms spent in send() itself
    mark_cost: list[float] = field(default_factory=list)  # ms in the recipient's mark_read
    lost: int = 0
    mismatched: int = 0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


# ----------------------------------------------------------------------------- teamdeck


class QuickModel:
    """The offline model for this bench: every request gets a one-word ``end_turn`` answer.
    Records when each agent's request arrived and the text it was sent."""

    def __init__(self) -> None:
        self.arrived: dict[str, tuple[float, float, str]] = {}  # agent -> (perf, wall, text)

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        perf, wall = time.perf_counter(), time.time()
        agent = (request.user_id or "?").split("@", 1)[0]
        self.arrived[agent] = (perf, wall, request.last_user_text)
        return reply(text("ok"))


class MarkTimer:
    """Times ``Mailbox.mark_read`` calls for one agent (the teammate marks the message read
    before its turn starts): wraps the method while the bench runs."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.spent: list[float] = []
        self._original = Mailbox.mark_read

    def __enter__(self) -> MarkTimer:
        original, timer = self._original, self

        def mark_read(box: Mailbox, agent: str, index: int | list[int], **kw: Any) -> int:
            t0 = time.perf_counter()
            try:
                return original(box, agent, index, **kw)
            finally:
                if agent == timer.agent:
                    timer.spent.append((time.perf_counter() - t0) * 1000)

        Mailbox.mark_read = mark_read  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        Mailbox.mark_read = self._original  # type: ignore[method-assign]


class Probe:
    """Turns the teammate's status events into futures: running (turn start) and idle."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.loop = asyncio.get_running_loop()
        self.running: asyncio.Future[tuple[float, float]] = self.loop.create_future()
        self.idle: asyncio.Future[None] = self.loop.create_future()

    def arm(self) -> None:
        self.running = self.loop.create_future()
        self.idle = self.loop.create_future()

    def on_event(self, event: RuntimeEvent) -> None:
        if not isinstance(event, StatusChanged) or event.agent != self.agent:
            return
        if event.status == "running" and not self.running.done():
            self.running.set_result((time.perf_counter(), time.time()))
        elif event.status == "idle" and not self.idle.done():
            self.idle.set_result(None)


async def settle(rng: random.Random) -> None:
    await asyncio.sleep(rng.uniform(*SETTLE_MS) / 1000)


async def teamdeck_run(
    home: Home, workdir: Path, writer: Writer, messages: int, seed: int
) -> tuple[Series, Series]:
    model = QuickModel()
    runtime = TeamRuntime(
        home, client=make_client(handler=model, pace=0), cwd=workdir, headless=True
    )
    probe = Probe(WORKER)
    runtime.subscribe(probe.on_event)
    await runtime.start()
    runtime.team_created(TEAM)
    box = home.mailbox(TEAM)
    rng = random.Random(seed)
    marks = MarkTimer(WORKER)
    try:
        probe.arm()
        await runtime.spawn_teammate(WORKER, "You are a benchmark teammate. Say ok.")
        await asyncio.wait_for(probe.idle, TIMEOUT)

        async def one(series: Series, seq: int, cross: bool) -> None:
            await settle(rng)
            probe.arm()
            model.arrived.pop(WORKER, None)
            marks.spent.clear()
            if cross:
                writer.send(WORKER, seq)
                try:
                    _, started = await asyncio.wait_for(asyncio.shield(probe.running), TIMEOUT)
                except TimeoutError:
                    series.lost += 1
                    await writer.sent()
                    return
                sent = await writer.sent()
                await asyncio.wait_for(probe.idle, TIMEOUT)
                series.samples.append((started - sent) * 1000)
                arrival = model.arrived.get(WORKER)
                if arrival is not None:
                    series.model.append((arrival[1] - sent) * 1000)
            else:
                message = InboxMessage(sender=LEAD, text=f"ping {seq}", summary="ping")
                t0 = time.perf_counter()
                box.send(WORKER, message)
                t1 = time.perf_counter()
                try:
                    started, _ = await asyncio.wait_for(asyncio.shield(probe.running), TIMEOUT)
                except TimeoutError:
                    series.lost += 1
                    return
                await asyncio.wait_for(probe.idle, TIMEOUT)
                series.samples.append((started - t0) * 1000)
                series.send_cost.append((t1 - t0) * 1000)
                arrival = model.arrived.get(WORKER)
                if arrival is not None:
                    series.model.append((arrival[0] - t0) * 1000)
            series.mark_cost.append(sum(marks.spent))
            arrival = model.arrived.get(WORKER)
            if arrival is None or f"ping {seq}" not in arrival[2]:
                series.mismatched += 1

        inproc = Series("teamdeck (event-driven)", "in-process", "teamdeck")
        cross = Series("teamdeck (event-driven)", "cross-process", "teamdeck")
        scratch = Series("warm-up", "", "")
        seq = 0
        with marks:
            for is_cross, series in ((False, inproc), (True, cross)):
                for _ in range(WARMUP):
                    seq += 1
                    await one(scratch, seq, is_cross)
                for _ in range(messages):
                    seq += 1
                    await one(series, seq, is_cross)
        return inproc, cross
    finally:
        await runtime.stop()


async def requests_run(home: Home, workdir: Path, requests: int, seed: int) -> Series:
    """A teammate's plan approval request -> queued by the runtime (see the module doc)."""
    model = QuickModel()
    runtime = TeamRuntime(
        home, client=make_client(handler=model, pace=0), cwd=workdir, headless=True
    )
    probe = Probe(WORKER)
    queued: dict[str, float] = {}
    waiting: dict[str, asyncio.Future[None]] = {}

    def on_event(event: RuntimeEvent) -> None:
        probe.on_event(event)
        if isinstance(event, ApprovalChanged) and not event.resolved:
            queued.setdefault(event.request_id, time.perf_counter())
            future = waiting.get(event.request_id)
            if future is not None and not future.done():
                future.set_result(None)

    runtime.subscribe(on_event)
    await runtime.start()
    runtime.team_created(TEAM)
    rng = random.Random(seed)
    series = Series("teamdeck (event-driven)", "request -> queue", "teamdeck")
    try:
        probe.arm()
        await runtime.spawn_teammate(WORKER, "You are a benchmark teammate. Say ok.")
        await asyncio.wait_for(probe.idle, TIMEOUT)
        channel = runtime.teammates[WORKER].channel
        loop = asyncio.get_running_loop()
        for i in range(WARMUP + requests):
            await settle(rng)
            t0 = time.perf_counter()
            request_id = channel.request_plan_approval(f"plan {i}")
            t1 = time.perf_counter()
            future = waiting[request_id] = loop.create_future()
            if request_id not in queued:
                try:
                    await asyncio.wait_for(future, TIMEOUT)
                except TimeoutError:
                    series.lost += 1
                    continue
            runtime.queue.claim(request_id, "bench")  # answered: the queue stays short
            if i >= WARMUP:
                series.samples.append((queued[request_id] - t0) * 1000)
                series.send_cost.append((t1 - t0) * 1000)
        return series
    finally:
        await runtime.stop()


def report_requests(series: Series) -> None:
    print()
    print(f"Request latency: a teammate's plan request -> queued, ms ({len(series.samples)})")
    print(
        f"  p50 {pct(series.samples, 0.5):.2f}  p90 {pct(series.samples, 0.9):.2f}  "
        f"p99 {pct(series.samples, 0.99):.2f}  max {max(series.samples, default=0.0):.2f}  "
        f"lost {series.lost}"
    )
    print(
        f"  of which the send itself (plan file + inbox append): "
        f"p50 {pct(series.send_cost, 0.5):.2f}  p99 {pct(series.send_cost, 0.99):.2f}"
    )


# ----------------------------------------------------------------------------- baseline


async def poller(home: Home, agent: str, found: Callable[[float, float], None]) -> None:
    """Claude Code's inbox poller: read every 500 ms; what it finds (marked read, as the
    teammate does) starts the turn."""
    box = home.mailbox(TEAM)
    while True:
        unread = box.unread(agent)
        if unread:
            box.mark_read(agent, [i for i, _ in unread])
            found(time.perf_counter(), time.time())
        await asyncio.sleep(POLL_INTERVAL)


async def baseline_run(
    home: Home, writers: list[Writer], messages: int, seed: int
) -> tuple[Series, Series]:
    lanes = len(writers)
    loop = asyncio.get_running_loop()
    slots: dict[str, asyncio.Future[tuple[float, float]]] = {}
    agents = [f"poller-{k}" for k in range(lanes)]

    def found_for(agent: str) -> Callable[[float, float], None]:
        def found(perf: float, wall: float) -> None:
            future = slots.get(agent)
            if future is not None and not future.done():
                future.set_result((perf, wall))

        return found

    tasks = [asyncio.create_task(poller(home, a, found_for(a))) for a in agents]
    box = home.mailbox(TEAM)
    inproc = Series("baseline (500 ms poll)", "in-process", "baseline")
    cross = Series("baseline (500 ms poll)", "cross-process", "baseline")

    async def lane(k: int, count: int, is_cross: bool, series: Series) -> None:
        agent = agents[k]
        rng = random.Random(seed * 100 + k)
        for i in range(count):
            # a random phase of the poller (its period is 500 ms)
            await asyncio.sleep(rng.uniform(0, POLL_INTERVAL))
            slots[agent] = loop.create_future()
            if is_cross:
                writers[k].send(agent, i)
                sent = await writers[k].sent()
                try:
                    _, wall = await asyncio.wait_for(slots[agent], TIMEOUT)
                except TimeoutError:
                    series.lost += 1
                    continue
                series.samples.append((wall - sent) * 1000)
            else:
                t0 = time.perf_counter()
                box.send(agent, InboxMessage(sender=LEAD, text=f"ping {i}", summary="ping"))
                series.send_cost.append((time.perf_counter() - t0) * 1000)
                try:
                    perf, _ = await asyncio.wait_for(slots[agent], TIMEOUT)
                except TimeoutError:
                    series.lost += 1
                    continue
                series.samples.append((perf - t0) * 1000)

    try:
        for is_cross, series in ((False, inproc), (True, cross)):
            counts = [messages // lanes + (1 if k < messages % lanes else 0) for k in range(lanes)]
            await asyncio.gather(*(lane(k, counts[k], is_cross, series) for k in range(lanes)))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return inproc, cross


# ----------------------------------------------------------------------------- report


def verdict(series: Series) -> str:
    if series.impl != "teamdeck":
        return "-"
    p50_target, p99_target = TARGETS[series.case]
    ok = (
        series.samples
        and pct(series.samples, 0.5) <= p50_target
        and pct(series.samples, 0.99) <= p99_target
        and series.lost == 0
    )
    return "PASS" if ok else "FAIL"


def report(results: list[Series], messages: int, baseline_messages: int, lanes: int) -> None:
    print()
    print(
        f"Delivery latency: send -> recipient's turn starts, ms "
        f"(teamdeck {messages} messages per case after {WARMUP} warm-up; "
        f"baseline {baseline_messages} per case over {lanes} lanes)"
    )
    head = (
        f"{'case':<14} {'implementation':<24} {'n':>4} {'p50':>8} {'p90':>8} {'p99':>8} "
        f"{'max':>8} {'target p50/p99':>15} {'lost':>5}  result"
    )
    print(head)
    print("-" * len(head))
    for case in ("in-process", "cross-process"):
        base = next(s for s in results if s.case == case and s.impl == "baseline")
        for s in (x for x in results if x.case == case):
            target = "{:g} / {:g}".format(*TARGETS[case]) if s.impl == "teamdeck" else "-"
            print(
                f"{case:<14} {s.label:<24} {len(s.samples):>4} {pct(s.samples, 0.5):>8.2f} "
                f"{pct(s.samples, 0.9):>8.2f} {pct(s.samples, 0.99):>8.2f} "
                f"{max(s.samples, default=float('nan')):>8.2f} {target:>15} {s.lost:>5}  "
                f"{verdict(s)}"
            )
        td = next(s for s in results if s.case == case and s.impl == "teamdeck")
        if td.samples and base.samples:
            speed = pct(base.samples, 0.5) / pct(td.samples, 0.5)
            print(f"{'':<14} {'p50 speed-up vs baseline':<24} {speed:>13.0f}x")
    print()
    print("Breakdown (teamdeck), ms:")
    for s in results:
        if s.impl != "teamdeck":
            continue
        if s.send_cost:
            print(
                f"  {s.case:<14} send() itself (lock + atomic write + fsync): "
                f"p50 {pct(s.send_cost, 0.5):.2f}  p99 {pct(s.send_cost, 0.99):.2f}"
            )
        if s.mark_cost:
            print(
                f"  {s.case:<14} the teammate's mark_read before its turn (atomic, no fsync): "
                f"p50 {pct(s.mark_cost, 0.5):.2f}  p99 {pct(s.mark_cost, 0.99):.2f}"
            )
        if s.model:
            print(
                f"  {s.case:<14} send -> the offline model receives the request: "
                f"p50 {pct(s.model, 0.5):.2f}  p99 {pct(s.model, 0.99):.2f}"
            )
        if s.mismatched:
            print(f"  {s.case:<14} turns that did not carry the message sent: {s.mismatched}")
    base_in = next(s for s in results if s.case == "in-process" and s.impl == "baseline")
    if base_in.send_cost:
        print(
            f"  {'baseline':<14} send() itself: p50 {pct(base_in.send_cost, 0.5):.2f}  "
            f"p99 {pct(base_in.send_cost, 0.99):.2f}"
        )


# ----------------------------------------------------------------------------- main


async def run(args: argparse.Namespace) -> int:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load} (other work on the machine skews tails)")
    root = Path(tempfile.mkdtemp(prefix="teamdeck-delivery-"))
    try:
        home = Home(root / "home")
        workdir = root / "work"
        workdir.mkdir()
        home.teams.create(TEAM, description="delivery bench", cwd=str(workdir))
        if args.requests:
            series = await requests_run(home, workdir, args.requests, 3)
            report_requests(series)
            return 0 if series.lost == 0 else 1
        for k in range(args.lanes):
            name = f"poller-{k}"
            home.teams.add_member(TEAM, TeamMember(agent_id=f"{name}@{TEAM}", name=name))
        writers = await asyncio.gather(*(Writer.start(home.root) for _ in range(args.lanes)))
        try:
            t0 = time.perf_counter()
            td_in, td_cross = await teamdeck_run(home, workdir, writers[0], args.messages, 1)
            t1 = time.perf_counter()
            base_in, base_cross = await baseline_run(home, writers, args.baseline_messages, 2)
            t2 = time.perf_counter()
        finally:
            await asyncio.gather(*(w.close() for w in writers))
        report(
            [td_in, base_in, td_cross, base_cross],
            args.messages,
            args.baseline_messages,
            args.lanes,
        )
        print(f"\n(teamdeck phase {t1 - t0:.1f} s, baseline phase {t2 - t1:.1f} s)")
        results = (td_in, td_cross)
        return 0 if all(verdict(s) == "PASS" for s in results) else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100, help="teamdeck messages per case")
    parser.add_argument(
        "--baseline-messages", type=int, default=100, help="baseline messages per case"
    )
    parser.add_argument(
        "--lanes", type=int, default=4, help="baseline pollers (and writer children) in parallel"
    )
    parser.add_argument(
        "--requests",
        type=int,
        default=0,
        help="measure N plan requests -> the lead's queue instead (see the module doc)",
    )
    args = parser.parse_args()
    if args.messages < 1 or args.baseline_messages < 1 or args.lanes < 1:
        parser.error("counts must be >= 1")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())

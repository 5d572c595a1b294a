"""Recording in the order things happened: fast task transitions, deferred re-reads, agent types."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.archive import start_run
from app.archive.recorder import Recorder
from app.archive.writer import Writer
from app.core import Home
from app.core.watch import Watcher
from app.runtime.api import AgentSnapshot
from app.runtime.events import RuntimeEvent, StatusChanged
from tests.archive.conftest import rows
from tests.timing import scaled

#: Long enough that a whole burst of writes, and the watcher's reports of them, land in one
#: batch of the writer (the situation of a fast offline run, made certain).
SLOW_LINGER = 0.4


def test_queued_operations_run_before_deferred_re_reads(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None, check_same_thread=False)
    order: list[str] = []
    writer = Writer(conn, tmp_path / "x.db", linger=SLOW_LINGER)
    try:
        writer.submit(lambda _: order.append("snapshot 1"))
        writer.defer("re-read", 0.0, lambda _: order.append("re-read"))
        writer.submit(lambda _: order.append("snapshot 2"))
        # The thread commits the batch on its own (a flush would queue the re-read itself).
        deadline = time.monotonic() + scaled(30)
        while writer.commits == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        writer.close()
    assert order == ["snapshot 1", "snapshot 2", "re-read"]


async def test_fast_task_transitions_are_each_recorded(home: Home) -> None:
    """pending -> in_progress -> completed inside one writer batch, with the watcher reporting
    the same writes: every state is recorded once, in order (no re-read of our own files)."""
    team = home.teams.create("Quick", description="").name
    recorder = start_run(home, None, source="headless")
    assert isinstance(recorder, Recorder)
    recorder.writer.linger = SLOW_LINGER
    recorder.set_team(team)
    recorder.flush()
    watcher = Watcher(home)
    recorder.watch(watcher)
    await watcher.start()
    try:
        tasks = home.tasks(team)
        for n in range(3):
            task = tasks.create(f"Step {n}")
            tasks.claim(task.id, "worker", status="in_progress")
            tasks.update(task.id, status="completed")
        await asyncio.sleep(0.1)  # the watcher delivers its batch (and the disk's echoes)
        tasks.delete("3")
        # Let the writer commit the batch on its own (closing would flush re-reads in order).
        await asyncio.sleep(SLOW_LINGER + 0.3)
    finally:
        await watcher.stop()
        recorder.close("finished")
    history: dict[str, list[tuple[object, object]]] = {}
    for task_id, status, owner in rows(
        home, "SELECT target, frame, agent FROM events WHERE kind = 'task' ORDER BY id"
    ):
        history.setdefault(str(task_id), []).append((status, owner))
    done = [("pending", None), ("in_progress", "worker"), ("completed", "worker")]
    assert history == {"1": done, "2": done, "3": [*done, ("deleted", "worker")]}
    assert rows(home, "SELECT tasks_done FROM runs") == [(3,)]


async def test_another_process_task_write_is_still_read_from_disk(home: Home) -> None:
    team = home.teams.create("Shared", description="").name
    home.tasks(team).create("Ours")
    recorder = start_run(home, None, source="attach")
    assert isinstance(recorder, Recorder)
    recorder.set_team(team)
    watcher = Watcher(home)
    recorder.watch(watcher)
    await watcher.start()
    try:
        Home(home.root).tasks(team).update("1", status="in_progress", owner="them")
        for _ in range(200):
            recorder.flush()
            if rows(home, "SELECT frame FROM events WHERE kind = 'task'"):
                break
            await asyncio.sleep(0.05)
    finally:
        await watcher.stop()
        recorder.close("stopped")
    assert rows(home, "SELECT target, frame, agent FROM events WHERE kind = 'task'") == [
        ("1", "in_progress", "them")
    ]


class _Runtime:
    """The runtime's shape as the recorder sees it: snapshots and a subscription."""

    def __init__(self, snapshots: list[AgentSnapshot]) -> None:
        self.snapshots = snapshots
        self.listeners: list[Callable[[RuntimeEvent], None]] = []
        self.team: str | None = None
        self.model = "claude-sonnet-5-5"

    def snapshot(self) -> list[AgentSnapshot]:
        return list(self.snapshots)

    def subscribe(self, callback: Callable[[RuntimeEvent], None]) -> Callable[[], None]:
        self.listeners.append(callback)
        return lambda: None

    def approvals(self) -> list[Any]:
        return []


def test_a_teammates_agent_type_comes_from_its_snapshot(home: Home) -> None:
    """The team config may be gone before it is read (a fast run): the runtime's snapshot
    says the agent's type; an agent not known yet is asked about again at its next event."""
    runtime = _Runtime([AgentSnapshot("team-lead", "blue", "running", is_lead=True)])
    recorder = start_run(home, runtime, source="headless")
    assert isinstance(recorder, Recorder)
    [emit] = runtime.listeners
    emit(StatusChanged("team-lead", "running"))
    emit(StatusChanged("researcher", "running"))  # spawned, not in the snapshots yet
    runtime.snapshots.append(
        AgentSnapshot("researcher", "green", "running", agent_type="Explore", model="m")
    )
    emit(StatusChanged("researcher", "idle"))
    recorder.close("finished")
    assert rows(home, "SELECT name, agent_type, color FROM agents ORDER BY name") == [
        ("researcher", "Explore", "green"),
        ("team-lead", "team-lead", "blue"),
    ]


def test_threads_see_one_recorder(home: Home) -> None:
    """Own writes may be announced from a worker thread while the writer re-reads."""
    recorder = start_run(home, None, source="headless")
    assert isinstance(recorder, Recorder)
    team = home.teams.create("Threads", description="").name
    recorder.set_team(team)
    tasks = home.tasks(team)
    threads = [threading.Thread(target=tasks.create, args=(f"t{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    recorder.close("finished")
    assert len(rows(home, "SELECT 1 FROM events WHERE kind = 'task'")) == 8

"""Crash safety: writers killed with SIGKILL at random moments never leave a broken file, and
every append that returned before the kill is on disk.

The writer records each completed append in a side file (one unbuffered ``write`` after
``send()`` returned); the parent checks that every recorded message is in the inbox.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import Home, InboxMessage, TeamMember

FORK = multiprocessing.get_context("fork")
TEAM = "crash"
KILLS = 40


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """A home on tmpfs when there is one (fsync is what a shared CI disk makes slow; a SIGKILL
    is the same on any file system). TEAMDECK_TEST_ON_DISK=1 keeps it on the real disk."""
    shm = Path("/dev/shm")
    if os.environ.get("TEAMDECK_TEST_ON_DISK") or not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path / "home"
        return
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="teamdeck-crash-", dir=shm))
    try:
        yield base / "home"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _writer(root: str, run: int, record: str, started: Any) -> None:
    box = Home(root).mailbox(TEAM)
    fd = os.open(record, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    started.set()
    seq = 0
    while True:
        box.send("researcher", InboxMessage(sender="writer", text=f"{run}:{seq}"))
        os.write(fd, f"{run}:{seq}\n".encode())  # only after send() returned
        seq += 1
        if seq % 7 == 0:
            box.mark_all_read("researcher")  # rewrites get killed too


def test_sigkilled_appender_never_breaks_the_inbox(root: Path) -> None:
    home = Home(root)
    home.teams.create(TEAM)
    home.teams.add_member(TEAM, TeamMember(agent_id="", name="researcher"))
    box = home.mailbox(TEAM)
    path = box.path("researcher")
    record = root.parent / "completed.txt"
    rng = random.Random(1234)
    for run in range(KILLS):
        started = FORK.Event()
        proc = FORK.Process(target=_writer, args=(str(root), run, str(record), started))
        proc.start()
        assert started.wait(10)
        time.sleep(rng.uniform(0.0, 0.03))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        assert proc.exitcode == -signal.SIGKILL
        # After every kill: the inbox parses, and every completed append is in it.
        if path.exists():
            json.loads(path.read_bytes())
        texts = [m.text for m in box.read("researcher")]
        completed = record.read_text().split() if record.exists() else []
        assert set(completed) <= set(texts), set(completed) - set(texts)
        assert len(set(texts)) == len(texts)
    # Order is kept within each run, and the kills really did land mid-stream.
    texts = [m.text for m in box.read("researcher")]
    by_run: dict[int, list[int]] = {}
    for text in texts:
        run_s, seq_s = text.split(":")
        by_run.setdefault(int(run_s), []).append(int(seq_s))
    for seqs in by_run.values():
        assert seqs == list(range(len(seqs)))
    assert len(texts) > KILLS
    # A killed writer can leave a temp file behind; it is never mistaken for an inbox.
    assert box.agents() == ["researcher"]


def _creator(root: str, started: Any) -> None:
    tasks = Home(root).tasks(TEAM)
    started.set()
    while True:
        task = tasks.create("work")
        tasks.update(task.id, status="in_progress", owner="me")


def test_sigkilled_task_creator_never_breaks_the_task_list(root: Path) -> None:
    home = Home(root)
    home.teams.create(TEAM)
    tasks = home.tasks(TEAM)
    rng = random.Random(99)
    for _ in range(10):
        started = FORK.Event()
        proc = FORK.Process(target=_creator, args=(str(root), started))
        proc.start()
        assert started.wait(10)
        time.sleep(rng.uniform(0.0, 0.03))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        assert proc.exitcode == -signal.SIGKILL  # killed by us, not dead of an error
        listed, errors = tasks.scan()
        assert errors == {}
        ids = [int(t.id) for t in listed]
        assert ids == list(range(1, len(ids) + 1))
        mark = tasks.highwatermark()
        files = sorted(os.listdir(root / "tasks" / TEAM))
        # A kill between a task's file and its watermark leaves the watermark behind (one
        # per such kill, rounds add up); never ahead, and the next id still follows the files.
        assert mark <= len(ids), (mark, ids, files)
        assert max(mark, *ids, 0) == len(ids), (mark, ids, files)

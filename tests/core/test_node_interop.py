"""Interop with Claude Code's locking: the real npm ``proper-lockfile`` against ``MkdirLock``.

Node writers append to an inbox exactly as Claude Code's ``writeToMailbox`` does
(``node_lock_writer.js``) while Python processes append through ``Home(lock_style="mkdir")``.
Skipped when node/npm are missing or ``npm install proper-lockfile`` fails (no network).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.core import Home, InboxMessage, LockTimeoutError, TeamMember
from app.core.locks import STALE_AFTER, make_lock

FORK = multiprocessing.get_context("fork")
WRITER_JS = Path(__file__).with_name("node_lock_writer.js")
NODE_WRITERS, PYTHON_WRITERS, PER_WRITER = 2, 2, 100


@pytest.fixture(scope="session")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``node_modules`` holding proper-lockfile, installed once per test session."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to test interop with proper-lockfile")
    prefix = tmp_path_factory.mktemp("npm")
    command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix)]
    try:
        done = subprocess.run(
            [*command, "proper-lockfile"], capture_output=True, text=True, timeout=180
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"npm install proper-lockfile failed: {exc}")
    modules = prefix / "node_modules"
    if done.returncode != 0 or not (modules / "proper-lockfile").is_dir():
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"npm install proper-lockfile failed (no network?): {tail}")
    return modules


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "claude", lock_style="mkdir")
    home.teams.create("interop")
    home.teams.add_member("interop", TeamMember(agent_id="", name="researcher"))
    return home


def _node(*args: str) -> list[str]:
    node = shutil.which("node")
    assert node is not None
    return [node, *args]


def _python_writer(root: str, sender: str, count: int, go_file: str) -> None:
    mailbox = Home(root, lock_style="mkdir").mailbox("interop")
    while not os.path.exists(go_file):
        time.sleep(0.001)
    for i in range(count):
        mailbox.send("researcher", InboxMessage(sender=sender, text=f"{sender}-{i}"))


def test_node_and_python_writers_lose_nothing(
    home: Home, node_modules: Path, tmp_path: Path
) -> None:
    inbox = home.mailbox("interop").path("researcher")
    lock_path = inbox.with_name(inbox.name + ".lock")
    go_file = tmp_path / "go"
    node_senders = [f"node{k}" for k in range(NODE_WRITERS)]
    python_senders = [f"py{k}" for k in range(PYTHON_WRITERS)]

    nodes = [
        subprocess.Popen(
            _node(str(WRITER_JS), str(node_modules), str(inbox), s, str(PER_WRITER), str(go_file)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for s in node_senders
    ]
    pythons = [
        FORK.Process(
            target=_python_writer,
            args=(str(home.root), s, PER_WRITER, str(go_file)),
            daemon=True,
        )
        for s in python_senders
    ]
    for process in pythons:
        process.start()

    lock_modes: list[str] = []
    stop = threading.Event()

    def watch_lock_path() -> None:
        while not stop.is_set():
            try:
                mode = os.lstat(lock_path).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(mode):
                lock_modes.append(stat.filemode(mode))

    watcher = threading.Thread(target=watch_lock_path, daemon=True)
    watcher.start()
    try:
        go_file.touch()
        for process in pythons:
            process.join(60)
        outputs = [p.communicate(timeout=60) for p in nodes]
    finally:
        stop.set()
        watcher.join()
        for p in nodes:
            p.kill()
        for process in pythons:
            if process.is_alive():
                process.kill()

    assert [p.returncode for p in nodes] == [0] * NODE_WRITERS, [err for _, err in outputs]
    assert [p.exitcode for p in pythons] == [0] * PYTHON_WRITERS
    assert lock_modes == [], "something other than a directory appeared at the lock path"
    assert not os.path.lexists(lock_path)

    raw = json.loads(inbox.read_text(encoding="utf-8"))
    senders = node_senders + python_senders
    assert len(raw) == len(senders) * PER_WRITER
    texts = [m["text"] for m in raw]
    assert len(set(texts)) == len(texts), "duplicated messages"
    for sender in senders:
        mine = [m["text"] for m in raw if m["from"] == sender]
        assert mine == [f"{sender}-{i}" for i in range(PER_WRITER)], f"{sender}: lost or reordered"
    assert all(m["read"] is False for m in raw)
    # And teamdeck reads what both wrote.
    assert len(home.mailbox("interop").read("researcher")) == len(raw)


HOLD_JS = """
const lockfile = require(process.argv[1] + "/proper-lockfile");
const file = process.argv[2];
lockfile.lockSync(file, { lockfilePath: file + ".lock" });
console.log("locked");
setInterval(() => {}, 1000);
"""


def test_python_waits_for_node_and_reclaims_its_lock_once_stale(
    home: Home, node_modules: Path
) -> None:
    inbox = home.mailbox("interop").path("researcher")
    inbox.write_text("[]")
    lock_path = inbox.with_name(inbox.name + ".lock")
    holder = subprocess.Popen(
        _node("-e", HOLD_JS, str(node_modules), str(inbox)), stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert lock_path.is_dir()
        with pytest.raises(LockTimeoutError), make_lock(lock_path, "mkdir", timeout=0.2):
            pass
        holder.send_signal(signal.SIGKILL)  # dies holding it: no exit handler runs
        holder.wait(5)
    finally:
        holder.kill()
        holder.wait(5)
    assert lock_path.is_dir()
    old = time.time() - STALE_AFTER - 1
    os.utime(lock_path, (old, old))
    with make_lock(lock_path, "mkdir", timeout=1):
        assert lock_path.is_dir()
    assert not os.path.lexists(lock_path)


CHECK_JS = """
const lockfile = require(process.argv[1] + "/proper-lockfile");
const file = process.argv[2];
const locked = lockfile.checkSync(file, { lockfilePath: file + ".lock" });
let acquired = false;
try {
  lockfile.lockSync(file, { lockfilePath: file + ".lock" })();
  acquired = true;
} catch (err) {
  if (err.code !== "ELOCKED") throw err;
}
console.log(JSON.stringify({ locked, acquired }));
"""


def _node_view(node_modules: Path, inbox: Path) -> dict[str, Any]:
    done = subprocess.run(
        _node("-e", CHECK_JS, str(node_modules), str(inbox)),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_node_sees_python_lock_as_held_and_its_stale_lock_as_free(
    home: Home, node_modules: Path
) -> None:
    inbox = home.mailbox("interop").path("researcher")
    inbox.write_text("[]")
    lock_path = inbox.with_name(inbox.name + ".lock")
    with make_lock(lock_path, "mkdir", timeout=1):
        assert _node_view(node_modules, inbox) == {"locked": True, "acquired": False}
        old = time.time() - STALE_AFTER - 1
        os.utime(lock_path, (old, old))  # as if we had died holding it 11 s ago
        assert _node_view(node_modules, inbox) == {"locked": False, "acquired": True}
    assert not os.path.lexists(lock_path)


def test_teamdeck_answers_while_node_writes_the_same_inbox(
    home: Home, node_modules: Path, tmp_path: Path
) -> None:
    """Claude Code (proper-lockfile) keeps appending to a teammate's inbox while teamdeck
    answers that teammate's permission requests into it: nothing lost, each answer once."""
    from app.core import protocol as proto
    from app.runtime.by_files.requests import scan_team
    from app.runtime.by_files.steering import FileSteering

    requests = 30
    lead = home.mailbox("interop")
    for i in range(requests):
        frame = proto.permission_request(
            f"perm-{i}", "researcher@interop", "Bash", f"toolu_{i}", "run", {"command": f"c{i}"}
        )
        lead.append("team-lead", InboxMessage(sender="researcher", text=frame.to_text()))
    inbox = lead.path("researcher")
    go_file = tmp_path / "go"
    nodes = [
        subprocess.Popen(
            _node(str(WRITER_JS), str(node_modules), str(inbox), f"node{k}", "100", str(go_file)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(2)
    ]
    steer = FileSteering(Home(home.root, lock_style="mkdir"), "interop")
    try:
        go_file.touch()
        pending = scan_team(home, "interop").pending
        assert len(pending) == requests
        outcomes = [steer.allow(r.approval) for r in pending]
        outputs = [p.communicate(timeout=60) for p in nodes]
    finally:
        for p in nodes:
            p.kill()
    assert [p.returncode for p in nodes] == [0, 0], [err for _, err in outputs]
    assert [o.ok for o in outcomes] == [True] * requests, [o.message for o in outcomes]
    texts = [m["text"] for m in json.loads(inbox.read_text(encoding="utf-8"))]
    node_texts = [t for t in texts if t.startswith("node")]
    assert sorted(node_texts) == sorted(f"node{k}-{i}" for k in range(2) for i in range(100))
    answers = [json.loads(t)["request_id"] for t in texts if t.startswith("{")]
    assert sorted(answers) == sorted(f"perm-{i}" for i in range(requests))  # 0 lost, 0 twice
    assert scan_team(home, "interop").pending == []

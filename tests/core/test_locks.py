"""Locks: flock (teamdeck's home) and mkdir / proper-lockfile (a Claude Code home).

Cross-process tests fork (``multiprocessing`` "fork" context) so children share the test's
imports and start in milliseconds.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock, Timeout

import app.core.inbox_append as inbox_append
import app.core.inbox_marks as inbox_marks
from app.core import Home, InboxMessage, LockTimeoutError, TeamMember
from app.core.locks import STALE_AFTER, MkdirLock, make_lock
from app.core.paths import LockStyle

FORK = multiprocessing.get_context("fork")
STYLES: list[LockStyle] = ["flock", "mkdir"]


def _age(path: Path, seconds: float) -> None:
    """Make ``path`` look ``seconds`` old (as a lock whose holder died that long ago)."""
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".stale-" in p.name)


@contextmanager
def _watch_never_regular_file(path: Path) -> Iterator[list[str]]:
    """Sample ``path`` in a thread; yields the list of violations seen (a non-directory)."""
    seen: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(mode):
                seen.append(stat.filemode(mode))

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()


# ---------------------------------------------------------------------- children (forked)


def _increment(lock_path: str, style: LockStyle, counter: str, times: int, go: Any) -> None:
    """Increment the counter file ``times`` times under the lock, checking exclusivity."""
    inside = counter + ".inside"
    go.wait()
    for _ in range(times):
        with make_lock(Path(lock_path), style, timeout=20):
            # O_EXCL fails if another holder is inside the critical section right now.
            os.close(os.open(inside, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            value = int(Path(counter).read_text())
            Path(counter).write_text(str(value + 1))
            os.unlink(inside)


def _hold_forever(lock_path: str, style: LockStyle, ready: Any) -> None:
    lock = make_lock(Path(lock_path), style, timeout=5)
    lock.__enter__()  # kept referenced: filelock releases a lock that is garbage-collected
    ready.set()
    time.sleep(60)


def _start(target: Callable[..., None], *args: Any) -> Any:
    process = FORK.Process(target=target, args=args, daemon=True)
    process.start()
    return process


@contextmanager
def _held_by_child(lock_path: Path, style: LockStyle) -> Iterator[Any]:
    ready = FORK.Event()
    child = _start(_hold_forever, str(lock_path), style, ready)
    try:
        assert ready.wait(5), "child did not take the lock"
        yield child
    finally:
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(5)


# ---------------------------------------------------------------------- mutual exclusion


@pytest.mark.parametrize("style", STYLES)
def test_processes_never_lose_an_increment(tmp_path: Path, style: LockStyle) -> None:
    counter = tmp_path / "counter"
    counter.write_text("0")
    lock_path = tmp_path / "counter.lock"
    processes, times = 4, 150
    go = FORK.Event()
    with _watch_never_regular_file(lock_path) as violations:
        children = [
            _start(_increment, str(lock_path), style, str(counter), times, go)
            for _ in range(processes)
        ]
        go.set()
        for child in children:
            child.join(30)
    assert [c.exitcode for c in children] == [0] * processes
    assert int(counter.read_text()) == processes * times
    if style == "mkdir":
        assert violations == []
        assert not os.path.lexists(lock_path)
        assert _leftovers(tmp_path) == []
    else:
        assert lock_path.is_file()  # filelock keeps the flock file; the kernel holds the lock


def test_threads_of_one_process_exclude_each_other(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    counter.write_text("0")
    lock_path = tmp_path / "counter.lock"
    go = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _increment(str(lock_path), "mkdir", str(counter), 50, go)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    go.set()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert int(counter.read_text()) == 300


# ---------------------------------------------------------------------- held, stale, dead


@pytest.mark.parametrize("style", STYLES)
def test_live_lock_times_out_with_a_one_line_message(tmp_path: Path, style: LockStyle) -> None:
    lock_path = tmp_path / "inbox.json.lock"
    with _held_by_child(lock_path, style):
        start = time.monotonic()
        with pytest.raises(LockTimeoutError) as caught, make_lock(lock_path, style, timeout=0.3):
            pytest.fail("acquired a lock another process holds")
        elapsed = time.monotonic() - start
    message = str(caught.value)
    assert str(lock_path) in message
    assert "\n" not in message
    assert caught.value.path == lock_path
    assert 0.3 <= elapsed < 3


def test_fresh_foreign_lock_dir_is_waited_on_not_removed(tmp_path: Path) -> None:
    lock_path = tmp_path / "inbox.json.lock"
    os.mkdir(lock_path)  # as a proper-lockfile holder would
    _age(lock_path, STALE_AFTER - 2)  # old, but not stale yet
    inode = os.lstat(lock_path).st_ino
    with pytest.raises(LockTimeoutError), make_lock(lock_path, "mkdir", timeout=0.2):
        pass
    assert os.lstat(lock_path).st_ino == inode
    assert _leftovers(tmp_path) == []


def test_stale_lock_dir_is_reclaimed(tmp_path: Path) -> None:
    lock_path = tmp_path / "inbox.json.lock"
    os.mkdir(lock_path)
    _age(lock_path, STALE_AFTER + 1)
    start = time.monotonic()
    with make_lock(lock_path, "mkdir", timeout=2):
        held = os.lstat(lock_path)
        assert stat.S_ISDIR(held.st_mode)
        assert time.time() - held.st_mtime < 5  # a fresh lock of ours, not the old one
    assert time.monotonic() - start < 1
    assert not os.path.lexists(lock_path)
    assert _leftovers(tmp_path) == []


def test_stale_regular_file_at_lock_path_is_replaced_by_a_directory(tmp_path: Path) -> None:
    lock_path = tmp_path / "inbox.json.lock"
    lock_path.write_text("")  # e.g. left behind by a flock-style run on this home
    with pytest.raises(LockTimeoutError), make_lock(lock_path, "mkdir", timeout=0.1):
        pass
    assert lock_path.is_file()  # fresh: left alone
    _age(lock_path, STALE_AFTER + 1)
    with make_lock(lock_path, "mkdir", timeout=1):
        assert stat.S_ISDIR(os.lstat(lock_path).st_mode)
    assert not os.path.lexists(lock_path)
    assert _leftovers(tmp_path) == []


def test_flock_of_a_killed_process_is_released_by_the_kernel(tmp_path: Path) -> None:
    lock_path = tmp_path / "counter.lock"
    with _held_by_child(lock_path, "flock") as child:
        with pytest.raises(LockTimeoutError), make_lock(lock_path, "flock", timeout=0.1):
            pass
        os.kill(child.pid, signal.SIGKILL)
        child.join(5)
    start = time.monotonic()
    with make_lock(lock_path, "flock", timeout=2):
        pass
    assert time.monotonic() - start < 0.5


def test_mkdir_lock_of_a_killed_process_is_reclaimed_once_stale(tmp_path: Path) -> None:
    lock_path = tmp_path / "counter.lock"
    with _held_by_child(lock_path, "mkdir") as child:
        os.kill(child.pid, signal.SIGKILL)
        child.join(5)
    assert lock_path.is_dir()  # nobody removes it: it is still fresh
    with pytest.raises(LockTimeoutError), make_lock(lock_path, "mkdir", timeout=0.1):
        pass
    _age(lock_path, STALE_AFTER + 1)  # ...until 10 s have passed
    with make_lock(lock_path, "mkdir", timeout=1):
        pass
    assert not os.path.lexists(lock_path)


# ---------------------------------------------------------------------- ownership


def test_release_leaves_a_lock_that_replaced_ours(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lock_path = tmp_path / "inbox.json.lock"
    lock = MkdirLock(str(lock_path), thread_local=False)
    lock.acquire(timeout=1)
    # Someone judged ours stale (say we were suspended), moved it away and locked afresh.
    os.rename(lock_path, tmp_path / "moved")
    os.mkdir(lock_path)
    theirs = os.lstat(lock_path).st_ino
    with caplog.at_level(logging.WARNING, logger="app.core.locks"):
        lock.release()
    assert not lock.is_locked
    assert os.lstat(lock_path).st_ino == theirs
    assert "taken over" in caplog.text


def test_reclaim_race_gives_a_fresh_lock_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two reclaimers see the same stale lock; the other one wins, removes it and a new holder
    locks, all between our staleness check and our rename: the new holder keeps its lock."""
    lock_path = tmp_path / "inbox.json.lock"
    os.mkdir(lock_path)
    _age(lock_path, STALE_AFTER + 1)
    real_rename = os.rename
    live: list[int] = []

    def racing_rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if not live and os.fspath(src) == str(lock_path) and ".stale-" in os.fspath(dst):
            real_rename(lock_path, tmp_path / "other-reclaimer")
            os.mkdir(lock_path)
            live.append(os.lstat(lock_path).st_ino)
        real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", racing_rename)
    with pytest.raises(LockTimeoutError), make_lock(lock_path, "mkdir", timeout=0.1):
        pass
    assert live, "the race was not staged"
    assert os.lstat(lock_path).st_ino == live[0]
    assert _leftovers(tmp_path) == []


def test_forked_child_never_releases_the_parents_lock(tmp_path: Path) -> None:
    lock_path = tmp_path / "inbox.json.lock"
    lock = MkdirLock(str(lock_path), thread_local=False)
    lock.acquire(timeout=1)
    try:
        child = _start(lock.release)
        child.join(5)
        assert child.exitcode == 0
        assert lock_path.is_dir()
        assert lock.is_locked
    finally:
        lock.release()
    assert not os.path.lexists(lock_path)


# ---------------------------------------------------------------------- through Home


@pytest.fixture
def mkdir_home(tmp_path: Path) -> tuple[Home, str]:
    home = Home(tmp_path / "claude", lock_style="mkdir")
    team = home.teams.create("interop").name
    home.teams.add_member(team, TeamMember(agent_id="", name="researcher"))
    return home, team


def test_home_inbox_append_locks_with_a_directory(
    mkdir_home: tuple[Home, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, team = mkdir_home
    mailbox = home.mailbox(team)
    inbox = mailbox.path("researcher")
    lock_path = inbox.with_name("researcher.json.lock")
    seen: list[str] = []
    real_write = inbox_append.atomic_write_bytes

    def spy(path: Path, data: bytes, **kwargs: Any) -> None:
        if path == inbox:
            seen.append(stat.filemode(os.lstat(lock_path).st_mode))
        real_write(path, data, **kwargs)

    monkeypatch.setattr(inbox_append, "atomic_write_bytes", spy)  # the appends
    monkeypatch.setattr(inbox_marks, "atomic_write_bytes", spy)  # mark_all_read
    mailbox.send("researcher", InboxMessage(sender="team-lead", text="one"))
    mailbox.send("researcher", InboxMessage(sender="team-lead", text="two"))
    assert mailbox.mark_all_read("researcher") == 2
    assert len(seen) == 3
    assert all(mode.startswith("d") for mode in seen)
    assert not os.path.lexists(lock_path)
    assert [m.text for m in mailbox.read("researcher")] == ["one", "two"]
    # Nothing lock-like is left anywhere, except the task list's own ``.lock`` file that
    # Claude Code's lockSync needs to exist (its lock is the ``.lock.lock`` directory).
    locks = [p for p in home.root.rglob("*") if p.name.endswith(".lock") or ".stale-" in p.name]
    assert locks == [home.layout.tasklist_lock_path(team)]
    assert locks[0].is_file()


def test_home_send_times_out_on_a_claude_code_held_lock(tmp_path: Path) -> None:
    home = Home(tmp_path / "claude", lock_style="mkdir", lock_timeout=0.2)
    team = home.teams.create("interop").name
    home.teams.add_member(team, TeamMember(agent_id="", name="researcher"))
    mailbox = home.mailbox(team)
    inbox = mailbox.path("researcher")
    mailbox.send("researcher", InboxMessage(sender="team-lead", text="before"))
    os.mkdir(inbox.with_name("researcher.json.lock"))  # Claude Code is writing
    with pytest.raises(LockTimeoutError, match="researcher.json.lock"):
        mailbox.send("researcher", InboxMessage(sender="team-lead", text="lost?"))
    assert [m.text for m in mailbox.read("researcher")] == ["before"]
    assert Path(home.lock(home.layout.tasklist_lock_path(team))._path).name == ".lock.lock"


def test_flock_style_excludes_filelock_on_the_same_file(tmp_path: Path) -> None:
    """teamdeck's own flock lock is the kernel lock ``filelock.FileLock`` takes: a process
    still running an older teamdeck (which locked through filelock) and this one exclude each
    other."""
    lock_path = tmp_path / "inbox.json.lock"
    other = FileLock(str(lock_path), thread_local=False)
    other.acquire(timeout=1)
    try:
        with pytest.raises(LockTimeoutError), make_lock(lock_path, "flock", timeout=0.1):
            pass
    finally:
        other.release()
    with make_lock(lock_path, "flock", timeout=1), pytest.raises(Timeout):
        FileLock(str(lock_path), thread_local=False).acquire(timeout=0.1)
    assert lock_path.is_file()


@pytest.mark.parametrize("style", STYLES)
def test_a_waiter_gives_up_when_it_no_longer_needs_the_lock(
    tmp_path: Path, style: LockStyle
) -> None:
    """``acquire(give_up=...)``: asked while another process holds the lock; True -> no lock
    taken (False returned), and the lock is still free for the next taker once released."""
    lock_path = tmp_path / "list.lock"
    asked: list[int] = []
    with _held_by_child(lock_path, style) as child:
        waiter = make_lock(lock_path, style, timeout=20)

        def give_up() -> bool:
            asked.append(1)
            return len(asked) == 3

        assert waiter.acquire(give_up=give_up) is False
        assert len(asked) == 3
        os.kill(child.pid, signal.SIGKILL)
        child.join(5)
    if style == "mkdir":
        _age(lock_path, STALE_AFTER + 1)  # the killed holder's directory, reclaimed as stale
    taker = make_lock(lock_path, style, timeout=5)
    assert taker.acquire(give_up=lambda: True) is True  # free: taken at the first attempt
    taker.release()


def test_an_inbox_write_tells_watchers_of_the_inbox_only(tmp_path: Path) -> None:
    """A flock lock file is opened read-only: taking and letting go of the lock wakes no
    inotify watcher of the folder (a descriptor open for writing would: IN_CLOSE_WRITE), so
    a teammate's watcher hears of an inbox write once -- the rename -- not of its lock."""
    from app.core.inotify import IN_CLOSE_WRITE, IN_MOVED_TO, Inotify

    home = Home(tmp_path / "home")
    home.teams.create("t")
    home.teams.add_member("t", TeamMember(agent_id="", name="a"))
    box = home.mailbox("t")
    box.append("a", InboxMessage(sender="team-lead", text="first"))  # the lock file exists
    watcher = Inotify()
    try:
        assert watcher.add(str(box.path("a").parent), IN_CLOSE_WRITE | IN_MOVED_TO) is not None
        box.append("a", InboxMessage(sender="team-lead", text="second"))
        box.mark_read("a", 1)
        heard = [(mask, name) for _, mask, name in watcher.read() if not name.startswith(".")]
    finally:
        watcher.close()
    assert heard == [(IN_MOVED_TO, "a.json")] * 2
    assert stat.S_IMODE(os.stat(str(box.path("a")) + ".lock").st_mode) == 0o600


def test_flock_falls_back_to_a_writable_descriptor_where_flock_needs_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``flock`` is emulated by a byte-range write lock (NFS), a read-only descriptor
    cannot be locked (EBADF): the lock opens the file for writing and still excludes."""
    import errno
    import fcntl

    from app.core import locks

    real = fcntl.flock

    def nfs_like(fd: int, op: int) -> None:
        if op & fcntl.LOCK_EX and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            raise OSError(errno.EBADF, "Bad file descriptor")
        real(fd, op)

    monkeypatch.setattr(locks.fcntl, "flock", nfs_like)
    lock_path = tmp_path / "x.lock"
    held = make_lock(lock_path, "flock", timeout=2)
    with held, pytest.raises(LockTimeoutError), make_lock(lock_path, "flock", timeout=0.05):
        pass
    with make_lock(lock_path, "flock", timeout=0.5):
        pass

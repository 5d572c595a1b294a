"""A same-user process trying to read the API key during a run: ``python spy.py ROOT_PID KEY``.

It loops until SIGTERM: every ``/tmp/teamdeck-key-*`` entry (opened and read, or connected to
if it is a socket), and every descendant of ROOT_PID (not itself): each of its open
descriptors reopened through ``/proc/<pid>/fd/N`` and read (a pipe or FIFO is read for a
moment, as a patient spy would), its ``environ`` and ``cmdline``. Then it prints one JSON
object: ``hits`` (where the key was read), ``opened`` (descriptors it could reopen),
``refused`` (descriptors or sockets that would not let it in), ``rounds``.
Standalone on purpose: it imports nothing of teamdeck.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import stat
import sys
import threading
import time

ROOT = int(sys.argv[1])
KEY = sys.argv[2].encode()
LIMIT = 1 << 20
stats = {"hits": [], "opened": 0, "refused": 0, "rounds": 0}
running = True


def stop(*_: object) -> None:
    global running
    running = False


#: Whether the kernel lists each thread's children (``CONFIG_PROC_CHILDREN``); without it
#: every process's parent is read from ``/proc``.
CHILDREN_LISTED = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def children(pid: int) -> list[int]:
    """The children of ``pid``, from the ``children`` list of each of its threads (a child is
    listed under the thread that started it)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            path = f"/proc/{pid}/task/{task}/children"
            with contextlib.suppress(OSError, ValueError), open(path, "rb") as f:
                found.extend(int(child) for child in f.read().split())
    return found


def children_by_parent() -> dict[int, list[int]]:
    """Every process's children, from each one's parent in ``/proc/<pid>/stat``: what
    :func:`children` reads where the kernel has no lists (a few ms a round on a busy machine,
    where the lists take a fraction of one)."""
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parent = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            found.setdefault(parent, []).append(int(entry))
    return found


def descendants() -> list[int]:
    """Every process below ROOT but this one."""
    listed = None if CHILDREN_LISTED else children_by_parent()
    found: list[int] = []
    frontier = [ROOT]
    while frontier:
        pid = frontier.pop()
        for child in children(pid) if listed is None else listed.get(pid, []):
            if child != os.getpid():
                found.append(child)
                frontier.append(child)
    return found


def drain(fd: int, patience: float) -> bytes:
    data = b""
    deadline = time.monotonic() + patience
    while len(data) < LIMIT:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            select.select([fd], [], [], left)
            continue
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def look(path: str, where: str) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISSOCK(mode):
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(0.2)
            try:
                sock.connect(path)
                data = sock.recv(LIMIT)
            except OSError:
                data = b""
        stats["refused"] += KEY not in data
        note(data, where)
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:  # a socket through /proc (ENXIO), or gone
        stats["refused"] += 1
        return
    stats["opened"] += 1
    try:
        patient = stat.S_ISFIFO(os.fstat(fd).st_mode)
        note(drain(fd, 0.05 if patient else 0.0), where)
    finally:
        os.close(fd)


def note(data: bytes, where: str) -> None:
    if KEY in data:
        stats["hits"].append(where)


def watch_tmp() -> None:
    """A tight loop of its own: a handoff folder may live for a moment only."""
    while running:
        with contextlib.suppress(OSError):
            for name in os.listdir("/tmp"):  # one listing: a glob per pattern cost 3 ms a look
                if name.startswith("teamdeck-key-"):
                    path = f"/tmp/{name}"
                    look(path, path)
                    with contextlib.suppress(OSError):
                        for inner in os.listdir(path):
                            look(f"{path}/{inner}", f"{path}/{inner}")
        time.sleep(0.001)


def main() -> None:
    signal.signal(signal.SIGTERM, stop)
    tmp = threading.Thread(target=watch_tmp)
    tmp.start()
    while running:
        stats["rounds"] += 1
        for pid in descendants():
            for name in ("environ", "cmdline"):
                with contextlib.suppress(OSError), open(f"/proc/{pid}/{name}", "rb") as f:
                    note(f.read(), f"/proc/{pid}/{name}")
            with contextlib.suppress(OSError):
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    look(f"/proc/{pid}/fd/{fd}", f"/proc/{pid}/fd/{fd}")
        time.sleep(0.005)
    tmp.join()
    print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    main()

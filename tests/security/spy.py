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
import glob
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


def descendants() -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found: list[int] = []
    frontier = [ROOT]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child != os.getpid():
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
        for path in glob.glob("/tmp/teamdeck-key-*") + glob.glob("/tmp/teamdeck-key-*/*"):
            look(path, path)
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

"""Handing the API credentials to a teammate process without its environment.

A teammate process needs the key to call the API, but nothing may find it there later: not its
environment (which every command it runs would inherit), not ``/proc/<pid>/environ``, not a
file. So the runtime offers the credentials once through a named pipe in a private folder
(0700): ``offer()`` makes the pipe and a thread that writes one JSON object into it as soon as
the teammate opens it, then removes the pipe and the folder. The teammate (``teamdeck agent
--credentials PIPE``) reads it with ``receive()`` and keeps the values in memory only
(``credentials.hold``). Data written to a pipe never reaches the disk. A pipe nobody opens
within ``OFFER_TIMEOUT`` seconds is removed unread.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

OFFER_TIMEOUT = 60.0
RECEIVE_TIMEOUT = 30.0


class HandoffError(OSError):
    """The credentials could not be handed over (one line)."""


def offer(credentials: dict[str, str], timeout: float = OFFER_TIMEOUT) -> Path:
    """A pipe the credentials can be read from once; returns its path at once."""
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-key-"))
    path = folder / "credentials"
    os.mkfifo(path, 0o600)
    payload = json.dumps(credentials).encode()

    def serve() -> None:
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                    break
                except OSError as exc:
                    if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                        log.warning("credentials not handed over: %s", exc.strerror or exc)
                        return
                    time.sleep(0.02)
            try:
                os.set_blocking(fd, True)
                os.write(fd, payload)
            finally:
                os.close(fd)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    threading.Thread(target=serve, name="credentials-handoff", daemon=True).start()
    return path


def receive(path: Path, timeout: float = RECEIVE_TIMEOUT) -> dict[str, str]:
    """Read the credentials offered at ``path`` (HandoffError if none come in time)."""
    result: dict[str, str] = {}
    problem: list[str] = []

    def read() -> None:
        try:
            with open(path, "rb") as pipe:
                data = json.loads(pipe.read() or b"{}")
        except (OSError, ValueError) as exc:
            problem.append(str(exc))
            return
        if isinstance(data, dict):
            result.update({str(k): str(v) for k, v in data.items() if isinstance(v, str)})

    reader = threading.Thread(target=read, name="credentials-receive", daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        raise HandoffError(f"no credentials came through {path} within {timeout:g}s")
    if problem:
        raise HandoffError(f"cannot read the credentials from {path}: {problem[0]}")
    return result

"""Teammate processes forked from one pre-imported server (``process`` mode, Linux).

Starting a teammate process costs about a second of CPU, nearly all of it imports (the SDK, its
pydantic models, the runtime). A lead that spawns 8 teammates at once on 2 cores pays 8 of
them: the team works only after ~5 s, and the machine (the dashboard with it) is saturated
meanwhile (bench/live.py's ``process0`` row). The fork server pays it once: a process of the
lead's runtime that imports what a teammate process needs, then forks one child per teammate;
each child sets its session, standard streams, folder and environment as ``subprocess`` would,
and runs the teammate entry point (``app.runtime.agent_main``) in the modules already loaded.

The protocol is one JSON object per line. The runtime writes requests to the server's stdin:
``{"id", "args", "cwd", "env", "stderr"}`` (``args``: the entry point's arguments; ``env``: the
child's whole environment; ``stderr``: the file its stderr appends to). The server answers on
its stdout, in order: ``{"ready": true}`` once imported, then ``{"id", "pid"}`` per child
started or ``{"id", "error"}`` for one it could not start (one line, e.g. a missing folder).

Guarantees, so that a forked teammate is the process ``subprocess`` would have started:

* The server's environment is the runtime's without the API credentials (``child_env``), as a
  teammate's is; a request whose interpreter settings (``PYTHON*`` variables) differ from the
  server's, or any request when the server cannot run, is started by ``subprocess`` instead.
* Each child is a session leader with stdin and stdout on ``/dev/null``; it runs to the end of
  the interpreter (``atexit`` and logging shut down as usual).
* The server is single-threaded when it forks (checked), ignores ``SIGCHLD`` so that its
  children are reaped as they end (a dead teammate's pid is gone at once, no zombie), and when
  the runtime closes its stdin it starts no more children and waits for the running ones
  before it exits -- teammates outlive the dashboard, and still have a parent that reaps them.

``TEAMDECK_FORKSERVER=0`` turns it off (every teammate process is exec'd).
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

log = logging.getLogger(__name__)

ENABLED_ENV = "TEAMDECK_FORKSERVER"
#: What a teammate process imports before it starts work, besides its entry point
#: (``launch.AGENT_MAIN``): what the entry point imports once its priority is lowered.
PRELOAD = (
    "app.runtime.runners.teammate_process",
    "app.runtime.model.credentials",
    "app.runtime.runners.handoff",
    "app.runtime.offline.policies",
)


def supported() -> bool:
    """Fork without exec is safe here (Linux) and not turned off (``$TEAMDECK_FORKSERVER``)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return os.environ.get(ENABLED_ENV, "").strip().lower() not in ("0", "off", "false", "no")


def interpreter_settings(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that shape an interpreter at its start (a forked child keeps its
    server's): a request with other ones needs a process of its own."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


@dataclass
class Forked:
    """One child asked of the server: its pid once started, or why it was not."""

    id: int
    pid: int | None = None
    error: str | None = None
    #: The server ended before it answered: the child was not started (start it otherwise).
    lost: bool = False
    cancelled: bool = False


class ForkServer:
    """The runtime's side: starts the server on first use, hands it requests, reads answers."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = dict(env)
        self._settings = interpreter_settings(self._env)
        self._popen: subprocess.Popen[bytes] | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, Forked] = {}
        self._lock = threading.Lock()
        self._ended = False

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen is not None else None

    def usable_for(self, env: Mapping[str, str]) -> bool:
        """Whether a child with environment ``env`` can be forked from this server."""
        return not self._ended and interpreter_settings(env) == self._settings

    def spawn(
        self, args: Sequence[str], *, cwd: Path, env: Mapping[str, str], stderr: Path
    ) -> Forked:
        """Ask for a child running the teammate entry point with ``args``; answered later (see
        :class:`Forked`). OSError if the server cannot take it (ended, or cannot start)."""
        if not self.usable_for(env):
            raise OSError("the fork server cannot start this process")
        with self._lock:
            popen = self._started()
            forked = Forked(next(self._ids))
            self._waiting[forked.id] = forked
            line = json.dumps(
                {"id": forked.id, "args": list(args), "cwd": str(cwd), "env": dict(env),
                 "stderr": str(stderr)}
            )  # fmt: skip
            try:
                assert popen.stdin is not None
                popen.stdin.write(line.encode() + b"\n")
                popen.stdin.flush()
            except (OSError, ValueError) as exc:
                del self._waiting[forked.id]
                self._ended = True
                raise OSError(f"the fork server is gone: {exc}") from exc
        return forked

    def cancel(self, forked: Forked) -> None:
        """A child killed before it was started must never run (it is SIGKILLed if the server
        starts it after all)."""
        with self._lock:
            forked.cancelled = forked.pid is None

    def stop(self) -> None:
        """Start no more children (those running go on; the server exits after them)."""
        with self._lock:
            self._ended = True
            popen = self._popen
        if popen is not None and popen.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                popen.stdin.close()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._popen is not None:
            return self._popen
        if self._ended:
            raise OSError("the fork server has stopped")
        self._popen = subprocess.Popen(
            [sys.executable, "-P", "-m", __name__],
            env=self._env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        reader = threading.Thread(
            target=self._read, args=(self._popen.stdout,), name="teamdeck-forkserver", daemon=True
        )
        reader.start()
        return self._popen

    def _read(self, out: IO[bytes]) -> None:
        for raw in out:
            try:
                answer = json.loads(raw)
                forked = self._waiting.pop(int(answer["id"]), None) if "id" in answer else None
            except (ValueError, KeyError, TypeError):
                log.warning("fork server: unreadable answer %r", raw[:200])
                continue
            if forked is None:
                if answer.get("ready") is False:
                    log.warning("fork server cannot fork: %s", answer.get("error"))
                continue
            if "pid" in answer:
                with self._lock:
                    forked.pid = int(answer["pid"])
                    cancelled = forked.cancelled
                if cancelled:  # killed before it started: it must not run
                    with contextlib.suppress(OSError):
                        os.kill(forked.pid, signal.SIGKILL)
            else:
                forked.error = str(answer.get("error") or "unknown error")
        with self._lock:  # the server ended: what it did not answer was never started
            self._ended = True
            for forked in self._waiting.values():
                forked.lost = True
            self._waiting.clear()
        if self._popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(timeout=5)


# ---------------------------------------------------------------------------------- the server


def _answer(data: dict[str, Any]) -> None:
    with contextlib.suppress(BrokenPipeError):  # the runtime is gone: stdin ends next
        os.write(1, json.dumps(data).encode() + b"\n")


def serve() -> int:
    """The server's loop: fork a child per request until stdin ends, then wait for them.
    Returns in each child too, with the child's exit code (its teammate's run)."""
    from app.runtime.runners.priority import batch_priority

    batch_priority()  # children inherit it; the imports below are its whole cost
    from app.runtime.runners.launch import AGENT_MAIN

    for name in (AGENT_MAIN, *PRELOAD):
        importlib.import_module(name)
    if threading.active_count() != 1:
        _answer({"ready": False, "error": "a thread started while importing"})
        return 1
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
    _answer({"ready": True})
    for raw in sys.stdin.buffer:
        try:
            request = json.loads(raw)
            rid = int(request["id"])
        except (ValueError, KeyError, TypeError):
            continue
        try:
            if not Path(request["cwd"]).is_dir():
                raise OSError(f"no such folder: {request['cwd']}")
            stderr_fd = _open_stderr(Path(request["stderr"]))
        except (OSError, KeyError, TypeError) as exc:
            _answer({"id": rid, "error": str(exc) or type(exc).__name__})
            continue
        pid = os.fork()
        if pid == 0:
            return _child(AGENT_MAIN, request, stderr_fd)
        os.close(stderr_fd)
        _answer({"id": rid, "pid": pid})
    with contextlib.suppress(ChildProcessError):  # SIGCHLD ignored: returns once all ended
        while True:
            os.waitpid(-1, 0)
    return 0


def _open_stderr(path: Path) -> int:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def _child(entry_module: str, request: dict[str, Any], stderr_fd: int) -> int:
    """In the forked child: become the process ``subprocess`` would have started (``python -P
    -m entry_module *args``), then run the entry point's ``main``."""
    args = [str(a) for a in request["args"]]
    _set_title([sys.executable, "-P", "-m", entry_module, *args])  # as ps and pgrep know it
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # its commands and hooks are waited on
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(stderr_fd, 2)
    os.close(null)
    os.close(stderr_fd)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 -- the process's own stream
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in request["env"].items()})
    entry: Any = importlib.import_module(entry_module)  # by name: the runners sit below it
    sys.argv = [entry.__file__, *args]
    return int(entry.main(args))


def _set_title(argv: Sequence[str]) -> None:
    """Show ``argv`` as this process's command line (``/proc/<pid>/cmdline``)."""
    try:
        from setproctitle import setproctitle
    except ImportError:  # not installed: the child shows the server's command line
        return
    setproctitle(" ".join(argv))


if __name__ == "__main__":
    sys.exit(serve())

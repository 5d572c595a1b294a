"""Teammate processes forked from one pre-imported server (``process`` mode, Linux).

Starting a teammate process costs about a second of CPU, nearly all of it imports (the SDK, its
pydantic models, the runtime). A lead that spawns 8 teammates at once on 2 cores pays 8 of
them: the team works only after ~5 s, and the machine (the dashboard with it) is saturated
meanwhile (bench/live.py's ``process0`` row). The fork server pays it once: a process of the
lead's runtime that imports what a teammate process needs, then forks one child per teammate;
each child sets its session, standard streams, folder and environment as ``subprocess`` would,
and runs the teammate entry point (``app.runtime.agent_main``) in the modules already loaded.

The server talks to its runtime only: over a socketpair made for it (``--control-fd N``, its
stdin and stdout are ``/dev/null``), which no other process can open (``/proc/<pid>/fd`` does
not reopen a socket, unlike a pipe). The protocol is one JSON object per line each way. The
runtime sends requests ``{"id", "nonce", "args", "cwd", "env", "stderr", "credentialsFd"?}``
(``args``: the entry point's arguments; ``env``: the child's whole environment; ``stderr``: the
file its stderr appends to; ``nonce``: random, per request; ``credentialsFd``: true when a
descriptor for the child's credentials comes with the line, see below). The server answers,
in order: ``{"ready": true}`` once imported, then ``{"id", "nonce", "pid"}`` per child started
or ``{"id", "nonce", "error"}`` for one it could
not start (one line, e.g. a missing folder). The runtime takes an answer only for a request it
sent and is still waiting for, with the same nonce; anything else is refused and logged. The
server refuses an id it has already seen.

The credentials of a forked child go to it as :mod:`~app.runtime.runners.handoff` gives them to
an exec'd one: a socketpair holding them, its other end closed, whose descriptor the child
inherits and names with ``--credentials-fd``. The *runtime* makes that socketpair and sends the
descriptor with the request's line (``SCM_RIGHTS``): the server passes it on unread, so the key
is never in the server's memory (no ``/proc/<pid>/mem`` of the server, nor a core dump of it,
holds it); it closes its copy right after the fork. A child keeps no descriptor of the
server's (the control socket, its siblings' credentials).

Guarantees, so that a forked teammate is the process ``subprocess`` would have started:

* The server's environment is the runtime's without the API credentials (``child_env``), as a
  teammate's is; a request whose interpreter settings (``PYTHON*`` variables) differ from the
  server's, or any request when the server cannot run, is started by ``subprocess`` instead.
* Each child leads a process group of its own, in the server's session (no terminal), with
  stdin and stdout on ``/dev/null``; it runs to the end of the interpreter (``atexit`` and
  logging shut down as usual).
* The server is single-threaded when it forks (checked), ignores ``SIGCHLD`` so that its
  children are reaped as they end (a dead teammate's pid is gone at once, no zombie), and when
  the runtime closes its end of the socket it starts no more children and waits for the running ones
  before it exits -- teammates outlive the dashboard, and still have a parent that reaps them.

``TEAMDECK_FORKSERVER=0`` turns it off (every teammate process is exec'd).
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import itertools
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.runtime.model.client import SDK_MODULES
from app.runtime.runners.handoff import CREDENTIALS_FD_OPTION, socket_holding

log = logging.getLogger(__name__)

ENABLED_ENV = "TEAMDECK_FORKSERVER"
#: What a teammate process imports before it starts work, besides its entry point
#: (``launch.AGENT_MAIN``): what the entry point imports once its priority is lowered, then
#: the model SDK its client is built with (``make_client`` imports it at that first use: most of
#: the second a teammate's start costs, offline too) and the files it reads first.
PRELOAD = (
    "app.runtime.runners.teammate_process",
    "app.runtime.model.credentials",
    "app.runtime.runners.handoff",
    "app.runtime.offline.policies",
    *SDK_MODULES,
    "app.core.mailbox",
    "app.core.tasks",
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
    nonce: str = field(default_factory=lambda: secrets.token_hex(16), repr=False)
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
        self._socket: socket.socket | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, Forked] = {}
        self._lock = threading.Lock()
        self._ended = False
        #: Answers refused (an id not waiting, a wrong nonce): logged, never acted on.
        self.refused = 0

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen is not None else None

    def usable_for(self, env: Mapping[str, str]) -> bool:
        """Whether a child with environment ``env`` can be forked from this server."""
        return not self._ended and interpreter_settings(env) == self._settings

    def spawn(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stderr: Path,
        credentials: Mapping[str, str] | None = None,
    ) -> Forked:
        """Ask for a child running the teammate entry point with ``args`` (and
        ``--credentials-fd`` for ``credentials``); answered later (see :class:`Forked`).
        OSError if the server cannot take it (ended, or cannot start)."""
        if not self.usable_for(env):
            raise OSError("the fork server cannot start this process")
        with self._lock:
            sock = self._started()
            forked = Forked(next(self._ids))
            self._waiting[forked.id] = forked
            request: dict[str, Any] = {
                "id": forked.id, "nonce": forked.nonce, "args": list(args), "cwd": str(cwd),
                "env": dict(env), "stderr": str(stderr),
            }  # fmt: skip
            held = socket_holding(credentials) if credentials else None
            if held is not None:
                request["credentialsFd"] = True
            line = json.dumps(request).encode() + b"\n"
            try:
                sent = socket.send_fds(sock, [line], [held.fileno()]) if held else 0
                sock.sendall(line[sent:])
            except OSError as exc:
                del self._waiting[forked.id]
                self._ended = True
                raise OSError(f"the fork server is gone: {exc}") from exc
            finally:
                if held is not None:
                    held.close()  # the server has its copy (or none: it is gone)
        return forked

    def start(self) -> None:
        """Start the server now, before the first request: its imports (a second of CPU, at
        the teammates' priority) then overlap whatever comes before the first teammate (the
        lead's turn after it made the team) instead of delaying every teammate of the first
        spawn. OSError if it cannot start (each spawn then says so, and is exec'd)."""
        with self._lock:
            self._started()

    def cancel(self, forked: Forked) -> None:
        """A child killed before it was started must never run (it is SIGKILLed if the server
        starts it after all)."""
        with self._lock:
            forked.cancelled = forked.pid is None

    def stop(self) -> None:
        """Start no more children (those running go on; the server exits after them)."""
        with self._lock:
            self._ended = True
            sock = self._socket
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)

    def answered(self, answer: Mapping[str, Any]) -> bool:
        """Take one answer of the server (what the reader does with each line): True if it
        was for a request this runtime sent and still waits for, with its nonce; anything else
        is refused (logged, and nothing recorded)."""
        if "id" not in answer:
            if answer.get("ready") is False:
                log.warning("fork server cannot fork: %s", answer.get("error"))
            return answer.get("ready") is True
        rid, pid = answer["id"], answer.get("pid")
        with self._lock:
            forked = self._waiting.get(rid) if type(rid) is int else None
            nonce = answer.get("nonce")
            if (
                forked is None
                or not isinstance(nonce, str)
                or not secrets.compare_digest(nonce, forked.nonce)
                or (pid is not None and (type(pid) is not int or pid <= 1))
            ):
                self.refused += 1
                log.warning("fork server: refused an answer it was not asked for: %.200r", answer)
                return False
            del self._waiting[forked.id]
            if pid is None:
                forked.error = str(answer.get("error") or "unknown error")
                return True
            forked.pid = pid
            cancelled = forked.cancelled
        if cancelled:  # killed before it started: it must not run
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return True

    def _started(self) -> socket.socket:
        if self._socket is not None:
            return self._socket
        if self._ended:
            raise OSError("the fork server has stopped")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._popen = subprocess.Popen(
                [sys.executable, "-P", "-m", __name__, "--control-fd", str(theirs.fileno())],
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        self._socket = ours
        reader = threading.Thread(
            target=self._read, args=(ours,), name="teamdeck-forkserver", daemon=True
        )
        reader.start()
        return ours

    def _read(self, sock: socket.socket) -> None:
        with sock.makefile("rb") as lines:
            for raw in _lines(lines):
                try:
                    answer = json.loads(raw)
                    if not isinstance(answer, dict):
                        raise TypeError("not an object")
                    self.answered(answer)
                except (ValueError, KeyError, TypeError):
                    log.warning("fork server: unreadable answer %r", raw[:200])
        with self._lock:  # the server ended: what it did not answer was never started
            self._ended = True
            for forked in self._waiting.values():
                forked.lost = True
            self._waiting.clear()
        with contextlib.suppress(OSError):
            sock.close()
        if self._popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(timeout=5)


def _lines(stream: Iterable[bytes]) -> Iterable[bytes]:
    with contextlib.suppress(OSError):  # a reset connection ends the stream too
        yield from stream


# ---------------------------------------------------------------------------------- the server


class _Control:
    """The server's end of its socketpair with the runtime: request lines, and the
    descriptors that came with them (in order: a request with ``credentialsFd`` takes the
    next one)."""

    def __init__(self, fd: int) -> None:
        self.socket = socket.socket(fileno=fd)
        self.fds: collections.deque[int] = collections.deque()

    @property
    def requests(self) -> Iterator[bytes]:
        buffer = b""
        while True:
            data, fds, _flags, _addr = socket.recv_fds(self.socket, 65536, 8)
            self.fds.extend(fds)
            if not data:
                return
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            yield from (line + b"\n" for line in lines)

    def credentials(self, request: dict[str, Any]) -> socket.socket | None:
        """The descriptor that came with ``request`` (see ``credentialsFd``), if any."""
        if request.pop("credentialsFd", None) is not True or not self.fds:
            return None
        return socket.socket(fileno=self.fds.popleft())

    def answer(self, data: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # the runtime is gone: the requests end next
            self.socket.sendall(json.dumps(data).encode() + b"\n")

    def close(self) -> None:
        """In a child: it must hold nothing of the server's (nor a sibling's credentials)."""
        self.socket.close()
        while self.fds:
            with contextlib.suppress(OSError):
                os.close(self.fds.popleft())


def serve(control_fd: int) -> int:
    """The server's loop: fork a child per request until the runtime closes its end, then wait
    for them. Returns in each child too, with the child's exit code (its teammate's run)."""
    from app.runtime.runners.priority import TEAM_SESSION_NICE, batch_priority, session_priority

    control = _Control(control_fd)
    batch_priority(session=False)  # children inherit it; the imports below are its whole cost
    session_priority(TEAM_SESSION_NICE)  # the team's session: its children's, not led by them
    from app.runtime.runners.launch import AGENT_MAIN

    for name in (AGENT_MAIN, *PRELOAD):
        importlib.import_module(name)
    from app.runtime.model.warm_up import warm_up
    from app.runtime.scheduling.gc_pauses import freeze_long_lived

    warm_up()  # the SDK's first response, once for every child (model.warm_up)
    freeze_long_lived()  # the children's collections leave the shared heap alone (gc_pauses)
    if threading.active_count() != 1:
        control.answer({"ready": False, "error": "a thread started while importing"})
        return 1
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
    control.answer({"ready": True})
    seen: set[int] = set()
    for raw in _lines(control.requests):
        try:
            request = json.loads(raw)
            rid, nonce = int(request["id"]), str(request["nonce"])
        except (ValueError, KeyError, TypeError):
            continue
        held = control.credentials(request)
        if rid in seen:  # a request id is used once
            if held is not None:
                held.close()
            continue
        seen.add(rid)
        try:
            if not Path(request["cwd"]).is_dir():
                raise OSError(f"no such folder: {request['cwd']}")
            stderr_fd = _open_stderr(Path(request["stderr"]))
        except (OSError, KeyError, TypeError) as exc:
            control.answer({"id": rid, "nonce": nonce, "error": str(exc) or type(exc).__name__})
            if held is not None:
                held.close()
            continue
        pid = os.fork()
        if pid == 0:
            control.close()
            if held is not None:
                request["args"] = [*request["args"], CREDENTIALS_FD_OPTION, str(held.detach())]
            return _child(AGENT_MAIN, request, stderr_fd)
        if held is not None:  # the child has it; the server keeps none
            held.close()
        os.close(stderr_fd)
        control.answer({"id": rid, "nonce": nonce, "pid": pid})
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
    # A process group of its own (signals to the group reach it and what it started), in the
    # server's session: that session has no terminal (the server started one of its own), so
    # the person's ctrl+c never reaches it, and the kernel's autogroup scheduling weighs the
    # whole team as one session against the dashboard's -- a session per teammate weighed 25
    # teammates as 25 sessions, and the dashboard got 1/26 of a busy CPU (runners.priority).
    os.setpgid(0, 0)
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


def main(argv: Sequence[str]) -> int:
    """``python -m app.runtime.runners.forkserver --control-fd N``."""
    if len(argv) != 2 or argv[0] != "--control-fd" or not argv[1].isdigit():
        print("usage: python -m app.runtime.runners.forkserver --control-fd N", file=sys.stderr)
        return 2
    return serve(int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

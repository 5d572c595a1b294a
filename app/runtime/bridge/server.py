"""The listening side of the hook bridge: requests wait here for a person's answer.

:class:`BridgeServer` serves a :class:`~app.runtime.bridge.state.Bridge` (the held requests and
recent events) on the socket of ``wire`` (one thread per connection). Every message carries
the per-run ``secret`` the server wrote next to the socket (0600; the sandbox hides the
folder): without it a peer gets ``{"error": ...}`` and nothing is done. The operations:

- ``{"op": "hook", "event", "input", "env"}`` from the hook client (``hook_client``): the
  event is recorded; for a held request (``hold``) the server acknowledges at once
  (``{"wait": true}``) and again every ``HEARTBEAT`` seconds while the dashboard is alive
  (``Bridge.alive``), until a person answers (the reply is ``{"output": <what the hook
  prints>}``), Claude Code goes on without teamdeck (``let_go``), the server stops, or the
  hook gives up (it closed the connection: the request is withdrawn). A dashboard that stalls
  stops acknowledging, and the hook gives Claude Code back its own prompt;
- ``{"op": "list"}``: ``{"requests": [...]}``, the pending requests as ``teamdeck approvals
  --json`` prints them;
- ``{"op": "answer", "id", "allow", "always", "feedback", "rule", "input"}``: ``{"ok",
  "message"}`` (``rule``: the one "always" adds; ``input``: the input as the person edited it).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import select
import socket
import stat
import struct
import threading
from pathlib import Path
from typing import Any

from app.runtime.bridge import kept_rules, wire
from app.runtime.bridge.state import (
    ANSWERED,
    LET_GO,
    Bridge,
    HookEvent,
    _Pending,
    request_json,
)

__all__ = ["ANSWERED", "LET_GO", "Bridge", "BridgeBusyError", "BridgeServer", "HookEvent"]
__all__ += ["request_json"]

NOT_AUTHENTICATED = (
    "refused: the bridge's secret is missing or wrong (only the person's own teamdeck "
    "commands and hooks can read it)"
)


class BridgeBusyError(OSError):
    """Another teamdeck already listens on the socket."""


def prepare_folder(folder: Path) -> None:
    """The socket's folder: created 0700, and refused unless this user owns it alone."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"{folder} is not a folder of this user's")
    if stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)


def peer_uid(conn: socket.socket) -> int | None:
    """The connected process's uid (Linux ``SO_PEERCRED``); ``None`` where unavailable."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[1])


class BridgeServer:
    """Serves a :class:`Bridge` on the socket (see the module docstring)."""

    HEARTBEAT = wire.HEARTBEAT  # seconds between a held request's acknowledgements

    def __init__(self, bridge: Bridge, path: Path | None = None) -> None:
        self.bridge = bridge
        self.path = path or wire.socket_path()
        self.secret = ""
        self._sock: socket.socket | None = None
        self._stopped = threading.Event()

    def _write_secret(self) -> None:
        """A new secret for this run, 0600, next to the socket (replacing an earlier run's)."""
        self.secret = secrets.token_urlsafe(32)
        target = wire.secret_path(self.path)
        temporary = target.with_name(f".{target.name}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(self.secret + "\n")
        os.replace(temporary, target)

    def _drop_secret(self) -> None:
        target = wire.secret_path(self.path)
        with contextlib.suppress(OSError):
            if target.read_text(encoding="ascii").strip() == self.secret:
                target.unlink()

    def start(self) -> None:
        """Listen; BridgeBusyError when another teamdeck does."""
        prepare_folder(self.path.parent)
        if self.path.exists() or self.path.is_symlink():
            try:
                wire.connect(self.path, timeout=0.5).close()
            except OSError:
                self.path.unlink()  # left by a teamdeck that is gone
            else:
                raise BridgeBusyError(f"another teamdeck listens on {self.path}")
        self._write_secret()
        if self.bridge.kept_rules is None:
            self.bridge.kept_rules = kept_rules.rules_path(self.path.parent)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        wire.bind(sock, self.path)
        self.path.chmod(0o600)
        sock.listen(16)
        self._sock = sock
        threading.Thread(target=self._accept, name="bridge-accept", daemon=True).start()

    def stop(self) -> None:
        """Stop listening; every waiting hook gets no decision (Claude Code asks by itself)."""
        self._stopped.set()
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            with contextlib.suppress(OSError):
                self.path.unlink()
            self._drop_secret()
        self.bridge.release_all()

    def __enter__(self) -> BridgeServer:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopped.is_set() and self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                uid = peer_uid(conn)
                if uid is not None and uid != os.getuid():
                    return  # another user's process: not a word
                conn.settimeout(5.0)
                message = json.loads(wire.read_line(conn) or b"null")
                if not isinstance(message, dict):
                    reply: dict[str, Any] | None = {"error": "not a JSON object"}
                elif not self._authentic(message):
                    reply = {"error": NOT_AUTHENTICATED}
                else:
                    reply = self._handle(conn, message)
                if reply is not None:
                    conn.sendall(wire.encode(reply))
            except (OSError, ValueError):
                return

    def _authentic(self, message: dict[str, Any]) -> bool:
        given = message.get("secret")
        return (
            isinstance(given, str)
            and bool(self.secret)
            and hmac.compare_digest(given.encode(), self.secret.encode())
        )

    def _handle(self, conn: socket.socket, message: dict[str, Any]) -> dict[str, Any] | None:
        op = message.get("op")
        if op == "hook":
            data = message.get("input")
            env = message.get("env")
            if not isinstance(data, dict):
                return {"error": "the hook's input is not a JSON object: no decision"}
            pending = self.bridge.report(
                str(message.get("event") or ""),
                data,
                {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
            )
            if pending is None:
                return {}
            if not self._wait(conn, pending):
                self.bridge.withdraw(pending)
                return None
            return {"output": pending.output} if pending.output else {}
        if op == "list":
            return {"requests": self.bridge.listing()}
        if op == "answer":
            rule, edited = message.get("rule"), message.get("input")
            ok, text = self.bridge.answer(
                str(message.get("id") or ""),
                allow=bool(message.get("allow")),
                always=bool(message.get("always")),
                feedback=message.get("feedback")
                if isinstance(message.get("feedback"), str)
                else None,
                rule=rule if isinstance(rule, str) else None,
                tool_input=edited if isinstance(edited, dict) else None,
            )
            return {"ok": ok, "message": text}
        return {"error": f"unknown op {op!r}"}

    def _wait(self, conn: socket.socket, pending: _Pending) -> bool:
        """Acknowledge and wait for the answer, acknowledging again every ``HEARTBEAT``
        seconds while the person's side is alive; False when the hook is gone (it closed its
        end: it gave up) or the dashboard stalled (no more acknowledgements: the hook gives
        Claude Code its own prompt back)."""
        acknowledgement = wire.encode({"wait": True})
        while not pending.done.is_set():
            if not self.bridge.is_alive():
                return False
            try:
                conn.sendall(acknowledgement)
            except OSError:
                return False
            if pending.done.wait(self.HEARTBEAT):
                break
            readable, _, _ = select.select([conn], [], [], 0)
            if readable:
                try:
                    if not conn.recv(1, socket.MSG_PEEK):
                        return False
                except OSError:
                    return False
        return True

"""What both ends of the hook bridge share: where the socket is and how a message travels.

Standard library only (and imported by the hook client, which must start fast): no pydantic,
no ``app.core``.

The socket is ``<teamdeck home>/bridge/claude.sock`` (``$TEAMDECK_HOME``, else
``~/.teamdeck``), in a folder only its owner may enter (0700) and that the sandbox hides from
commands; the server also checks each peer's uid (``SO_PEERCRED``) and that every message
carries the per-run secret it wrote next to the socket (``secret``, 0600): a process of the
same user that cannot read that file is refused. A message is one JSON object on one line: the
client writes its line; the server answers with one line (or closes with none), a held hook
request first with acknowledgements (``{"wait": true}``, see ``hook_client``). A client that
closes before the answer withdraws its request (a hook Claude Code gave up on).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from app.runtime.bridge.hook_client import (
    HEARTBEAT,
    MAX_SUN_PATH,
    REQUEST_WAIT,
    SECRET_NAME,
    SOCKET_NAME,
    read_secret,
)

__all__ = ["HEARTBEAT", "REQUEST_WAIT", "SECRET_NAME", "SOCKET_NAME"]

_MAX_SUN_PATH = MAX_SUN_PATH
#: Seconds a client waits for the server to take a message that needs no answer.
TELL_WAIT = 2.0


def teamdeck_home() -> Path:
    """``$TEAMDECK_HOME``, else ``~/.teamdeck`` (as ``app.core.paths.default_home``)."""
    env = os.environ.get("TEAMDECK_HOME")
    return Path(env).expanduser() if env else Path.home() / ".teamdeck"


def socket_path(home: Path | None = None) -> Path:
    return (home or teamdeck_home()) / "bridge" / SOCKET_NAME


def secret_path(socket: Path | None = None) -> Path:
    """The per-run secret next to the socket ``socket``."""
    return (socket or socket_path()).parent / SECRET_NAME


def _address(path: Path) -> tuple[str, int | None]:
    """An address ``AF_UNIX`` accepts for ``path``: the path itself, or (too long a path) the
    socket's name under ``/proc/self/fd/N`` of its folder opened ``O_PATH`` (Linux), with the
    descriptor to close afterwards."""
    text = str(path)
    if len(os.fsencode(text)) <= _MAX_SUN_PATH or not hasattr(os, "O_PATH"):
        return text, None
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    return f"/proc/self/fd/{folder}/{path.name}", folder


def bind(sock: socket.socket, path: Path) -> None:
    address, folder = _address(path)
    try:
        sock.bind(address)
    finally:
        if folder is not None:
            os.close(folder)


def connect(path: Path | None = None, timeout: float = 1.0) -> socket.socket:
    """A connected socket to the server at ``path``; OSError when nobody listens."""
    path = path or socket_path()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        address, folder = _address(path)
        try:
            sock.connect(address)
        finally:
            if folder is not None:
                os.close(folder)
    except BaseException:
        sock.close()
        raise
    return sock


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def read_line(sock: socket.socket, limit: int = 16 << 20) -> bytes:
    """Bytes up to the first newline (or the end); ValueError past ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise ValueError("message too long")
    return b"".join(chunks)


def ask(message: dict[str, Any], *, path: Path | None = None, wait: float = 5.0) -> Any:
    """Send ``message`` (with the secret) and return the server's answer (``None`` when it
    closed without one).
    OSError when nobody listens, TimeoutError when no answer came within ``wait`` seconds."""
    path = path or socket_path()
    secret = read_secret(str(path.parent))
    with connect(path, timeout=1.0) as sock:
        sock.sendall(encode({**message, "secret": secret}))
        sock.settimeout(wait)
        line = read_line(sock)
    return json.loads(line) if line.strip() else None

"""Handing the API credentials to a teammate process over a channel no other process can open.

A teammate process needs the key to call the API, but nothing else may read it: not its
environment (which every command it runs would inherit, and ``/proc/<pid>/environ`` shows),
not a file, not a named pipe (any process of the same user can open one, and can reopen an
ordinary pipe through ``/proc/<pid>/fd/N``). A Unix socket is the exception: ``/proc/<pid>/fd``
will not open one (ENXIO), so the key travels over sockets only.

* ``process`` teammates inherit it: :func:`socket_holding` is a socketpair whose other end
  already holds the credentials and is closed, so the child's end -- passed to the child with
  ``pass_fds`` when it is exec'd, inherited when it is forked, and named by
  ``--credentials-fd N`` -- reads them to EOF and nothing else ever holds it.
* ``tmux`` teammates are started by the tmux server, so they inherit nothing:
  :class:`SocketOffer` listens on a Unix socket in a private folder (0700) and serves the
  credentials once, only to the peer whose pid (``SO_PEERCRED``) is the teammate's process;
  anything else that connects is refused and logged. Unserved within ``OFFER_TIMEOUT`` seconds,
  the socket and its folder are removed.

The teammate (``teamdeck agent --credentials-fd N`` or ``--credentials-socket PATH``) reads
them with :func:`receive_fd` / :func:`receive_socket` and keeps them in memory only
(``credentials.hold``).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import stat
import struct
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

#: The teammate entry point's option naming its inherited credentials descriptor.
CREDENTIALS_FD_OPTION = "--credentials-fd"
OFFER_TIMEOUT = 60.0
RECEIVE_TIMEOUT = 30.0
#: More is not credentials.
MAX_SIZE = 64 * 1024
_PEERCRED = struct.Struct("3i")  # pid, uid, gid


class HandoffError(OSError):
    """The credentials could not be handed over (one line)."""


def encode(credentials: Mapping[str, str]) -> bytes:
    return json.dumps(dict(credentials)).encode()


def decode(data: bytes) -> dict[str, str]:
    if not data:  # a channel exists only for credentials: an empty one was refused or cut
        raise HandoffError("no credentials came through the handoff")
    try:
        values = json.loads(data)
    except ValueError as exc:
        raise HandoffError(f"unreadable credentials: {exc}") from None
    if not isinstance(values, dict):
        raise HandoffError("unreadable credentials: not an object")
    return {str(k): v for k, v in values.items() if isinstance(v, str)}


def socket_holding(credentials: Mapping[str, str]) -> socket.socket:
    """The child's end of a socketpair that holds ``credentials``, the other end closed (so a
    reader gets them, then EOF). Not inheritable: pass its ``fileno()`` in ``pass_fds`` (or
    fork), then close it in the parent."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        ours.sendall(encode(credentials))  # far below the socket's buffer: never blocks
    except OSError:
        theirs.close()
        raise
    finally:
        ours.close()
    return theirs


def _read_to_eof(sock: socket.socket, timeout: float, what: str) -> dict[str, str]:
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(MAX_SIZE):
            data += chunk
            if len(data) > MAX_SIZE:
                raise HandoffError(f"too much data from {what}")
    except TimeoutError:
        raise HandoffError(f"no credentials came through {what} within {timeout:g}s") from None
    except OSError as exc:
        if isinstance(exc, HandoffError):
            raise
        raise HandoffError(f"cannot read the credentials from {what}: {exc}") from None
    return decode(data)


def receive_fd(fd: int, timeout: float = RECEIVE_TIMEOUT) -> dict[str, str]:
    """Read the credentials from inherited descriptor ``fd`` (a Unix socket, nothing else) and
    close it."""
    try:
        is_socket = stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError as exc:
        raise HandoffError(f"no credentials descriptor {fd}: {exc.strerror}") from None
    if not is_socket:
        os.close(fd)
        raise HandoffError(f"credentials descriptor {fd} is not a socket")
    with socket.socket(fileno=fd) as sock:
        return _read_to_eof(sock, timeout, f"descriptor {fd}")


def receive_socket(path: Path, timeout: float = RECEIVE_TIMEOUT) -> dict[str, str]:
    """Connect to the runtime's offer at ``path`` and read the credentials."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError as exc:
            raise HandoffError(f"cannot reach the credentials at {path}: {exc}") from None
        return _read_to_eof(sock, timeout, str(path))


def peer_pid(sock: socket.socket) -> tuple[int, int]:
    """The (pid, uid) of the process at the other end of a Unix socket (Linux)."""
    pid, uid, _gid = _PEERCRED.unpack(
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    )
    return pid, uid


def parent_of(pid: int) -> int | None:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat_line.rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descends_from(pid: int, ancestor: int, depth: int = 4) -> bool:
    """``pid`` is ``ancestor`` or its child, grandchild... (at most ``depth`` levels: a shell
    that forks instead of ``exec``-ing the command)."""
    for _ in range(depth + 1):
        if pid == ancestor:
            return True
        parent = parent_of(pid)
        if parent is None or parent <= 1:
            return False
        pid = parent
    return False


class SocketOffer:
    """The credentials, served once over a Unix socket to one process (``tmux`` mode).

    ``path`` exists at once (in a fresh 0700 folder); the teammate connects to it. Only a peer
    of this user whose pid is the one given to :meth:`expect` (or a process below it, within a
    few levels) gets the credentials; every other connection is closed unanswered and logged.
    A connection made before :meth:`expect` is judged once the pid is known.
    """

    def __init__(self, credentials: Mapping[str, str], timeout: float = OFFER_TIMEOUT) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="teamdeck-key-"))
        self.path = self.folder / "credentials.sock"
        self.timeout = timeout
        self.refused = 0
        self.served = threading.Event()
        self._payload = encode(credentials)
        self._pid: int | None = None
        self._known = threading.Event()
        self._closed = False
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(str(self.path))
            self._listener.listen(8)
        except OSError:
            self._listener.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        threading.Thread(target=self._serve, name="credentials-offer", daemon=True).start()

    def expect(self, pid: int) -> None:
        """The teammate's process: the one peer served."""
        self._pid = pid
        self._known.set()

    def close(self) -> None:
        """Serve nobody any more (the teammate could not be started)."""
        self._closed = True
        self._known.set()
        self._remove()

    def _remove(self) -> None:
        self._payload = b""
        self._listener.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _serve(self) -> None:
        deadline = time.monotonic() + self.timeout
        try:
            while not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("credentials not handed over: nobody came for them in time")
                    return
                self._listener.settimeout(left)
                try:
                    conn, _ = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:  # closed meanwhile
                    return
                with conn:
                    if self._judge(conn, deadline):
                        conn.sendall(self._payload)
                        self.served.set()
                        return
        finally:
            self._remove()

    def _judge(self, conn: socket.socket, deadline: float) -> bool:
        pid, uid = peer_pid(conn)
        self._known.wait(max(0.0, deadline - time.monotonic()))
        expected = self._pid
        if self._closed or expected is None:
            return False
        if uid == os.getuid() and descends_from(pid, expected):
            return True
        self.refused += 1
        log.warning("credentials refused to process %d (not the teammate, %d)", pid, expected)
        return False

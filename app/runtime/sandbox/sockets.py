"""An allowlist of Unix sockets that means only the listed ones.

With ``sandbox.network.allowUnixSockets`` (or ``--allow-unix-socket``) the socket filter lets a
command make ``AF_UNIX`` sockets (:mod:`.seccomp` cannot tell one path from another), so every
path socket the command can see would answer it: a docker or gpg agent socket, the system bus.
The file system holds the line instead: every listening path socket of the machine
(``/proc/net/unix``) that the command could see and that is not listed is covered by an empty
read-only file in the sandbox, so ``connect()`` finds no socket there. A socket bound after the
command started is not in that list (the README says so); without the network, abstract
sockets are in the sandbox's own namespace and answer nobody.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

PROC_NET_UNIX = Path("/proc/net/unix")


def bound_socket_paths(table: Path = PROC_NET_UNIX) -> list[str]:
    """The paths of the path sockets bound on this machine (abstract ones left out)."""
    try:
        lines = table.read_text("utf-8", "replace").splitlines()[1:]
    except OSError:
        return []
    paths: list[str] = []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith("/"):
            paths.append(fields[7])
    return list(dict.fromkeys(paths))


def unlisted_sockets(
    listed: Iterable[Path], hidden: Iterable[Path], shown: Iterable[Path]
) -> list[Path]:
    """The sockets a command would see that the allowlist does not name: bound, present, not
    inside a folder the sandbox replaces (``hidden``, ``/tmp``) unless that part is shown
    again (``shown``: the writable roots)."""
    allowed = {_real(p) for p in listed}
    gone = [Path("/tmp"), *hidden]
    back = list(shown)
    out: list[Path] = []
    for text in bound_socket_paths():
        path = Path(text)
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        if _real(path) in allowed:
            continue
        if _inside(path, gone) and not _inside(path, back):
            continue  # not in sight anyway (and a mount there would have no place)
        out.append(path)
    return out


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)

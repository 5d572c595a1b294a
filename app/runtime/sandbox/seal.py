"""Stand-ins for the protected names a project lacks (``.git``, ``.claude``, ``.mcp.json``,
``.gitmodules``): bubblewrap mounts an empty read-only folder or file there so that a command
cannot create one (a ``git init && git config core.fsmonitor ./x`` would run ``x`` at the
person's next ``git status``). A mount needs a place, made in the real project: teamdeck makes
it before the command and removes it afterwards if it is still empty, unless another sandboxed
command (of any teamdeck process) still has it mounted.

Each command holds a shared lock on the project's lock file from before it looks at which
names exist until it has ended; the removal takes the lock exclusively without waiting. The
lock file lists the stand-ins made (they are teamdeck's, not the person's), so the last
command out removes them all, whoever made them. Looking under the lock matters: a command
that saw another's stand-in as an existing name mounts it where it is, and without the lock
the other's removal took that place away before bubblewrap started ("Can't find source path").
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from app.runtime.sandbox.layout import PROTECTED_NAMES, SEALED_DIRS, sealed_names


def _lock_path(root: Path) -> Path:
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / f"teamdeck-seal-{os.getuid()}-{digest}.lock"


@contextlib.contextmanager
def seal_stand_ins(roots: Sequence[Path]) -> Iterator[tuple[list[Path], list[Path]]]:
    """Under a shared lock on each project root (kept while the command runs): the
    ``(folders, files)`` among the protected names that were absent, their stand-ins made;
    afterwards the last command out removes every stand-in left empty."""
    roots = sorted({r for r in roots if r.name != ".git" and r.is_dir()})
    locks: list[tuple[Path, int]] = []
    try:
        for root in roots:
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
            fd = os.open(_lock_path(root), flags, 0o600)
            locks.append((root, fd))
            fcntl.flock(fd, fcntl.LOCK_SH)
        dirs, files = sealed_names(roots)
        made: list[Path] = []
        # A stand-in that cannot be made: bubblewrap then refuses to start (fail closed).
        for path in dirs:
            with contextlib.suppress(OSError):
                path.mkdir()
                made.append(path)
        for path in files:
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
                made.append(path)
        for root, fd in locks:
            names = "".join(f"{p.name}\n" for p in made if p.parent == root)
            if names:
                os.write(fd, names.encode())
        yield dirs, files
    finally:
        for _, fd in locks:
            fcntl.flock(fd, fcntl.LOCK_UN)
        if locks and all(_try_exclusive(fd) for _, fd in locks):
            for root, fd in locks:
                _remove_empty(root, _listed(fd))
                os.ftruncate(fd, 0)
        for _, fd in locks:
            os.close(fd)


def _try_exclusive(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _listed(fd: int) -> set[str]:
    """The stand-ins' names a lock file lists (only protected names: nothing else is removed)."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    names = b"".join(chunks).decode(errors="replace").splitlines()
    return {n for n in names if n in PROTECTED_NAMES}


def _remove_empty(root: Path, names: set[str]) -> None:
    for name in sorted(names):
        path = root / name
        if name in SEALED_DIRS:
            with contextlib.suppress(OSError):  # not empty (or gone): the person's now, kept
                path.rmdir()
            continue
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if st.st_size == 0 and not os.path.islink(path) and os.path.isfile(path):
                path.unlink()


#: Where the sandboxed command's git finds its ignore file (inside the sandbox's own /tmp).
EXCLUDE_INSIDE = "/tmp/.teamdeck-git-exclude"


def git_exclude(files: Sequence[Path]) -> Path | None:
    """A file of ignore patterns for the sandboxed command's git: the person's own global
    ignore file's, plus the file stand-ins (an empty read-only ``.mcp.json`` is no file for
    ``git add -A`` to commit). ``None`` when there are no file stand-ins."""
    if not files:
        return None
    lines = [_global_excludes(), *(f"/{p.name}" for p in files)]
    text = "\n".join(line for line in lines if line) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    path = Path(tempfile.gettempdir()) / f"teamdeck-exclude-{os.getuid()}-{digest}"
    if not path.is_file():
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        scratch.write_text(text)
        os.replace(scratch, path)
    return path


@functools.cache
def _global_excludes() -> str:
    try:
        done = subprocess.run(
            ["git", "config", "--global", "--get", "core.excludesFile"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    named = done.stdout.strip()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    where = Path(os.path.expanduser(named)) if named else Path(base) / "git" / "ignore"
    try:
        return where.read_text(errors="replace").rstrip("\n")
    except OSError:
        return ""

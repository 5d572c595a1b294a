"""Atomic JSON writes, tolerant reads and quarantine of corrupt files.

Writes: temp file in the same directory (exclusive create, 0600, never following a symlink)
-> write -> fsync -> ``os.replace`` -> fsync the directory. A reader never sees half a file
written by teamdeck, and a crash leaves either the old or the new file.

Reads tolerate a half-written file from another program: a parse error is retried for ~50 ms;
if it stays broken a copy is moved aside as ``{name}.corrupt-{timestamp}`` and CorruptFileError
names the file. A missing file is reported as missing (``None``), never confused with "empty".

Modes. A rewritten file keeps its permission bits. A new file gets teamdeck's 0600 (folders
0700) -- except inside a Claude Code home (``mark_claude_home``), which is someone else's: there
new files get the mode Claude Code's own writes give them (Node's ``writeFileSync`` and
``mkdirSync`` under the usual umask 022: 0644 and 0755), and a corrupt file is reported but never
copied aside (nothing of ours is left in that home).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from app.core.errors import (
    CorruptFileError,
    DiskFullError,
    UnreadableFileError,
    UnsafePathError,
)
from app.core.json_text import (  # re-exported: the text every file here is written in
    array_head_end as array_head_end,
)
from app.core.json_text import (
    dumps as dumps,
)
from app.core.json_text import (
    dumps_array as dumps_array,
)
from app.core.json_text import (
    encode_entry as encode_entry,
)
from app.core.json_text import (
    encode_text as encode_text,
)
from app.core.json_text import (
    escape_surrogates as escape_surrogates,
)
from app.core.json_text import (
    splice_parts as splice_parts,
)

T = TypeVar("T")
StrPath = str | os.PathLike[str]
READ_RETRIES = 5
READ_RETRY_DELAY = 0.01
DIR_MODE = 0o700
FILE_MODE = 0o600
CLAUDE_DIR_MODE = 0o755
CLAUDE_FILE_MODE = 0o644
TEMP_MARK = ".tmp-"

_claude_roots: set[str] = set()


def mark_claude_home(root: Path) -> None:
    """Treat everything under ``root`` as Claude Code's (see the module docstring)."""
    _claude_roots.add(os.path.join(os.path.abspath(root), ""))


def in_claude_home(path: StrPath) -> bool:
    if not _claude_roots:
        return False
    text = os.path.abspath(path)
    return any(text.startswith(root) or text + os.sep == root for root in _claude_roots)


def new_file_mode(path: StrPath) -> int:
    return CLAUDE_FILE_MODE if in_claude_home(path) else FILE_MODE


def new_dir_mode(path: Path) -> int:
    return CLAUDE_DIR_MODE if in_claude_home(path) else DIR_MODE


#: The errnos of a full disk (ENOSPC) and of a full quota (EDQUOT).
DISK_FULL = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


@contextlib.contextmanager
def naming_full_disk(path: Path) -> Iterator[None]:
    """Turn an OSError of a full disk into DiskFullError naming ``path`` (``os.writev`` and
    ``fsync`` errors carry no file name: "[Errno 28]" alone says neither what nor where)."""
    try:
        yield
    except OSError as exc:
        raise full_disk(exc, path) from None


def ensure_dir(path: Path) -> None:
    """Create a directory (and parents) with mode 0700 (0755 in a Claude Code home); refuse a
    symlink in its place."""
    with naming_full_disk(path):
        _ensure_dir(path)


def _ensure_dir(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        mode = new_dir_mode(path)
        missing = [path]
        while not missing[-1].parent.exists() and missing[-1].parent != missing[-1]:
            missing.append(missing[-1].parent)
        for folder in reversed(missing):
            try:
                folder.mkdir(mode=mode)
            except FileExistsError:
                continue
            os.chmod(folder, mode)  # exact, whatever the umask
        return
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(f"{path} is a symlink; refusing to use it")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(f"{path} exists and is not a directory")


def check_not_symlink(path: StrPath) -> int | None:
    """Refuse to replace anything but a regular file (a symlink, a directory, a FIFO...);
    the file's permission bits (``None`` if it does not exist)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        raise UnsafePathError(f"{path} is a symlink; refusing to follow it")
    if not stat.S_ISREG(mode):
        raise UnsafePathError(f"{path} is not a regular file")
    return stat.S_IMODE(mode)


def is_temp_name(name: str) -> bool:
    return TEMP_MARK in name and name.startswith(".")


Chunks = bytes | bytearray | memoryview | Sequence[bytes | bytearray | memoryview]


def atomic_write_bytes(
    path: StrPath,
    data: Chunks,
    *,
    durable: bool = True,
    make_dirs: bool = True,
    mode: int = -1,
    renamed: Callable[[], object] | None = None,
) -> None:
    """Replace ``path`` atomically with ``data`` (see module docstring).

    ``data`` may be a sequence of chunks (written in order), so a caller can write a slice of a
    large buffer plus a small tail without first copying them into one object.
    DiskFullError (naming ``path``) if the disk is full; the temp file is removed then.
    ``make_dirs=False``: FileNotFoundError if the folder is gone, never created again (a
    writer into a team's folder must not bring back a team deleted meanwhile). ``mode``: see
    :func:`write_temp`. ``renamed``: called once the new version is the file, before the
    folder's fsync -- bookkeeping about the new version (its identity, a cache) done while
    the process's caches are warm, not after it has slept through the fsync; the call still
    returns only once the folder is fsynced."""
    try:
        tmp = write_temp(path, data, durable=durable, make_dirs=make_dirs, mode=mode)
        replace_temp(tmp, path, durable=durable and renamed is None)
    except OSError as exc:
        raise full_disk(exc, path) from None
    if renamed is not None:
        try:
            renamed()
        finally:  # the new version is the file: synced even if the bookkeeping failed
            if durable:
                try:
                    fsync_dir(os.path.dirname(path) or ".")
                except OSError as exc:
                    raise full_disk(exc, path) from None


def full_disk(exc: OSError, path: StrPath) -> OSError:
    """``exc``, or a DiskFullError naming ``path`` if it is one of a full disk."""
    code = exc.errno
    if isinstance(exc, DiskFullError) or code is None or code not in DISK_FULL:
        return exc
    return DiskFullError(code, Path(path))


def write_temp(
    path: StrPath, data: Chunks, *, durable: bool, make_dirs: bool = True, mode: int = -1
) -> str:
    """The first half of an atomic write: ``data`` in a new temp file next to ``path``
    (fsynced if ``durable``); :func:`replace_temp` (or :func:`discard_temp`) finishes it.

    ``mode``: the permission bits of the regular file at ``path``, from a caller that has
    just stat'ed it (not following a symlink) under the file's lock: its type and mode need
    no second look (and its folder exists: it passes ``make_dirs=False``). A file replaced
    by a symlink meanwhile is still never followed: the rename replaces the link itself."""
    text = os.fspath(path)
    directory, name = os.path.split(text)
    if make_dirs:
        ensure_dir(Path(directory))
    if mode < 0:
        found = check_not_symlink(text)  # a rewrite keeps the file's permission bits...
        mode = new_file_mode(text) if found is None else found  # ...a new file the home's
    for _ in range(10):
        tmp = os.path.join(directory, f".{name}{TEMP_MARK}{_pid[0]}-{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, _TEMP_FLAGS, FILE_MODE)
            break
        except FileExistsError:  # something (even a planted symlink) is there: pick another name
            continue
    else:  # pragma: no cover - ten random collisions in a row
        raise UnsafePathError(f"could not create a temp file next to {path}")
    chunks = [data] if isinstance(data, _BUFFERS) else data
    views = [memoryview(c) for c in chunks if len(c)]
    try:
        if mode != FILE_MODE:
            os.fchmod(fd, mode)
        while views:  # one writev per round; a short write resumes where it stopped
            written = os.writev(fd, views[:1024])
            while views and written >= len(views[0]):
                written -= len(views.pop(0))
            if written:
                views[0] = views[0][written:]
        if durable:
            _datasync(fd)
    except BaseException:
        os.close(fd)
        discard_temp(tmp)
        raise
    os.close(fd)
    return tmp


_BUFFERS = (bytes, bytearray, memoryview)  # a tuple: isinstance of a union costs more
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_pid = [os.getpid()]  # in temp names; a forked child's own (a system call per write otherwise)
os.register_at_fork(after_in_child=lambda: _pid.__setitem__(0, os.getpid()))


def replace_temp(tmp: StrPath, path: StrPath, *, durable: bool) -> None:
    """The second half: rename ``tmp`` over ``path`` (and fsync the folder if ``durable``)."""
    try:
        os.replace(tmp, path)
    except BaseException:
        discard_temp(tmp)
        raise
    if durable:
        fsync_dir(os.path.dirname(path) or ".")


def discard_temp(tmp: StrPath) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


#: The temp file's data and size must reach the disk before the rename; its other metadata
#: (times) need not, so ``fdatasync`` is enough where the platform has it.
_datasync = getattr(os, "fdatasync", os.fsync)


def fsync_dir(directory: StrPath) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_json(path: Path, data: Any, *, make_dirs: bool = True) -> None:
    atomic_write_bytes(path, encode_text(dumps(data)), make_dirs=make_dirs)


def file_identity(path: Path) -> tuple[int, int, int, int] | None:
    """``(inode, size, mtime_ns, ctime_ns)`` of ``path`` (not following a symlink), or
    ``None`` if it is gone: every atomic write gives a file a new identity."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` if it does not exist. Never follows a symlink, never
    blocks on a FIFO (``O_NONBLOCK``), and refuses anything that is not a regular file."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise UnsafePathError(f"{path} is a symlink; refusing to follow it") from None
        raise exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(f"{path} is not a regular file")
        # Plain reads, not a file object: ``fdopen`` costs a buffer and four system calls more,
        # which a task file or a watermark of a few bytes notices. One byte past the size
        # shows the end; a file that grew meanwhile is read on to its end.
        first = os.read(fd, st.st_size + 1)
        if len(first) <= st.st_size:
            return first
        chunks = [first]
        while chunk := os.read(fd, max(st.st_size, 65536)):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


CORRUPT_MARK = ".corrupt-"


def quarantine(path: Path, data: bytes | None = None) -> Path | None:
    """Copy a corrupt file aside as ``{name}.corrupt-{timestamp}``; return the copy's path.

    The original is left in place, untouched. If an earlier copy with the same bytes exists it
    is reused, so re-reading a broken file (a UI refreshing, say) does not pile up copies.
    Inside a Claude Code home nothing is copied (``None``): the file is only reported."""
    if in_claude_home(path):
        return None
    try:
        if data is None:
            data = read_bytes(path)
            if data is None:
                return None
        prefix = path.name + CORRUPT_MARK
        with os.scandir(path.parent) as entries:
            for entry in entries:
                if not entry.name.startswith(prefix) or not entry.is_file(follow_symlinks=False):
                    continue
                if entry.stat(follow_symlinks=False).st_size == len(data):
                    with contextlib.suppress(OSError, UnsafePathError):
                        if read_bytes(Path(entry.path)) == data:
                            return Path(entry.path)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = path.with_name(f"{prefix}{stamp}")
        atomic_write_bytes(target, data, durable=False)
    except (OSError, UnsafePathError):
        return None
    return target


def parse_with_retry(
    path: Path,
    parse: Callable[[bytes], T],
    *,
    first: bytes | None = None,
    retries: int = READ_RETRIES,
) -> T | None:
    """Read and parse ``path``; ``None`` if missing. Retry a parse error (a writer may be
    mid-way); if it stays broken, quarantine a copy and raise CorruptFileError (its subclass
    UnreadableFileError for a symlink, a FIFO or anything else that is not a regular file)."""
    data = first if first is not None else _read_regular(path)
    last_error = ""
    for attempt in range(retries + 1):
        if data is None:
            return None
        try:
            return parse(data)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            last_error = describe_parse_error(exc, data)
        if attempt < retries:
            time.sleep(READ_RETRY_DELAY)
            data = _read_regular(path)
    raise CorruptFileError(path, last_error, quarantine(path, data))


def _read_regular(path: Path) -> bytes | None:
    try:
        return read_bytes(path)
    except UnreadableFileError:
        raise
    except UnsafePathError as exc:
        raise UnreadableFileError(path, str(exc)) from None


def describe_parse_error(exc: Exception, data: bytes) -> str:
    if not data.strip():
        return "file is empty"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 at byte {exc.start}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    lines = str(exc).splitlines()
    return lines[0][:160] if lines else type(exc).__name__


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_json(data: bytes) -> Any:
    """Strict JSON, as ``JSON.parse``: no ``NaN``/``Infinity`` (Python's json would accept them,
    and writing them back would make the file unreadable to Claude Code)."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None

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
import re
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

T = TypeVar("T")
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


def in_claude_home(path: Path) -> bool:
    if not _claude_roots:
        return False
    text = os.path.abspath(path)
    return any(text.startswith(root) or text + os.sep == root for root in _claude_roots)


def new_file_mode(path: Path) -> int:
    return CLAUDE_FILE_MODE if in_claude_home(path) else FILE_MODE


def new_dir_mode(path: Path) -> int:
    return CLAUDE_DIR_MODE if in_claude_home(path) else DIR_MODE


def dumps(data: Any) -> str:
    """JSON as Claude Code writes it: ``JSON.stringify(data, null, 2)``."""
    return json.dumps(data, indent=2, ensure_ascii=False)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of JSON text. A lone surrogate (legal in a JSON string, e.g. ``"\\ud800"``,
    which ``json.loads`` keeps as is) is written escaped, like ``JSON.stringify`` does, instead
    of failing: it can only occur inside a string literal of text made by ``json.dumps``."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text).encode("utf-8")


def escape_surrogates(text: str) -> str:
    """``text`` with every lone surrogate written as its ``\\uXXXX`` escape (in JSON text: the
    same string; in a line for the terminal: printable, where the raw one cannot be encoded)."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: The errnos of a full disk (ENOSPC) and of a full quota (EDQUOT).
DISK_FULL = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


@contextlib.contextmanager
def naming_full_disk(path: Path) -> Iterator[None]:
    """Turn an OSError of a full disk into DiskFullError naming ``path`` (``os.writev`` and
    ``fsync`` errors carry no file name: "[Errno 28]" alone says neither what nor where)."""
    try:
        yield
    except DiskFullError:
        raise
    except OSError as exc:
        if exc.errno is not None and exc.errno in DISK_FULL:
            raise DiskFullError(exc.errno, path) from None
        raise


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


def check_not_symlink(path: Path) -> int | None:
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
    path: Path, data: Chunks, *, durable: bool = True, make_dirs: bool = True
) -> None:
    """Replace ``path`` atomically with ``data`` (see module docstring).

    ``data`` may be a sequence of chunks (written in order), so a caller can write a slice of a
    large buffer plus a small tail without first copying them into one object.
    DiskFullError (naming ``path``) if the disk is full; the temp file is removed then.
    ``make_dirs=False``: FileNotFoundError if the folder is gone, never created again (a
    writer into a team's folder must not bring back a team deleted meanwhile)."""
    with naming_full_disk(path):
        _atomic_write_bytes(path, data, durable=durable, make_dirs=make_dirs)


def _atomic_write_bytes(path: Path, data: Chunks, *, durable: bool, make_dirs: bool) -> None:
    temp = write_temp(path, data, durable=durable, make_dirs=make_dirs)
    replace_temp(temp, path, durable=durable)


def write_temp(path: Path, data: Chunks, *, durable: bool, make_dirs: bool = True) -> Path:
    """The first half of an atomic write: ``data`` in a new temp file next to ``path``
    (fsynced if ``durable``); :func:`replace_temp` (or :func:`discard_temp`) finishes it."""
    directory = path.parent
    if make_dirs:
        ensure_dir(directory)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    mode = check_not_symlink(path)  # a rewrite keeps the file's permission bits...
    if mode is None:
        mode = new_file_mode(path)  # ...a new file gets the home's mode
    for _ in range(10):
        tmp = directory / f".{path.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            fd = os.open(tmp, flags, FILE_MODE)
            break
        except FileExistsError:  # something (even a planted symlink) is there: pick another name
            continue
    else:  # pragma: no cover - ten random collisions in a row
        raise UnsafePathError(f"could not create a temp file next to {path}")
    chunks = [data] if isinstance(data, bytes | bytearray | memoryview) else data
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


def replace_temp(tmp: Path, path: Path, *, durable: bool) -> None:
    """The second half: rename ``tmp`` over ``path`` (and fsync the folder if ``durable``)."""
    try:
        os.replace(tmp, path)
    except BaseException:
        discard_temp(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def discard_temp(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


#: The temp file's data and size must reach the disk before the rename; its other metadata
#: (times) need not, so ``fdatasync`` is enough where the platform has it.
_datasync = getattr(os, "fdatasync", os.fsync)


def fsync_dir(directory: Path) -> None:
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


_encode = json.JSONEncoder(ensure_ascii=False).encode
_encode_str: Callable[[str], str] = json.encoder.encode_basestring


def _scalar(value: Any) -> str:
    """A scalar as ``_encode`` writes it, without its dispatch for strings and bools (an
    inbox message is a dozen strings and a bool: most of encoding one)."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    return _encode_str(value) if kind is str else _encode(value)


def _dump_entry(entry: Any) -> str:
    """One array element as it appears inside ``JSON.stringify(array, null, 2)``."""
    if isinstance(entry, dict) and entry:
        lines = []
        for key, value in entry.items():
            if isinstance(value, dict | list) and value:
                text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            else:
                text = _scalar(value)
            lines.append(f"    {_encode_str(str(key))}: {text}")
        return "  {\n" + ",\n".join(lines) + "\n  }"
    return "  " + json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n  ")


def dumps_array(entries: Sequence[Any]) -> str:
    """``dumps(entries)`` for a list, several times faster for flat objects (inbox messages):
    only nested containers go through the pure-Python indenting encoder."""
    if not entries:
        return "[]"
    return "[\n" + ",\n".join(_dump_entry(e) for e in entries) + "\n]"


_WS = frozenset(b" \t\r\n")


def array_head_end(raw: bytes | memoryview) -> int:
    """Where the head of the JSON array text ``raw`` ends: the index just past its last element
    (or just past ``[`` if it is empty), i.e. before the closing bracket and whitespace.
    ValueError if ``raw`` does not end with ``]``. Scans only the tail: no copy of ``raw``."""
    end = len(raw)
    while end and raw[end - 1] in _WS:
        end -= 1
    if not end or raw[end - 1] != 0x5D:  # "]"
        raise ValueError("not a JSON array")
    end -= 1
    while end and raw[end - 1] in _WS:
        end -= 1
    return end


def encode_entry(entry: Any) -> bytes:
    """One array element as the bytes it has inside ``JSON.stringify(array, null, 2)``."""
    return encode_text(_dump_entry(entry))


def splice_parts(raw: bytes, piece: bytes) -> list[bytes | memoryview]:
    """The chunks of ``raw`` (a valid JSON array) with the encoded element ``piece`` appended,
    sharing ``raw``'s memory instead of copying it (see ``atomic_write_bytes``)."""
    cut = array_head_end(raw)
    if raw[cut - 1] == 0x5B:  # "[": the array is empty (nothing else can precede its "]")
        return [memoryview(raw)[:cut], b"\n", piece, b"\n]"]
    return [memoryview(raw)[:cut], b",\n", piece, b"\n]"]

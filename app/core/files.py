"""Atomic JSON writes, tolerant reads and quarantine of corrupt files.

Writes: temp file in the same directory (exclusive create, 0600, never following a symlink)
-> write -> fsync -> ``os.replace`` -> fsync the directory. A reader never sees half a file
written by teamdeck, and a crash leaves either the old or the new file.

Reads tolerate a half-written file from another program: a parse error is retried for ~50 ms;
if it stays broken a copy is moved aside as ``{name}.corrupt-{timestamp}`` and CorruptFileError
names the file. A missing file is reported as missing (``None``), never confused with "empty".
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from app.core.errors import CorruptFileError, UnsafePathError

T = TypeVar("T")
READ_RETRIES = 5
READ_RETRY_DELAY = 0.01
DIR_MODE = 0o700
FILE_MODE = 0o600
TEMP_MARK = ".tmp-"


def dumps(data: Any) -> str:
    """JSON as Claude Code writes it: ``JSON.stringify(data, null, 2)``."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def ensure_dir(path: Path) -> None:
    """Create a directory (and parents) with mode 0700; refuse a symlink in its place."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        return
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(f"{path} is a symlink; refusing to use it")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(f"{path} exists and is not a directory")


def check_not_symlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise UnsafePathError(f"{path} is a symlink; refusing to follow it")


def is_temp_name(name: str) -> bool:
    return TEMP_MARK in name and name.startswith(".")


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` atomically with ``data`` (see module docstring)."""
    directory = path.parent
    ensure_dir(directory)
    check_not_symlink(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(10):
        tmp = directory / f".{path.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            fd = os.open(tmp, flags, FILE_MODE)
            break
        except FileExistsError:  # something (even a planted symlink) is there: pick another name
            continue
    else:  # pragma: no cover - ten random collisions in a row
        raise UnsafePathError(f"could not create a temp file next to {path}")
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(directory)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_bytes(path, dumps(data).encode("utf-8"))


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` if it does not exist. Never follows a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise UnsafePathError(f"{path} is a symlink; refusing to follow it") from None
        raise exc
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def quarantine(path: Path) -> Path | None:
    """Copy a corrupt file aside as ``{name}.corrupt-{timestamp}``; return the copy's path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        shutil.copy2(path, target, follow_symlinks=False)
        os.chmod(target, FILE_MODE)
    except OSError:
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
    mid-way); if it stays broken, quarantine a copy and raise CorruptFileError."""
    data = first if first is not None else read_bytes(path)
    last_error = ""
    for attempt in range(retries + 1):
        if data is None:
            return None
        try:
            return parse(data)
        except (ValueError, UnicodeDecodeError) as exc:
            last_error = describe_parse_error(exc, data)
        if attempt < retries:
            time.sleep(READ_RETRY_DELAY)
            data = read_bytes(path)
    raise CorruptFileError(path, last_error, quarantine(path))


def describe_parse_error(exc: Exception, data: bytes) -> str:
    if not data.strip():
        return "file is empty"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 at byte {exc.start}"
    text = str(exc).splitlines()[0]
    return text[:160]


def load_json(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


_encode = json.JSONEncoder(ensure_ascii=False).encode


def _dump_entry(entry: Any) -> str:
    """One array element as it appears inside ``JSON.stringify(array, null, 2)``."""
    if isinstance(entry, dict) and entry:
        lines = []
        for key, value in entry.items():
            if isinstance(value, dict | list) and value:
                text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            else:
                text = _encode(value)
            lines.append(f"    {_encode(str(key))}: {text}")
        return "  {\n" + ",\n".join(lines) + "\n  }"
    return "  " + json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n  ")


def dumps_array(entries: list[Any]) -> str:
    """``dumps(entries)`` for a list, several times faster for flat objects (inbox messages):
    only nested containers go through the pure-Python indenting encoder."""
    if not entries:
        return "[]"
    return "[\n" + ",\n".join(_dump_entry(e) for e in entries) + "\n]"


def splice_append(raw: bytes, entry: Any) -> bytes:
    """Append ``entry`` to the JSON array text ``raw`` without re-encoding what is there.

    ``raw`` must already be known to be a valid JSON array. The result is byte-identical to
    ``dumps(json.loads(raw) + [entry])`` when ``raw`` was written in that format.
    """
    body = raw.rstrip()
    if not body.endswith(b"]"):
        raise ValueError("not a JSON array")
    head = body[:-1].rstrip()
    piece = _dump_entry(entry).encode("utf-8")
    if head == b"[":
        return b"[\n" + piece + b"\n]"
    return head + b",\n" + piece + b"\n]"

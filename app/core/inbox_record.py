"""What teamdeck's processes know to be valid inbox text, shared: a cold append checks only what
none of them has checked.

An append must never extend a corrupt inbox, so a process that has not seen the file yet (a
teammate starting up and sending its first message) had to check all of it: at 10k messages
(2.3 MB) the check cost more than the append's own fsync. Yet nearly all of those bytes were
usually checked already by another teamdeck process -- the one that appended last, or the one
that wrote the version another writer (Claude Code, which rewrites the whole file) then
extended or edited near its end.

So each inbox of teamdeck's own home has a record beside the team's config
(``teams/{team}/.{agent}.inbox-checked``: a dot file, which the watcher ignores; never inside
``inboxes/``, which Claude Code reads): up to :data:`MAX_MARKS` marks, each the length and
SHA-256 digest of an array head some teamdeck process checked or wrote. A head is an array's
text up to the end of its last element (or its ``[``): that head plus ``]``, or plus ``,``
and more valid elements and ``]``, is a valid inbox.

The marks vouch for content, not for a file identity: a mark matches exactly the bytes whose
digest it holds, whoever wrote the file since and however -- Claude Code's rewrites, a
``mark_read`` or ``clear``, a record left half-written by a crash (its broken lines are
skipped). A cold append (:class:`HeadCheck`) hashes the file's head once (SHA-256 runs at
about 2 GB/s with the GIL released, alongside the temp file's fsync, where the full check
ran), takes the longest mark that is a prefix of it, and checks only the bytes after that
mark; if none matches, or those bytes do not extend it validly, the whole file is checked as
before. A corrupt file therefore still fails the same way: no mark covers its broken bytes.

The record is read and written only under the inbox's lock, in place (it is a cache: a
version torn by a crash only loses marks), and trusted as teamdeck's own files are: whoever
can write it can write the inbox itself. A Claude Code home has no record (nothing of
teamdeck's is written there): its cold appends check the whole file.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.inbox_cache import check_array

if TYPE_CHECKING:
    from hashlib import _Hash

Mark = tuple[int, bytes]
Chunk = bytes | memoryview

MAX_MARKS = 16
"""Marks kept per inbox: the longest (the newest heads of a growing file)."""
_MAX_RECORD = 4096
_DIGEST = 32
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Hashed:
    """The SHA-256 state of the first ``size`` bytes of an inbox (its head), and the marks
    that held for that version -- what a process carries from one append to the next."""

    __slots__ = ("hasher", "marks", "size")

    def __init__(self, hasher: _Hash, size: int, marks: Sequence[Mark]) -> None:
        self.hasher = hasher
        self.size = size
        self.marks = list(marks)

    def extended(self, raw: bytes | memoryview, cut: int, tail: Sequence[Chunk]) -> Hashed:
        """The state for the head ``raw[:cut]`` (of which this is a prefix) plus ``tail``
        (the new entry and its separator): a mark for each of the two heads."""
        hasher = self.hasher.copy()
        hasher.update(memoryview(raw)[self.size : cut])
        marks = [*self.marks, (cut, hasher.digest())]
        for chunk in tail:
            hasher.update(chunk)
        size = cut + sum(len(c) for c in tail)
        return Hashed(hasher, size, prune([*marks, (size, hasher.digest())]))


def fresh(head: Sequence[Chunk]) -> Hashed:
    """The state of a new inbox's head (nothing before it)."""
    hasher = hashlib.sha256()
    for chunk in head:
        hasher.update(chunk)
    size = sum(len(c) for c in head)
    return Hashed(hasher, size, [(size, hasher.digest())])


def prune(marks: Sequence[Mark]) -> list[Mark]:
    """Distinct marks, the longest :data:`MAX_MARKS` of them, longest first."""
    return sorted(set(marks), reverse=True)[:MAX_MARKS]


def extends(raw: bytes, head: int) -> bool:
    """Whether ``raw`` is a valid inbox given that ``raw[:head]`` is a valid array head: what
    follows it is ``]``, or ``,`` and the text of a non-empty array of objects minus its
    ``[`` (an empty head, ``[``, takes the elements without a comma); whitespace between."""
    empty_head = raw[head - 1] == 0x5B  # "["
    rest = raw[head:].lstrip()
    if not empty_head:
        if rest.rstrip() == b"]":
            return True
        if not rest.startswith(b","):
            return False
        rest = rest[1:].lstrip()
        if rest.startswith(b"]"):  # "[..., ]": a trailing comma
            return False
    try:
        check_array(b"[" + rest)
    except ValueError:
        return False
    return True


def record_path(inbox: Path) -> Path:
    """The record of an inbox (``teams/{team}/inboxes/{agent}.json``)."""
    return inbox.parent.parent / f".{inbox.stem}.inbox-checked"


class HeadCheck:
    """The check of a cold append (a callable, for ``atomic_write_checked``): ValueError if
    ``raw`` (whose head ends at ``cut``) is not a valid inbox. With a ``record``, its marks
    are used, and once ``raw`` has passed, :attr:`hashed` holds the state of the head the
    append writes (``raw``'s plus ``tail``) and the record has the new marks -- saved before
    the new file replaces the old, so the record's write goes to disk with the append's. Without
    one, the whole file is checked."""

    def __init__(self, raw: bytes, cut: int, record: Path | None, tail: Sequence[Chunk]) -> None:
        self.raw = raw
        self.cut = cut
        self.record = record
        self.marks = load(record) if record is not None else []
        self.tail = tail
        self.hashed: Hashed | None = None

    def __call__(self) -> None:
        raw, cut = self.raw, self.cut
        if self.record is None:
            check_array(raw)
            return
        view = memoryview(raw)
        hasher = hashlib.sha256()
        done = best = 0
        held: list[Mark] = []
        for length, digest in sorted(self.marks):
            if length > cut:
                break
            if length > done:
                hasher.update(view[done:length])
                done = length
            if hasher.digest() == digest:
                best = length
                held.append((length, digest))
        hasher.update(view[done:cut])
        if not (best and extends(raw, best)):
            check_array(raw)
        self.hashed = Hashed(hasher, cut, held).extended(raw, cut, self.tail)
        if set(self.hashed.marks) != set(self.marks):  # else it says just that already
            save(self.record, self.hashed.marks)


def load(path: Path) -> list[Mark]:
    """The marks recorded at ``path`` (none if it is missing or unreadable; a line that does
    not parse is skipped)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        data = os.read(fd, _MAX_RECORD)
    except OSError:
        return []
    finally:
        os.close(fd)
    marks = []
    for line in data.split(b"\n")[:MAX_MARKS]:
        length, _, digest = line.partition(b" ")
        try:
            mark = (int(length), bytes.fromhex(digest.decode("ascii")))
        except ValueError:
            continue
        if mark[0] > 0 and len(mark[1]) == _DIGEST:
            marks.append(mark)
    return marks


def save(path: Path, marks: Sequence[Mark]) -> None:
    """Record ``marks`` at ``path`` (the inbox's lock held), in place; any error is ignored
    (the record is only a cache)."""
    data = b"".join(b"%d %s\n" % (length, digest.hex().encode()) for length, digest in marks)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        written = stat.S_ISREG(st.st_mode) and os.pwrite(fd, data, 0) == len(data)
        if written and st.st_size > len(data):
            os.ftruncate(fd, len(data))
    except OSError:
        pass
    finally:
        os.close(fd)

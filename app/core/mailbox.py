"""Inboxes: append, read, unread, mark read -- lossless under concurrent writers.

An inbox is a JSON array of ``{from, text, summary?, timestamp, color?, read}`` (plus any
fields newer Claude Code versions add). Messages are never deleted; only ``read`` flips.

Appending is the hot path. Claude Code re-parses and re-serialises the whole array on every
append; teamdeck splices the new entry onto the bytes already on disk and writes the result
atomically (fsynced), so an append costs a copy of the file instead of a parse + encode of
every message. The file is still validated before it is extended, without re-parsing what this
process already knows to be valid: a per-process cache remembers, per inbox, the identity
(inode, size, mtime, ctime) of the file it last validated or wrote and the bytes of that
array's head. An unchanged file needs no check; a file that only grew by entries appended
after that head (another writer's appends) needs only the new entries parsed; anything else
is checked past the longest head any teamdeck process recorded as checked (by content:
:mod:`app.core.inbox_record`), by a parser that builds nothing.

Reads decode at the speed of the JSON parser and build messages lazily
(:mod:`app.core.inbox_cache`); a file this process decoded is remembered for appends too.
``mark_read`` on such a file edits the flipped entries in its bytes instead of re-encoding
every message.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from stat import S_IMODE
from typing import Any

from app.core import inbox_cache, inbox_record
from app.core.checked_write import atomic_write_checked
from app.core.errors import NotFoundError, UnknownRecipientError
from app.core.events import InboxChanged, InboxRead
from app.core.files import (
    array_head_end,
    atomic_write_bytes,
    dumps_array,
    encode_text,
    ensure_dir,
    in_claude_home,
    parse_with_retry,
    read_bytes,
)
from app.core.group_commit import GroupCommit
from app.core.home_parts import HomeParts
from app.core.inbox_cache import MessageView, Parsed, check_array, decode_array
from app.core.inbox_envelope import spliced
from app.core.inbox_limits import check_size
from app.core.inbox_record import Hashed, HeadCheck
from app.core.models import InboxMessage, TeamConfig
from app.core.paths import LEAD_NAME, USER_NAME, parse_agent_id

FileKey = tuple[int, int, int, int]
Chunk = bytes | memoryview
#: One ``append``'s entries and guard (appends with a guard are written alone).
_Append = tuple[list[dict[str, Any]], Callable[[], None] | None]
#: Unguarded appends by this process's threads, written together per inbox.
_appends: GroupCommit[list[dict[str, Any]]] = GroupCommit()


class _Known:
    """What this process knows to be a valid inbox: the file's identity when it last validated
    or wrote it, the chunks that make up the array's head (everything before the closing
    bracket), which share memory with the buffers written, and the head's digest state if
    this process has it (an append it made: :mod:`app.core.inbox_record`)."""

    __slots__ = ("hashed", "head", "key", "size")

    def __init__(self, key: FileKey, head: list[Chunk], hashed: Hashed | None = None) -> None:
        self.key = key
        self.head = head
        self.size = sum(map(len, head))
        self.hashed = hashed


_known: dict[str, _Known] = {}
_known_lock = threading.Lock()
_KNOWN_MAX = 64  # inboxes remembered per process...
_KNOWN_BUDGET = 128 * 1024 * 1024  # ...holding at most this many bytes of their heads


def _file_key(st: os.stat_result) -> FileKey:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stat_key(path: str | Path) -> FileKey | None:
    try:
        return _file_key(os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return None


def _remember(
    path: str | Path,
    head: list[Chunk],
    key: FileKey | None = None,
    hashed: Hashed | None = None,
) -> FileKey | None:
    """Remember the file just written (or read whole: ``key`` is then the identity it had
    throughout); returns its identity (for the change event)."""
    key = key or _stat_key(path)
    entry = _Known(key, head, hashed) if key is not None else None
    if entry is not None and entry.size > _KNOWN_BUDGET:
        entry.head, entry.size = [], 0  # too big to keep: the identity check still works
    text = os.fspath(path)
    with _known_lock:
        _known.pop(text, None)
        if entry is None:
            return key
        held = 0
        for known in _known.values():  # a loop, not a generator: most processes know a few
            held += known.size
        while _known and (len(_known) >= _KNOWN_MAX or held + entry.size > _KNOWN_BUDGET):
            held -= _known.pop(next(iter(_known))).size  # the least recently written
        _known[text] = entry
    return key


def _known_valid(path: Path, raw: bytes) -> _Known | None:
    """What this process knows of ``raw``, if that vouches for it: the file is exactly the
    one it last validated or wrote, or a head it validated plus appended entries that are
    valid on their own (``inbox_record.extends``: checked without parsing the known part
    again). Anything else -- a file rewritten or truncated by another program -- is not."""
    with _known_lock:
        known = _known.get(str(path))
    if known is None:
        return None
    if _stat_key(path) == known.key:
        return known
    if not known.head:
        return None
    offset = 0
    for chunk in known.head:
        if not raw.startswith(chunk, offset):
            return None
        offset += len(chunk)
    return known if inbox_record.extends(raw, offset) else None


def _checked_bytes(data: bytes) -> bytes:
    check_array(data)  # ValueError if not an inbox
    return data


def parse_raw_inbox(data: bytes) -> list[dict[str, Any]]:
    """The inbox as raw dicts (unknown fields and key order kept). ValueError if not an inbox."""
    return decode_array(data)


def parse_inbox(data: bytes) -> Parsed:
    """An inbox file decoded and validated (:func:`app.core.inbox_cache.load`): ValueError
    names the first bad entry and field."""
    return inbox_cache.load(data)


def addressed_name(recipient: str, team: str) -> str:
    """The name part of ``name`` or ``name@team`` (any store's recipients): an address in
    another team, or an empty one, is an UnknownRecipientError."""
    name = recipient.strip()
    parsed = parse_agent_id(name)
    if parsed is not None:
        name, other = parsed
        if other and other != team:
            raise UnknownRecipientError(f"{recipient!r} belongs to team {other!r}, not {team!r}")
    if not name:
        raise UnknownRecipientError("recipient must not be empty")
    return name


class Mailbox:
    """The inboxes of one team."""

    def __init__(self, home: HomeParts, team: str) -> None:
        self.home = home
        self.team = team
        self.layout = home.layout

    def path(self, agent: str) -> Path:
        return self.layout.inbox_path(self.team, agent)

    # ------------------------------------------------------------------ recipients

    def resolve_recipient(self, recipient: str, config: TeamConfig | None = None) -> str:
        """The member name an address refers to (``name`` or ``name@team``, any case).

        UnknownRecipientError for a name that is not a member (nor ``team-lead``/``user``), so
        a typo never creates a phantom inbox."""
        name = addressed_name(recipient, self.team)
        if config is None:
            config = self.home.teams.get(self.team)
            if config is None:
                raise NotFoundError(f"team {self.team!r} does not exist")
        member = config.member(name)
        if member is not None:
            return member.name
        if name.lower() in (LEAD_NAME, USER_NAME):
            return name.lower()
        known = ", ".join(m.name for m in config.members) or "none"
        raise UnknownRecipientError(
            f"{name!r} is not a member of team {self.team!r} (members: {known})"
        )

    # ------------------------------------------------------------------ write

    def send(self, recipient: str, message: InboxMessage) -> str:
        """Validate the recipient, then append. Returns the member name it was delivered to."""
        name = self.resolve_recipient(recipient)
        check_size(self.path(name), message)
        self.append(name, message)
        return name

    def broadcast(self, message: InboxMessage, *, exclude: str | None = None) -> list[str]:
        """Send to every member except the sender (and ``exclude``); returns the recipients."""
        config = self.home.teams.require(self.team)
        skip = {message.sender.lower(), (exclude or "").lower()}
        recipients = [m.name for m in config.members if m.name.lower() not in skip]
        for name in recipients:
            self.append(name, message.model_copy())
        return recipients

    def append(
        self,
        agent: str,
        message: InboxMessage,
        *,
        guard: Callable[[], None] | None = None,
        more: Sequence[InboxMessage] = (),
    ) -> None:
        """Append to ``agent``'s inbox (no membership check: use ``send`` for user input);
        ``more``: messages appended after it in the same write (one lock, one rewrite: a
        teammate's turn-end notes to the lead).

        ``guard`` runs under the inbox's lock just before the write; if it raises, nothing is
        written (e.g. "this request has been answered meanwhile": answer at most once).

        Under the inbox lock: read the file, make sure it is a valid array (unless this process
        knows its head -- ``_known_valid`` -- only what no teamdeck process has checked:
        ``app.core.inbox_record``; in full, with a check that builds nothing, for the rest),
        splice the new entry onto the bytes and replace the file atomically (fsynced). A
        corrupt inbox is never extended or replaced: CorruptFileError names it (in teamdeck's
        own home a copy is also saved aside; in a Claude Code home the file is only reported,
        left exactly where it is)."""
        entries = [m.to_json_dict() for m in (message, *more)]
        for item in entries:
            item["read"] = bool(item.get("read", False))
        path = self.path(agent)
        if not path.parent.is_dir():
            # Never bring back the folders of a deleted team (the lock and the atomic write
            # would both create missing parents): an inbox needs an existing team.
            if not self.layout.config_path(self.team).is_file():
                raise NotFoundError(f"team {self.team!r} does not exist")
            ensure_dir(path.parent)
        if guard is not None:  # alone: a guard sees the appends written before it
            (refused,) = self._write_batch(agent, [(entries, guard)])
            if refused is not None:
                raise refused
            return
        # This process's threads appending to the same inbox meanwhile share one write.
        _appends.submit(os.fspath(path), entries, lambda batch: self._write_batch(agent, batch))

    def _write_batch(
        self, agent: str, batch: Sequence[_Append | list[dict[str, Any]]]
    ) -> list[BaseException | None]:
        """``append``'s write, for the appends of one group commit (``app.core.group_commit``)
        or one guarded append: its guard under the lock, then the entries let through, in one
        write; returns what refused each append (``None``: written)."""
        path = self.path(agent)
        refused: list[BaseException | None] = [None] * len(batch)
        with self.home.lock(path):
            entries: list[dict[str, Any]] = []
            for i, one in enumerate(batch):
                items, guard = one if isinstance(one, tuple) else (one, None)
                if guard is not None:
                    try:
                        guard()
                    except Exception as exc:  # that append's alone: the others are written
                        refused[i] = exc
                        continue
                entries.extend(items)
            if not entries:
                return refused
            entry, *others = entries
            raw = read_bytes(path)
            known = _known_valid(path, raw) if raw is not None else None
            record = None if in_claude_home(path) else inbox_record.record_path(path)
            parts: list[Chunk] | None = None
            hashed: Hashed | None = None
            if raw is not None and known is None:
                try:  # checked while the new version is written (see app.core.checked_write)
                    parts = spliced(raw, entry, others)
                    check = HeadCheck(raw, len(parts[0]), record, parts[1:-1])
                    atomic_write_checked(path, parts, check, size=len(raw))
                    hashed = check.hashed  # recorded already
                except ValueError:  # maybe caught mid-way by another writer: the full story
                    raw = parse_with_retry(path, _checked_bytes)
                    parts = None
            if parts is None:
                parts = spliced(raw, entry, others)
                if raw is None:
                    hashed = inbox_record.fresh(parts[:-1])
                elif known is not None and known.hashed is not None:
                    hashed = known.hashed.extended(raw, len(parts[0]), parts[1:-1])
                if record is not None and hashed is not None:
                    inbox_record.save(record, hashed.marks)
                atomic_write_bytes(path, parts)
            written = _remember(path, parts[:-1], hashed=hashed)
        self.home.emit(InboxChanged(self.team, agent, written=written))
        return refused

    # ------------------------------------------------------------------ read

    def read(self, agent: str) -> Sequence[InboxMessage]:
        """All messages in file order (empty if the inbox was never written): a sequence that
        builds each message when it is first looked at and compares equal to a list; the
        messages are the caller's to change.

        CorruptFileError (with the file's name) if it cannot be read; a copy is saved aside in
        teamdeck's own home only (``app.core.files.quarantine``)."""
        return MessageView(self._parsed(agent))

    def unread(self, agent: str) -> list[tuple[int, InboxMessage]]:
        parsed = self._parsed(agent)
        if parsed is None:
            return []
        return [(i, parsed.message(i)) for i in parsed.unread()]

    def count(self, agent: str) -> int:
        parsed = self._parsed(agent)
        return len(parsed.entries) if parsed is not None else 0

    def _parsed(self, agent: str) -> Parsed | None:
        """The inbox decoded, or as decoded last time if the file has not changed since
        (:mod:`app.core.inbox_cache`). A file read whole and unchanged throughout is also
        remembered as valid for appends and for ``mark_read``'s in-place flip."""
        path = self.path(agent)
        key = _stat_key(path)
        if key is None:
            return None
        parsed = inbox_cache.parsed.get(str(path), key)
        if parsed is not None:
            return parsed
        parsed = parse_with_retry(path, parse_inbox)
        if parsed is not None and _stat_key(path) == key:  # the same file throughout the read
            inbox_cache.parsed.put(str(path), key, parsed)
            _remember(path, parsed.head(), key)
        return parsed

    # ------------------------------------------------------------------ mark read

    def mark_read(self, agent: str, index: int | list[int], *, durable: bool = True) -> int:
        """Mark message(s) read by index; returns how many flipped. Out-of-range is ignored.

        ``durable=False`` skips the fsyncs (the write is still atomic): an agent about to act
        on a message uses it, since losing a read flag to a power cut only delivers the message
        again, and it keeps two fsyncs off the path from "message arrives" to "turn starts"."""
        return self._rewrite(agent, {index} if isinstance(index, int) else set(index), durable)

    def mark_all_read(self, agent: str, *, durable: bool = True) -> int:
        return self._rewrite(agent, None, durable)

    def _rewrite(self, agent: str, indices: set[int] | None, durable: bool = True) -> int:
        """Flip read flags (``indices``; ``None``: all); announced as ``InboxRead`` with the
        file's identity before and after (taken under the lock), so the watcher can tell it is
        no news.

        A file this process has decoded and that has not changed since (same identity) is
        edited in its bytes: only the flipped entries are encoded again
        (:func:`app.core.inbox_entries.replace_entries`). Any other file -- changed by another
        process, not laid out as ``JSON.stringify`` does -- is parsed and re-encoded whole."""
        path = self.path(agent)
        text = os.fspath(path)
        with self.home.lock(path):
            try:
                st = os.stat(text, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            prior = _file_key(st) if st is not None else None
            known = inbox_cache.parsed.get(text, prior) if prior is not None else None
            done = None
            if known is not None and st is not None:
                done = self._flip_in_place(text, known, indices, durable, S_IMODE(st.st_mode))
            if done is not None:
                flipped, written = done
            else:
                flipped, written = self._rewrite_whole(path, indices, durable)
        if flipped:
            self.home.emit(InboxRead(self.team, agent, written=written, prior=prior))
        return flipped

    @staticmethod
    def _flip_in_place(
        path: str, known: Parsed, indices: set[int] | None, durable: bool, mode: int
    ) -> tuple[int, FileKey | None] | None:
        """The flip on ``known``, the version this process decoded of the regular file at
        ``path`` (its identity just matched under the lock; ``mode`` its permission bits):
        the file and its folder exist and are what they were, so the write looks no further
        (``make_dirs=False``: a folder deleted meanwhile is an error, never made again)."""
        done = inbox_cache.marked_read(known, indices)
        if done is None:
            return None
        flipped, after = done
        if not flipped:
            return 0, None
        identity: list[FileKey | None] = []

        def renamed() -> None:  # before the folder's fsync, while the caches are warm
            written = _remember(path, after.head())
            if written is not None:
                inbox_cache.parsed.put(path, written, after)
            identity.append(written)

        atomic_write_bytes(
            path, after.parts(), durable=durable, make_dirs=False, mode=mode, renamed=renamed
        )
        return flipped, identity[0]

    @staticmethod
    def _rewrite_whole(
        path: Path, indices: set[int] | None, durable: bool
    ) -> tuple[int, FileKey | None]:
        raw = parse_with_retry(path, parse_raw_inbox)
        if raw is None:
            return 0, None
        flipped = 0
        for i, entry in enumerate(raw):
            if not entry.get("read") and (indices is None or i in indices):
                entry["read"] = True
                flipped += 1
        if not flipped:
            return 0, None
        data = encode_text(dumps_array(raw))
        atomic_write_bytes(path, data, durable=durable)
        written = _remember(path, [memoryview(data)[: array_head_end(data)]])
        inbox_cache.parsed.put_written(str(path), written, data, raw)
        return flipped, written

    def clear(self, agent: str) -> bool:
        """Empty the inbox (the seeds' ``clearMailbox``: the file becomes ``[]``), under its
        lock; ``False`` if it does not exist (nothing is created). The only operation that
        deletes messages: for a person cleaning up, never used by the runtime."""
        path = self.path(agent)
        if not path.is_file():
            return False
        with self.home.lock(path):
            if read_bytes(path) is None:
                return False
            atomic_write_bytes(path, b"[]")
            written = _remember(path, [b"["])
        self.home.emit(InboxChanged(self.team, agent, written=written))
        return True

    def agents(self) -> list[str]:
        """Names that have an inbox file."""
        inboxes = self.layout.inboxes_dir(self.team)
        if not inboxes.is_dir():
            return []
        return sorted(
            e.name[:-5]
            for e in os.scandir(inboxes)
            if e.name.endswith(".json") and not e.name.startswith(".")
        )

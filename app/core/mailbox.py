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
is parsed in full.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from app.core import inbox_cache
from app.core.errors import NotFoundError, TooLargeError, UnknownRecipientError
from app.core.events import InboxChanged, InboxRead
from app.core.files import (
    array_head_end,
    atomic_write_bytes,
    dumps_array,
    encode_entry,
    encode_text,
    ensure_dir,
    load_json,
    parse_with_retry,
    read_bytes,
    splice_parts,
)
from app.core.home_parts import HomeParts
from app.core.models import InboxMessage, TeamConfig
from app.core.paths import LEAD_NAME, USER_NAME, parse_agent_id

_MESSAGES = TypeAdapter(list[InboxMessage])
#: A message's text (+ summary) may hold at most this many UTF-8 bytes: every reader parses the
#: whole inbox, so one 20 MB message slows every later read of it (Claude Code refuses
#: oversized messages too).
MAX_MESSAGE_BYTES = 1024 * 1024
#: An inbox that a message would take over this size is refused (messages are never deleted;
#: ``teamdeck inbox --clear`` empties one).
MAX_INBOX_BYTES = 32 * 1024 * 1024
FileKey = tuple[int, int, int, int]
Chunk = bytes | memoryview


class _Known:
    """What this process knows to be a valid inbox: the file's identity when it last validated
    or wrote it, and the chunks that make up the array's head (everything before the closing
    bracket), which share memory with the buffers written."""

    __slots__ = ("head", "key", "size")

    def __init__(self, key: FileKey, head: list[Chunk]) -> None:
        self.key = key
        self.head = head
        self.size = sum(len(c) for c in head)


_known: dict[str, _Known] = {}
_known_lock = threading.Lock()
_KNOWN_MAX = 64  # inboxes remembered per process...
_KNOWN_BUDGET = 128 * 1024 * 1024  # ...holding at most this many bytes of their heads


def _file_key(st: os.stat_result) -> FileKey:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stat_key(path: Path) -> FileKey | None:
    try:
        return _file_key(os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return None


def _remember(path: Path, head: list[Chunk]) -> FileKey | None:
    """Remember the file just written; returns its identity (for the change event)."""
    key = _stat_key(path)
    entry = _Known(key, head) if key is not None else None
    if entry is not None and entry.size > _KNOWN_BUDGET:
        entry.head, entry.size = [], 0  # too big to keep: the identity check still works
    with _known_lock:
        _known.pop(str(path), None)
        if entry is None:
            return key
        held = sum(k.size for k in _known.values())
        while _known and (len(_known) >= _KNOWN_MAX or held + entry.size > _KNOWN_BUDGET):
            held -= _known.pop(next(iter(_known))).size  # the least recently written
        _known[str(path)] = entry
    return key


def _is_known(path: Path) -> bool:
    """Whether the file is exactly the one this process last validated or wrote."""
    with _known_lock:
        known = _known.get(str(path))
    return known is not None and _stat_key(path) == known.key


def _validated_bytes(data: bytes) -> bytes:
    parse_raw_inbox(data)
    return data


def _validate_extension(path: Path, raw: bytes) -> bool:
    """Whether ``raw`` is valid because it is a head this process validated, plus appended
    entries that are valid on their own -- checked without parsing the known part again.

    ``head`` + ``rest`` is a valid array when ``head`` is a validated array head (an array
    minus its closing bracket) and ``rest`` is ``]``, or ``,`` followed by the text of a valid,
    non-empty array of objects minus its ``[`` (whitespace allowed around). Anything else --
    including a file rewritten or truncated by another program -- is parsed in full."""
    with _known_lock:
        known = _known.get(str(path))
    if known is None or not known.head:
        return False
    offset = 0
    for chunk in known.head:
        if not raw.startswith(chunk, offset):
            return False
        offset += len(chunk)
    last = known.head[-1]
    empty_head = bool(len(last)) and last[-1] == 0x5B  # the head is "[": an empty array
    rest = raw[offset:].lstrip()
    if not empty_head:
        if rest.rstrip() == b"]":
            return True
        if not rest.startswith(b","):
            return False
        rest = rest[1:]
    try:
        entries = parse_raw_inbox(b"[" + rest)
    except ValueError:
        return False
    return empty_head or bool(entries)


def parse_raw_inbox(data: bytes) -> list[dict[str, Any]]:
    """The inbox as raw dicts (unknown fields and key order kept). ValueError if not an inbox."""
    raw = load_json(data)
    if not isinstance(raw, list):
        raise ValueError(f"expected a JSON array, found {_json_type(raw)}")
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ValueError(f"entry {index} is not an object")
    return raw


def _json_type(value: Any) -> str:
    names = {dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


_NOT_NULLABLE = ("from", "text", "timestamp", "read")

#: Envelope fields newer Claude Code versions put on inbox messages (seeds' README: "Inbox
#: messages may carry extra fields in newer versions (msgV, msg_id, type)").
ENVELOPE_KEYS = ("msgV", "msg_id", "type")


def envelope_like(template: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` in the shape of ``template``, the newest message of an inbox that carries
    ``msgV``/``msg_id``/``type``: the same envelope keys in the same key order, with ``msgV``
    copied (the version the inbox's writer speaks), a fresh ``msg_id`` (a UUID string, as
    observed in such inboxes) and ``type`` ``"message"`` (the value observed on inbox
    messages; the protocol frame itself stays in ``text``). Keys the template lacks follow."""
    values = dict(entry)
    if "msgV" in template:
        values["msgV"] = template["msgV"]
    if "msg_id" in template:
        values["msg_id"] = str(uuid.uuid4())
    if "type" in template:
        values["type"] = "message"
    shaped = {k: values.pop(k) for k in template if k in values}
    shaped.update(values)
    return shaped


def _envelope_template(raw: bytes) -> dict[str, Any] | None:
    """The newest message carrying an envelope key, if any (a cheap byte scan first: inboxes
    without them -- the seeds' era -- never pay for a parse)."""
    if not any(f'"{k}"'.encode() in raw for k in ENVELOPE_KEYS[:2]):
        return None
    try:
        entries = parse_raw_inbox(raw)
    except ValueError:
        return None
    for entry in reversed(entries):
        if any(k in entry for k in ENVELOPE_KEYS[:2]):
            template: dict[str, Any] = entry
            return template
    return None


def parse_inbox(data: bytes) -> list[InboxMessage]:
    # pydantic's JSON parser accepts NaN/Infinity, which JSON.parse (and load_json) reject: a
    # file that might hold them takes the strict path, so read() and append() agree.
    if b"NaN" not in data and b"Infinity" not in data:
        try:
            return _MESSAGES.validate_json(data)
        except ValidationError:
            pass
    # Slow path. Tell a JSON error (possibly a half-written file: retried) from a bad entry,
    # accept what JavaScript would (lone surrogates; ``null`` for a field means "absent").
    raw = parse_raw_inbox(data)
    messages = []
    for index, entry in enumerate(raw):
        if any(entry.get(k, 0) is None for k in _NOT_NULLABLE):
            entry = {k: v for k, v in entry.items() if not (v is None and k in _NOT_NULLABLE)}
        try:
            messages.append(InboxMessage.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"entry {index} field {where!r}: {first['msg']}") from None
    return messages


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
        name = recipient.strip()
        parsed = parse_agent_id(name)
        if parsed is not None:
            name, team = parsed
            if team and team != self.team:
                raise UnknownRecipientError(
                    f"{recipient!r} belongs to team {team!r}, not {self.team!r}"
                )
        if not name:
            raise UnknownRecipientError("recipient must not be empty")
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
        self, agent: str, message: InboxMessage, *, guard: Callable[[], None] | None = None
    ) -> None:
        """Append to ``agent``'s inbox (no membership check: use ``send`` for user input).

        ``guard`` runs under the inbox's lock just before the write; if it raises, nothing is
        written (e.g. "this request has been answered meanwhile": answer at most once).

        Under the inbox lock: read the file, make sure it is a valid array (in full, unless this
        process knows its head -- see ``_validate_extension``), splice the new entry onto the
        bytes and replace the file atomically (fsynced). A corrupt inbox is never extended or
        replaced: CorruptFileError names it (in teamdeck's own home a copy is also saved aside;
        in a Claude Code home the file is only reported, left exactly where it is)."""
        entry = message.to_json_dict()
        entry["read"] = bool(entry.get("read", False))
        path = self.path(agent)
        if not path.parent.is_dir():
            # Never bring back the folders of a deleted team (the lock and the atomic write
            # would both create missing parents): an inbox needs an existing team.
            if not self.layout.config_path(self.team).is_file():
                raise NotFoundError(f"team {self.team!r} does not exist")
            ensure_dir(path.parent)
        with self.home.lock(path):
            if guard is not None:
                guard()
            raw = read_bytes(path)
            if raw is not None and not (_is_known(path) or _validate_extension(path, raw)):
                raw = parse_with_retry(path, _validated_bytes, first=raw)
            template = _envelope_template(raw) if raw is not None else None
            piece = encode_entry(envelope_like(template, entry) if template else entry)
            if raw is None:
                parts: list[Chunk] = [b"[\n", piece, b"\n]"]
            else:
                parts = splice_parts(raw, piece)
            atomic_write_bytes(path, parts)
            written = _remember(path, parts[:-1])
        self.home.emit(InboxChanged(self.team, agent, written=written))

    # ------------------------------------------------------------------ read

    def read(self, agent: str) -> list[InboxMessage]:
        """All messages in file order; ``[]`` if the inbox was never written.

        CorruptFileError (with the file's name) if it cannot be read; a copy is saved aside in
        teamdeck's own home only (``app.core.files.quarantine``)."""
        return [m.model_copy() for m in self._messages(agent)]

    def unread(self, agent: str) -> list[tuple[int, InboxMessage]]:
        return [(i, m.model_copy()) for i, m in enumerate(self._messages(agent)) if not m.read]

    def count(self, agent: str) -> int:
        return len(self._messages(agent))

    def _messages(self, agent: str) -> list[InboxMessage]:
        """The inbox parsed, or as parsed last time if the file has not changed since
        (:mod:`app.core.inbox_cache`); shared with the cache, so callers hand out copies."""
        path = self.path(agent)
        key = _stat_key(path)
        if key is None:
            return []
        messages = inbox_cache.parsed.get(str(path), key)
        if messages is not None:
            return messages
        messages = parse_with_retry(path, parse_inbox) or []
        if _stat_key(path) == key:  # the same file throughout the read
            inbox_cache.parsed.put(str(path), key, messages)
        return messages

    # ------------------------------------------------------------------ mark read

    def mark_read(self, agent: str, index: int | list[int], *, durable: bool = True) -> int:
        """Mark message(s) read by index; returns how many flipped. Out-of-range is ignored.

        ``durable=False`` skips the fsyncs (the write is still atomic): an agent about to act
        on a message uses it, since losing a read flag to a power cut only delivers the message
        again, and it keeps two fsyncs off the path from "message arrives" to "turn starts"."""
        indices = {index} if isinstance(index, int) else set(index)
        return self._rewrite(agent, lambda i, e: i in indices, durable)

    def mark_all_read(self, agent: str, *, durable: bool = True) -> int:
        return self._rewrite(agent, lambda i, e: True, durable)

    def _rewrite(self, agent: str, select: Any, durable: bool = True) -> int:
        """Flip read flags; announced as ``InboxRead`` with the file's identity before and
        after (taken under the lock), so the watcher can tell it is no news."""
        path = self.path(agent)
        with self.home.lock(path):
            raw = parse_with_retry(path, parse_raw_inbox)
            if raw is None:
                return 0
            prior = _stat_key(path)
            flipped = 0
            for i, entry in enumerate(raw):
                if not entry.get("read") and select(i, entry):
                    entry["read"] = True
                    flipped += 1
            if flipped:
                data = encode_text(dumps_array(raw))
                atomic_write_bytes(path, data, durable=durable)
                written = _remember(path, [memoryview(data)[: array_head_end(data)]])
        if flipped:
            self.home.emit(InboxRead(self.team, agent, written=written, prior=prior))
        return flipped

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


def check_size(path: Path, message: InboxMessage) -> None:
    """TooLargeError if ``message`` is over ``MAX_MESSAGE_BYTES``, or if it would take the inbox
    at ``path`` over ``MAX_INBOX_BYTES`` (checked before the lock: a cap, not an exact count)."""
    size = len(encode_text(message.text)) + len(encode_text(message.summary or ""))
    if size > MAX_MESSAGE_BYTES:
        raise TooLargeError(
            f"the message is {size:,} bytes; at most {MAX_MESSAGE_BYTES:,} are allowed "
            "(split it, or write it to a file and send the path)"
        )
    try:
        current = os.stat(path).st_size
    except OSError:
        current = 0
    if current + size > MAX_INBOX_BYTES:
        raise TooLargeError(
            f"{path} would grow over {MAX_INBOX_BYTES:,} bytes ({current:,} now); "
            "empty it first (teamdeck inbox --clear)"
        )

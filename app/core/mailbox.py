"""Inboxes: append, read, unread, mark read -- lossless under concurrent writers.

An inbox is a JSON array of ``{from, text, summary?, timestamp, color?, read}`` (plus any
fields newer Claude Code versions add). Messages are never deleted; only ``read`` flips.

Appending is the hot path. Claude Code re-parses and re-serialises the whole array on every
append; teamdeck splices the new entry onto the bytes already on disk and writes the result
atomically, so an append costs a copy of the file instead of a parse + encode of every
message. The file is still validated before it is extended: a per-process cache remembers the
identity (inode, size, mtime, ctime) of the file this process last validated or wrote, and any
other file is parsed in full first.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from app.core.errors import NotFoundError, UnknownRecipientError
from app.core.events import InboxChanged
from app.core.files import (
    atomic_write_bytes,
    dumps_array,
    load_json,
    parse_with_retry,
    read_bytes,
    splice_append,
)
from app.core.models import InboxMessage, TeamConfig
from app.core.paths import LEAD_NAME, USER_NAME, strip_team_suffix

if TYPE_CHECKING:
    from app.core.home import Home

_MESSAGES = TypeAdapter(list[InboxMessage])
FileKey = tuple[int, int, int, int]
_validated: dict[str, FileKey] = {}
_validated_lock = threading.Lock()


def _file_key(st: os.stat_result) -> FileKey:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _remember(path: Path) -> None:
    try:
        key = _file_key(os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return
    with _validated_lock:
        _validated[str(path)] = key


def _is_known_good(path: Path) -> bool:
    try:
        key = _file_key(os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False
    with _validated_lock:
        return _validated.get(str(path)) == key


def parse_raw_inbox(data: bytes) -> list[dict[str, Any]]:
    """The inbox as raw dicts (unknown fields and key order kept). ValueError if not an inbox."""
    raw = load_json(data)
    if not isinstance(raw, list):
        raise ValueError(f"expected a JSON array, found {type(raw).__name__}")
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ValueError(f"entry {index} is not an object")
    return raw


def _validated_bytes(data: bytes) -> bytes:
    parse_raw_inbox(data)
    return data


def parse_inbox(data: bytes) -> list[InboxMessage]:
    try:
        return _MESSAGES.validate_json(data)
    except ValidationError as exc:
        # Tell a JSON error (possibly a half-written file: retried) from a bad entry.
        parse_raw_inbox(data)
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"entry {where}: {first['msg']}") from None


class Mailbox:
    """The inboxes of one team."""

    def __init__(self, home: Home, team: str) -> None:
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
        name = strip_team_suffix(recipient.strip())
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
        self.append(name, message)
        return name

    def broadcast(self, message: InboxMessage, *, exclude: str | None = None) -> list[str]:
        """Send to every member except the sender (or ``exclude``); returns the recipients."""
        config = self.home.teams.require(self.team)
        skip = (exclude or message.sender).lower()
        recipients = [m.name for m in config.members if m.name.lower() != skip]
        for name in recipients:
            self.append(name, message.model_copy())
        return recipients

    def append(self, agent: str, message: InboxMessage) -> None:
        """Append to ``agent``'s inbox (no membership check: use ``send`` for user input)."""
        entry = message.to_json_dict()
        entry["read"] = bool(entry.get("read", False))
        path = self.path(agent)
        with self.home.lock(path):
            raw = read_bytes(path)
            if raw is not None and not _is_known_good(path):
                raw = parse_with_retry(path, _validated_bytes, first=raw)
            if raw is None:
                data = dumps_array([entry]).encode("utf-8")
            else:
                data = splice_append(raw, entry)
            atomic_write_bytes(path, data)
            _remember(path)
        self.home.emit(InboxChanged(self.team, agent))

    # ------------------------------------------------------------------ read

    def read(self, agent: str) -> list[InboxMessage]:
        """All messages in file order; ``[]`` if the inbox was never written.

        CorruptFileError (with the file's name, and a copy saved aside) if it cannot be read."""
        return parse_with_retry(self.path(agent), parse_inbox) or []

    def unread(self, agent: str) -> list[tuple[int, InboxMessage]]:
        return [(i, m) for i, m in enumerate(self.read(agent)) if not m.read]

    def count(self, agent: str) -> int:
        return len(self.read(agent))

    # ------------------------------------------------------------------ mark read

    def mark_read(self, agent: str, index: int | list[int]) -> int:
        """Mark message(s) read by index; returns how many flipped. Out-of-range is ignored."""
        indices = {index} if isinstance(index, int) else set(index)
        return self._rewrite(agent, lambda i, e: i in indices)

    def mark_all_read(self, agent: str) -> int:
        return self._rewrite(agent, lambda i, e: True)

    def _rewrite(self, agent: str, select: Any) -> int:
        path = self.path(agent)
        with self.home.lock(path):
            raw = parse_with_retry(path, parse_raw_inbox)
            if raw is None:
                return 0
            flipped = 0
            for i, entry in enumerate(raw):
                if not entry.get("read") and select(i, entry):
                    entry["read"] = True
                    flipped += 1
            if flipped:
                atomic_write_bytes(path, dumps_array(raw).encode("utf-8"))
                _remember(path)
        if flipped:
            self.home.emit(InboxChanged(self.team, agent))
        return flipped

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

"""Inboxes: append, read, unread, mark read -- lossless under concurrent writers.

An inbox is a JSON array of ``{from, text, summary?, timestamp, color?, read}`` (plus any
fields newer Claude Code versions add). Messages are never deleted; only ``read`` flips.

Appending is the hot path: the new entries are spliced onto the bytes on disk, checked
without re-parsing what is known valid, and this process's threads share one write
(:mod:`app.core.inbox_append`; what this process knows: :mod:`app.core.inbox_known`).

Reads decode at the speed of the JSON parser and build messages lazily
(:mod:`app.core.inbox_cache`); a file this process decoded is remembered for appends too.
``mark_read`` on such a file edits the flipped entries in its bytes instead of re-encoding
every message (:mod:`app.core.inbox_marks`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.core import inbox_cache, inbox_marks
from app.core.errors import NotFoundError, UnknownRecipientError
from app.core.events import InboxChanged
from app.core.files import atomic_write_bytes, parse_with_retry, read_bytes
from app.core.home_parts import HomeParts
from app.core.inbox_append import append_entries
from app.core.inbox_cache import MessageView, Parsed, decode_array
from app.core.inbox_known import remember, stat_key
from app.core.inbox_limits import check_size
from app.core.models import InboxMessage, TeamConfig
from app.core.paths import LEAD_NAME, USER_NAME, parse_agent_id


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
        knows its head -- ``inbox_known.known_valid`` -- only what no teamdeck process has checked:
        ``app.core.inbox_record``; in full, with a check that builds nothing, for the rest),
        splice the new entry onto the bytes and replace the file atomically (fsynced). A
        corrupt inbox is never extended or replaced: CorruptFileError names it (in teamdeck's
        own home a copy is also saved aside; in a Claude Code home the file is only reported,
        left exactly where it is)."""
        entries = [m.to_json_dict() for m in (message, *more)]
        for item in entries:
            item["read"] = bool(item.get("read", False))
        append_entries(self, agent, entries, guard)

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
        key = stat_key(path)
        if key is None:
            return None
        parsed = inbox_cache.parsed.get(str(path), key)
        if parsed is not None:
            return parsed
        parsed = parse_with_retry(path, parse_inbox)
        if parsed is not None and stat_key(path) == key:  # the same file throughout the read
            inbox_cache.parsed.put(str(path), key, parsed)
            remember(path, parsed.head(), key)
        return parsed

    # ------------------------------------------------------------------ mark read

    def mark_read(self, agent: str, index: int | list[int], *, durable: bool = True) -> int:
        """Mark message(s) read by index; returns how many flipped. Out-of-range is ignored.

        ``durable=False`` skips the fsyncs (the write is still atomic): an agent about to act
        on a message uses it, since losing a read flag to a power cut only delivers the message
        again, and it keeps two fsyncs off the path from "message arrives" to "turn starts"."""
        indices = {index} if isinstance(index, int) else set(index)
        return inbox_marks.rewrite(self, agent, indices, durable)

    def mark_all_read(self, agent: str, *, durable: bool = True) -> int:
        return inbox_marks.rewrite(self, agent, None, durable)

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
            written = remember(path, [b"["])
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

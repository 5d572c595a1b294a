"""One team's inboxes in the engine (``app.core.store.MessageStore``).

A send is one call of ``teamdeck.send`` (schema version 4) with a fresh uuid, repeated with
the same uuid while the link is down (the server finds the uuid's first delivery, schema
version 10): delivered once however often it is retried. The server sets the inbox's order
(``seq``) and checks the sender is the role's own member name; the wake carries the inbox's
number and the seq (a watcher learns which inbox grew without a read) and is notified inside
the send's transaction, delivered by its commit (``Link.call``, schema version 9).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import psycopg

from app.core.errors import UnknownRecipientError
from app.core.mailbox import addressed_name
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME, USER_NAME
from app.engine.link import Link

_INBOX = "inbox = teamdeck.inbox_number(%s, %s)"
"""An inbox's rows by its number (schema version 10: a message's key is (inbox, seq)); the
messages' policies decide which of them the caller reads."""
_READ = f"SELECT seq, body::text, read FROM teamdeck.messages WHERE {_INBOX}"
"""The body as text: pydantic parses it and builds the message in one pass (psycopg's jsonb
loader would parse it into dicts first: a third of a 100,000-message read)."""


SINCE = "SELECT seq, body, read FROM teamdeck.inbox_since(%s, %s, %s)"
"""An inbox's messages after a seq (schema version 8: its plan kept for the session)."""


def _message(body: str, read: bool) -> InboxMessage:
    message = InboxMessage.model_validate_json(body)
    message.read = read
    return message


def body_json(message: InboxMessage) -> str:
    """``message.to_json_dict()`` as JSON text, by pydantic's serializer in one pass (measured
    on the sender of ``bench/engine.py``, from an idle process: ~16 us against ~52 us for the
    dict, then ``json.dumps``): the same keys and values (their order is jsonb's). Only a
    top-level unknown field set to null is kept by ``to_json_dict`` and dropped by
    ``exclude_none``: such a message goes the dict's way."""
    extra = message.__pydantic_extra__
    if extra and any(value is None for value in extra.values()):
        return json.dumps(message.to_json_dict())
    return message.model_dump_json(by_alias=True, exclude_none=True)


def numbered(rows: Sequence[tuple[int, str, bool]]) -> list[tuple[int, InboxMessage]]:
    """``SINCE``'s rows as (seq, message)."""
    return [(seq, _message(body, read)) for seq, body, read in rows]


class EngineMailbox:
    """The inboxes of one team, through one role's eyes (its policies decide what it sees)."""

    def __init__(self, link: Link, team: str) -> None:
        self.link = link
        self.team = team

    # ------------------------------------------------------------------ recipients

    def members(self) -> list[str]:
        rows = self.link.run(
            lambda c: c.execute(
                "SELECT name FROM teamdeck.members WHERE team = %s ORDER BY name", (self.team,)
            ).fetchall()
        )
        return [r[0] for r in rows]

    def resolve_recipient(self, recipient: str) -> str:
        name = addressed_name(recipient, self.team)
        members = self.members()
        for member in members:
            if member.lower() == name.lower():
                return member
        if name.lower() in (LEAD_NAME, USER_NAME):
            return name.lower()
        known = ", ".join(members) or "none"
        raise UnknownRecipientError(
            f"{name!r} is not a member of team {self.team!r} (members: {known})"
        )

    # ------------------------------------------------------------------ write

    def send(self, recipient: str, message: InboxMessage, *, uuid: str | None = None) -> str:
        """Check the recipient, deliver once; the member name it went to."""
        name = self.resolve_recipient(recipient)
        self.append(name, message, uuid=uuid)
        return name

    def broadcast(self, message: InboxMessage, *, exclude: str | None = None) -> list[str]:
        skip = {message.sender.lower(), (exclude or "").lower()}
        recipients = [m for m in self.members() if m.lower() not in skip]
        for name in recipients:
            self.append(name, message.model_copy())
        return recipients

    def append(self, agent: str, message: InboxMessage, *, uuid: str | None = None) -> bool:
        """Deliver to ``agent`` (no membership check here: the server checks it); ``False``
        if this uuid was delivered before (a retry after a lost acknowledgement)."""
        # 128 random bits as 32 hex digits (PostgreSQL's uuid reads them as they are): as
        # unguessable as uuid4()'s 122, for a quarter of its CPU from an idle process.
        key = uuid or os.urandom(16).hex()
        rows = self.link.call(
            "SELECT inbox, seq, fresh FROM teamdeck.send(%s, %s, %s, %s, %s)",
            (self.team, agent, key, message.sender, body_json(message)),
        )
        if not rows or rows[0][0] is None:  # this uuid is another sender's: not delivered
            return False
        inbox, seq, fresh = rows[0]
        if not fresh:  # delivered before: its wake may have been lost with the link
            self.link.wake_again(f"m:{inbox}:{seq}")
        return bool(fresh)

    # ------------------------------------------------------------------ read

    def read(self, agent: str) -> Sequence[InboxMessage]:
        rows = self.link.run(
            lambda c: c.execute(_READ + " ORDER BY seq", (self.team, agent)).fetchall()
        )
        return [_message(body, read) for _, body, read in rows]

    def since(self, agent: str, cursor: int) -> list[tuple[int, InboxMessage]]:
        """The messages after ``cursor`` (a seq), with their seq: what a watcher reads when a
        wake says the inbox grew (``teamdeck.inbox_since``, schema version 8: by the inbox's
        key, under the caller's policies, its plan kept for the session)."""
        rows = self.link.read(
            lambda c: c.execute(SINCE, (self.team, agent, cursor), prepare=True).fetchall()
        )
        return numbered(rows)

    def unread(self, agent: str) -> list[tuple[int, InboxMessage]]:
        rows = self.link.run(
            lambda c: c.execute(_READ + " ORDER BY seq", (self.team, agent)).fetchall()
        )
        return [(i, _message(body, read)) for i, (_, body, read) in enumerate(rows) if not read]

    def count(self, agent: str) -> int:
        row = self.link.run(
            lambda c: c.execute(
                f"SELECT count(*) FROM teamdeck.messages WHERE {_INBOX}",
                (self.team, agent),
            ).fetchone()
        )
        return int(row[0]) if row else 0

    # ------------------------------------------------------------------ mark read

    def mark_read(self, agent: str, index: int | list[int], *, durable: bool = True) -> int:
        """Mark messages read by their index in ``read``'s order; how many flipped."""
        indices = [index] if isinstance(index, int) else list(index)
        return self._mark(agent, indices)

    def mark_all_read(self, agent: str, *, durable: bool = True) -> int:
        return self._mark(agent, None)

    def _mark(self, agent: str, indices: list[int] | None) -> int:
        def update(conn: psycopg.Connection) -> int:
            if indices is None:
                cur = conn.execute(
                    f"UPDATE teamdeck.messages SET read = true WHERE {_INBOX} AND NOT read",
                    (self.team, agent),
                )
            else:
                cur = conn.execute(
                    "UPDATE teamdeck.messages m SET read = true FROM ("
                    "  SELECT inbox, seq, row_number() OVER (ORDER BY seq) - 1 AS i"
                    f"  FROM teamdeck.messages WHERE {_INBOX}) o"
                    " WHERE m.inbox = o.inbox AND m.seq = o.seq AND o.i = ANY(%s)"
                    " AND NOT m.read",
                    (self.team, agent, indices),
                )
            return cur.rowcount

        return self.link.run(update)

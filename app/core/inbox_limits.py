"""How big a message and an inbox may grow: every reader parses a whole inbox, so one huge
message slows every later read of it, and messages are never deleted."""

from __future__ import annotations

import os
from pathlib import Path

from app.core.errors import TooLargeError
from app.core.files import encode_text
from app.core.models import InboxMessage

#: A message's text (+ summary) may hold at most this many UTF-8 bytes: every reader parses the
#: whole inbox, so one 20 MB message slows every later read of it (Claude Code refuses
#: oversized messages too).
MAX_MESSAGE_BYTES = 1024 * 1024
#: An inbox that a message would take over this size is refused (messages are never deleted;
#: ``teamdeck inbox --clear`` empties one).
MAX_INBOX_BYTES = 32 * 1024 * 1024


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

"""Who answered a request in a Claude Code home: teamdeck's own note, beside Claude Code's files.

An answer to a plan or permission request is an inbox message from ``team-lead`` (the
protocol's sender, whoever decided). In teamdeck's own homes the message itself names the
person when they decided (``answeredBy: "user"``, ``InboxMessage.answered_by``). A Claude Code
home's files keep Claude Code's exact shapes, so there teamdeck adds no key: instead, each
answer teamdeck writes into a Claude Code inbox (``teamdeck approve``/``reject``, the
dashboard's keys: ``app.runtime.by_files.steering.answer_request``) is noted here, in
teamdeck's own home (``<teamdeck home>/claude-answers.json``, next to the ``history.db`` that
records Claude Code teams), and the readers that credit answers -- the archive's recorder and
the dashboard's feed -- look a ``team-lead`` answer up with :class:`AnswerCredits`.

A note names the message exactly: the Claude Code home, the team, the inbox it went to, the
message's timestamp and the request it answers. An answer Claude Code's lead writes to the same
request has another timestamp, so it is never credited to the person; a note whose message
was never written (the request was answered meanwhile) matches nothing. The file keeps the
newest ``KEEP`` notes (a note is only needed until a reader has seen its message).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from app.core.errors import TeamdeckError
from app.core.files import atomic_write_json, file_identity, read_bytes
from app.core.locks import make_lock
from app.core.paths import LEAD_NAME, USER_NAME, default_home

LEDGER_FILE = "claude-answers.json"
#: Notes kept: far more answers than a reader can be behind by.
KEEP = 500

#: (team, inbox, timestamp) -> [(request id, who answered)]
Index = dict[tuple[str, str, str], list[tuple[str, str]]]


def ledger_path() -> Path:
    return default_home() / LEDGER_FILE


def note_answer(
    root: Path, team: str, recipient: str, request_id: str, timestamp: str, by: str = USER_NAME
) -> None:
    """Note that the message of ``timestamp`` in ``recipient``'s inbox of the Claude Code home
    ``root`` answers ``request_id`` for ``by``. A note that cannot be written (teamdeck's home
    unwritable) is skipped: the answer matters more than its credit, which then falls back to
    the message's sender."""
    path = ledger_path()
    note = {
        "home": str(root),
        "team": team,
        "to": recipient,
        "timestamp": timestamp,
        "requestId": request_id,
        "by": by,
    }
    # A note that cannot be kept (the file unreadable or damaged: it is left as it is) is
    # skipped, as is one whose home is unwritable.
    with contextlib.suppress(OSError, ValueError, TeamdeckError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with make_lock(f"{path}.lock", "flock"):
            notes = [n for n in _read(path) if isinstance(n, dict)]
            notes.append(note)
            atomic_write_json(path, notes[-KEEP:])


class AnswerCredits:
    """Who answered each answer message of one home (one per reader: not thread-safe)."""

    def __init__(self, root: Path, claude: bool) -> None:
        self.root = str(root)
        self.claude = claude
        self.path = ledger_path()
        self._identity: tuple[int, int, int, int] | None = None
        self._index: Index = {}

    def answered_by(self, team: str, recipient: str, entry: dict[str, Any]) -> str | None:
        """Who decided the answer the inbox message ``entry`` (in ``recipient``'s inbox of
        ``team``) carries, when not its sender: its ``answeredBy``, else (a Claude Code home, a
        message from ``team-lead``) the note teamdeck kept; ``None`` otherwise."""
        by = entry.get("answeredBy")
        if isinstance(by, str) and by:
            return by
        if not self.claude or entry.get("from") != LEAD_NAME:
            return None
        text, timestamp = entry.get("text"), entry.get("timestamp")
        if not (isinstance(text, str) and text[:1] == "{" and isinstance(timestamp, str)):
            return None
        for request_id, who in self._notes().get((team, recipient, timestamp), ()):
            if request_id in text:
                return who
        return None

    def _notes(self) -> Index:
        """The notes of this home, read again only when the file changed."""
        identity = file_identity(self.path)
        if identity == self._identity:
            return self._index
        index: Index = {}
        for note in _read_or_none(self.path):
            if not isinstance(note, dict) or note.get("home") != self.root:
                continue
            values = [note.get(k) for k in ("team", "to", "timestamp", "requestId", "by")]
            if all(isinstance(v, str) and v for v in values):
                team, to, timestamp, request_id, by = (str(v) for v in values)
                index.setdefault((team, to, timestamp), []).append((request_id, by))
        self._identity, self._index = identity, index
        return index


def _read(path: Path) -> list[Any]:
    """The notes on disk (none if there is no file). ValueError if the file is not a list of
    notes, OSError or TeamdeckError if it cannot be read: a writer then leaves it as it is."""
    data = read_bytes(path)
    notes = json.loads(data) if data else []
    if not isinstance(notes, list):
        raise ValueError(f"{path} is not a list of notes")
    return notes


def _read_or_none(path: Path) -> list[Any]:
    """The notes for a reader: none when the file cannot be read (it is only a credit)."""
    try:
        return _read(path)
    except (OSError, ValueError, TeamdeckError):
        return []

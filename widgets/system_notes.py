"""The system's notes in a prompt: what teamdeck appends to the lead's mail ("[idle teammates:
...]", "[notes: ...]"), told apart from the teammates' words so the views draw them as the
system's."""

from __future__ import annotations

import re

_NOTE = re.compile(r"^\[[^\[\]]*\]$", re.DOTALL)


def split_notes(text: str) -> tuple[str, list[str]]:
    """A prompt and the system's notes appended to it ("[idle teammates: ...]", "[notes:
    ...]": paragraphs wholly in brackets), so the notes are drawn as the system's, not as
    part of a teammate's message."""
    paragraphs = text.split("\n\n")
    notes = [p.strip() for p in paragraphs if _NOTE.match(p.strip())]
    if not notes:
        return text, []
    kept = [p for p in paragraphs if not _NOTE.match(p.strip())]
    return "\n\n".join(kept).strip(), notes

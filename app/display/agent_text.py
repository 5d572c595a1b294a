"""The one display path for text an agent controls (no Textual, no Rich).

Agents write message summaries and contents, task subjects, plans, Bash commands, tool results
and their own replies; every view, dialog, toast and the CLI passes that text through
:func:`shown` before it reaches the person's terminal, so the text shows as text:

- control characters are written out, never sent: C0 (ESC, BEL, BS, CR... all but newline and
  tab), DEL and C1 (``0x80``-``0x9f``, ``CSI`` included) as ``\\xNN``. An ``ESC]52;...``
  (clipboard), ``ESC]0;...`` (window title) or ``ESC[2J`` (clear) reads as ``\\x1b]52;...``;
- characters that reorder or hide text show as their code point, ``\\u202e``: bidi
  embeddings, overrides, isolates and marks (U+202A-202E, U+2066-2069, U+200E/F, U+061C), zero
  width characters (U+200B-200D, U+2060, U+FEFF), every other format character (soft hyphen,
  tag characters), the line and paragraph separators, and lone surrogates.

Markup stays literal through the views' own helper (``widgets.agent_text``: a Rich ``Text``,
never parsed; ``escape`` before markup a toast parses). :func:`command_line` and
:func:`elide_middle` show a command on one line with its start and its end (what the person
allows is what runs: a long harmless prefix does not push the tail out of sight).
"""

from __future__ import annotations

import re

from app.display.fit import cell_len

#: Unicode's format characters (category Cf): invisible, and some reorder what follows.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
#: What :func:`shown` writes out: controls but newline and tab, DEL, C1, separators,
#: surrogates and format characters.
_HIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff{_FORMAT}]")
_ASCII_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
#: Spaces that are not the ASCII one (category Zs): in a command, written out.
_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
#: The mark where :func:`elide_middle` left characters out.
ELIDED = " … "


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def shown(text: object) -> str:
    """``text`` as the person may see it: see the module docstring. Newlines and tabs stay."""
    value = text if isinstance(text, str) else str(text)
    if value.isascii():  # the common case: only C0 controls and DEL can hide in it
        return value if _ASCII_HIDDEN.search(value) is None else _HIDDEN.sub(_visible, value)
    if value.replace("\n", "").replace("\t", "").isprintable():  # at C speed
        return value
    return _HIDDEN.sub(_visible, value)


def command_line(command: str) -> str:
    """A command on one line, exactly: :func:`shown`, with newlines and tabs as ``\\n`` and
    ``\\t`` (a newline ends a shell command: collapsed into a space it would read as an
    argument) and spaces other than the ASCII one as ``\\xa0``, ``\\u3000``... (the shell reads a
    no-break space as part of a word: ``rm\\xa0-rf`` is one command name)."""
    line = shown(command).replace("\n", "\\n").replace("\t", "\\t")
    return line if line.isascii() else _SPACES.sub(_visible, line)


def flat(text: object, limit: int | None = None) -> str:
    """Agent text on one line (:func:`shown`, whitespace collapsed), cut to ``limit``
    characters with an ellipsis: a summary, a subject, a description in a row."""
    line = " ".join(shown(text).split())
    if limit is not None and len(line) > limit:
        return line[: max(0, limit - 1)] + "…"
    return line


def elide_middle(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole when it fits, else its start and its end with
    :data:`ELIDED` between (the end gets the larger half: it is where a tail hides; under
    20 cells the mark is a bare "…")."""
    if cell_len(text) <= width:
        return text
    mark = ELIDED if width >= 20 else ELIDED.strip()  # narrow: the spaces go first
    room = width - len(mark)
    if room < 2:
        return text[: max(0, width - 1)] + "…" if width > 0 else ""
    head_room = room // 2
    head = ""
    for char in text:
        if cell_len(head + char) > head_room:
            break
        head += char
    tail = ""
    for char in reversed(text):
        if cell_len(tail + char) > room - cell_len(head):
            break
        tail = char + tail
    return head.rstrip() + mark + tail.lstrip()

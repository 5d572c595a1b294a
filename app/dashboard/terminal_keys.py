"""How the dashboard reads ``esc`` pressed right before a digit or ``enter``.

A terminal sends ``esc`` and a key pressed within a few milliseconds of it as one sequence,
which Textual reads as ``alt+<key>``: the views and the compose box take ``alt+letter`` as
``esc`` (``widgets.compose_box.alt_letter``). For the digits, Textual's table maps the
sequence to the character WezTerm on macOS sends for Option and that digit (``esc 3`` is
"£", ``esc 1`` "¡"): ``esc 3 a enter`` typed in the compose box put "£a" into the message
and sent it instead of leaving the box and selecting teammate 3, and the letters typed after
it ran as commands. Without those entries the sequence is ``alt+3``, which the views already
read as ``esc`` (the digit ignored, with a hint to press it again). The cost: in WezTerm on
macOS, Option and a digit no longer types "£" and the like (other terminals send the
character itself, which is typed as before).

``esc`` and ``enter`` in one read were ``enter`` alone (the parser drops the esc): with text in
the compose box, "leave, then come back to type" sent the text. It reads as ``alt+enter``, which
the box takes as both keys at once: left and back, still typing, nothing sent.
"""

from __future__ import annotations

from enum import Enum
from typing import cast

from textual import _ansi_sequences

#: ``esc`` followed by a digit: the sequences Textual maps to a character.
ESC_DIGITS = tuple(f"\x1b{digit}" for digit in "0123456789")


#: ``esc`` followed by ``enter`` (a terminal sends enter as a carriage return).
ESC_ENTER = "\x1b\r"


class _EscKey(Enum):
    """A key the parser's table can name (it reads each entry's ``value``)."""

    ALT_ENTER = "alt+enter"


def read_esc_and_digit_as_alt() -> None:
    """Make ``esc`` + a digit read as ``alt+<digit>``, and ``esc`` + ``enter`` as
    ``alt+enter`` (see the module docstring)."""
    table = cast("dict[str, object]", _ansi_sequences.ANSI_SEQUENCES_KEYS)  # a dict at run time
    for sequence in ESC_DIGITS:
        table.pop(sequence, None)
    table[ESC_ENTER] = (_EscKey.ALT_ENTER,)

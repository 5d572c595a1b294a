"""Fitting a line or a table into a width by priority (no Textual): what gives way first.

``fit_columns`` decides a table's column widths: every column at its natural width when they
fit; else the columns that may shrink give way (down to their least width, the widest first),
then whole columns go, the least important first. ``fit_parts`` does the same for the pieces
of one line (a header): the least important pieces go first; one named piece (a name) may be
shortened with "…" instead.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

ELLIPSIS = "…"


def cell_len(text: str) -> int:
    """Terminal cells ``text`` takes (wide characters two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


@dataclass(frozen=True)
class Column:
    """A column of a table that fits its width.

    Args:
        name: its header.
        drop: the order in which columns go when even shrunk they do not fit (0: never; the
            highest goes first).
        least: the fewest cells it shrinks to (0: it never shrinks; its values are short).
    """

    name: str
    drop: int = 0
    least: int = 0


def cut(text: str, width: int) -> str:
    """``text`` in ``width`` cells, ending in "…" when cut."""
    if cell_len(text) <= width:
        return text
    if width <= 0:
        return ""
    out = ""
    for char in text:
        if cell_len(out + char) > width - 1:
            break
        out += char
    return out + ELLIPSIS


def fit_columns(columns: list[Column], naturals: list[int], width: int, gap: int) -> list[int]:
    """The width of each column (0: left out) so that the widths plus ``gap`` cells per column
    shown fit ``width``. ``naturals``: each column's widest value or header."""
    shown = list(range(len(columns)))
    while True:
        widths = [naturals[i] if i in shown else 0 for i in range(len(columns))]
        over = sum(widths) + gap * len(shown) - width
        if over > 0:
            shrinkable = [i for i in shown if columns[i].least and widths[i] > columns[i].least]
            for i in sorted(shrinkable, key=lambda i: -widths[i]):
                give = min(over, widths[i] - columns[i].least)
                widths[i] -= give
                over -= give
        droppable = [i for i in shown if columns[i].drop]
        if over <= 0 or not droppable:
            return widths
        shown.remove(max(droppable, key=lambda i: (columns[i].drop, i)))


@dataclass(frozen=True)
class Part:
    """A piece of a line: its ``text``, its ``style`` (for the caller), a ``short`` form used
    before anything goes, and when it goes (``drop`` as for :class:`Column`)."""

    text: str
    style: str = ""
    drop: int = 0
    short: str | None = None


def fit_parts(
    parts: list[Part], width: int, *, shorten: int | None = None, least: int = 6
) -> list[Part]:
    """The parts of a line that fit ``width``, tried in this order: every part whole; the
    short forms (one by one, from the line's end); part ``shorten`` (a name) cut with "…"
    (down to ``least`` cells); then the parts that may go, the highest ``drop`` first, the
    name as long as the room left allows.
    When even that is too wide, the name shorter still, down to "…" (then the caller cuts
    the line's end)."""

    def cells(line: list[Part]) -> int:
        return sum(cell_len(p.text) for p in line)

    short = list(parts)
    if cells(short) <= width:
        return short
    for i in reversed(range(len(short))):  # the short forms one by one, from the line's end
        part = short[i]
        if part.short is not None:
            short[i] = Part(part.short, part.style, part.drop)
            if cells(short) <= width:
                return short
    stages = sorted({p.drop for p in parts if p.drop}, reverse=True)
    kept = list(enumerate(short))
    for stage in [None, *stages]:
        if stage is not None:
            kept = [(i, p) for i, p in kept if p.drop != stage]
        line = [p for _, p in kept]
        over = cells(line) - width
        if over <= 0:
            return line
        at = next((n for n, (i, _) in enumerate(kept) if i == shorten), None)
        if at is not None:
            name = line[at]
            room = cell_len(name.text) - over
            if room >= least or stage == (stages[-1] if stages else None):
                # The last resort: the name shorter than ``least`` rather than the line's end cut.
                line[at] = Part(cut(name.text, max(room, 1)), name.style, name.drop)
                return line
    return [p for _, p in kept]

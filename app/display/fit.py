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
    return _laid_out(parts, _plan(parts, width, shorten, least), width, shorten)


def fit_parts_as(
    parts: list[Part],
    widest: list[Part],
    width: int,
    *,
    shorten: int | None = None,
    least: int = 6,
) -> list[Part]:
    """``parts`` in the layout ``fit_parts`` gives ``widest`` (the same parts, each with the
    widest value it may take: counts of three digits, the longest cost): the same parts kept,
    the same short forms, whatever the values now; the name takes the room left. A line laid
    out from its values lost or regained a part as a count or a cost grew by one digit, and
    flipped between two layouts from one frame to the next (issue 30)."""
    if len(widest) != len(parts):
        return fit_parts(parts, width, shorten=shorten, least=least)
    return _laid_out(parts, _plan(widest, width, shorten, least), width, shorten)


def _cells(line: list[Part]) -> int:
    return sum(cell_len(p.text) for p in line)


def _short(part: Part) -> Part:
    return Part(part.short, part.style, part.drop) if part.short is not None else part


def _plan(
    parts: list[Part], width: int, shorten: int | None, least: int
) -> tuple[list[int], set[int]]:
    """Which parts ``fit_parts`` keeps, and which of them in their short form."""
    everything = list(range(len(parts)))
    if _cells(parts) <= width:
        return everything, set()
    short: set[int] = set()
    line = list(parts)
    for i in reversed(everything):  # the short forms one by one, from the line's end
        part = parts[i]
        if part.short is not None:
            short.add(i)
            line[i] = _short(part)
            if _cells(line) <= width:
                return everything, short
    stages = sorted({p.drop for p in parts if p.drop}, reverse=True)
    kept = everything
    for stage in [None, *stages]:
        if stage is not None:
            kept = [i for i in kept if parts[i].drop != stage]
        over = _cells([line[i] for i in kept]) - width
        if over <= 0:
            return kept, short
        if shorten in kept:
            room = cell_len(line[shorten].text) - over
            if room >= least or stage == (stages[-1] if stages else None):
                return kept, short  # the name cut to the room left (``_laid_out``)
    return kept, short


def _laid_out(
    parts: list[Part], plan: tuple[list[int], set[int]], width: int, shorten: int | None
) -> list[Part]:
    """``parts`` as ``plan`` says, the name cut to the room the others leave."""
    kept, short = plan
    line = [_short(parts[i]) if i in short else parts[i] for i in kept]
    over = _cells(line) - width
    if over > 0 and shorten in kept:
        at = kept.index(shorten)
        name = line[at]
        room = cell_len(name.text) - over
        # The last resort: the name shorter than ``least`` rather than the line's end cut.
        line[at] = Part(cut(name.text, max(room, 1)), name.style, name.drop)
    return line

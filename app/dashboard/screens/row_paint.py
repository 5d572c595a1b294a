"""Repaint only the rows that changed: a compositor for the live views.

Textual's partial update draws the box around every changed region: one changed line of a
panel at the top left and one of the feed at the bottom right make a box as large as the
screen, and every widget in it renders all its lines (from its cache, but each line is still
cut, filtered and divided). With a team at work, something changes on most beats in the
roster, the trend, the board, the feed and the lead's pane, so each frame rendered about
fifty widgets in full (bench/live.py's ``keypress`` row: the screen updates were ~60% of the
dashboard loop's CPU, and a key waited behind them).

``RowCompositor`` renders, of each widget, only the rows on which a changed span overlaps the
widget (the run from the first such row to the last), and skips a widget that no changed span
touches, nor a row on which the widgets in front of it (rendered first) already paint every
cut it spans (a container behind its children). What reaches the terminal is the same: every
cell of a changed span is still painted by the front-most widget there (that widget overlaps
the span on that row, so it is rendered), and cells outside the spans are never written
(``ChopsUpdate``). A full update (a resize, a layout that moved widgets) is Textual's own.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip

Spans = dict[int, list[tuple[int, int]]]


class RowCompositor(Compositor):
    """See the module docstring. Textual is pinned (``pyproject.toml``): this overrides its
    ``render_partial_update`` with the same result, drawn from fewer renders."""

    def render_partial_update(self) -> ChopsUpdate | None:
        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        spans = list(self._regions_to_spans(update_regions))
        by_row: Spans = {}
        for y, x1, x2 in spans:
            by_row.setdefault(y, []).append((x1, x2))
        rows = sorted(by_row)
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(line[:-1]) for line in cuts]
        for widget, (region, clip) in self.visible_widgets.items():
            x, y, width, height = region.intersection(clip)
            if not (width and height):
                continue
            wanted = _rows_touched(rows, by_row, x, x + width, y, y + height)
            wanted = [
                row for row in wanted if _open(chops[row], cuts[row], x, x + width, by_row[row])
            ]
            if not wanted:
                continue
            top, bottom = wanted[0], wanted[-1] + 1
            strips = widget.render_lines(Region(x - region.x, top - region.y, width, bottom - top))
            _fill(chops, cuts, x, x + width, top, strips, set(wanted).__contains__)
        return ChopsUpdate(chops, spans, [line[1:] for line in cuts])


def _rows_touched(
    rows: list[int], by_row: Spans, left: int, right: int, top: int, bottom: int
) -> list[int]:
    """The rows from ``top`` to ``bottom`` (excluded) on which a span overlaps
    ``left``..``right``."""
    start = bisect_left(rows, top)
    touched = []
    for y in rows[start:]:
        if y >= bottom:
            break
        if any(x1 < right and x2 > left for x1, x2 in by_row[y]):
            touched.append(y)
    return touched


def _open(
    line: dict[int, Strip | None],
    cuts: list[int],
    left: int,
    right: int,
    spans: list[tuple[int, int]],
) -> bool:
    """Whether a widget from ``left`` to ``right`` would paint a cell of this row's changed
    ``spans`` that no widget in front of it painted (``_fill`` gives it the cuts from
    ``left`` to ``right`` but the last). A container behind its children (the roster, the
    view's columns) is rendered on a row only where they leave it such a cell: its strip was
    cut up and thrown away."""
    mine = [cut for cut in cuts if left <= cut <= right]
    for cut, end in zip(mine, mine[1:], strict=False):
        if line.get(cut, False) is None and any(cut < x2 and end > x1 for x1, x2 in spans):
            return True
    return False


def _fill(
    chops: list[dict[int, Strip | None]],
    cuts: list[list[int]],
    left: int,
    right: int,
    top: int,
    strips: list[Strip],
    wanted: Callable[[int], bool],
) -> None:
    """Textual's ``_render_chops`` for one widget's rows: the front-most widget (rendered
    first) wins each cut.

    A strip that is one piece whole is used as it is, not divided: ``Strip.divide`` caches
    its answer in the strip, and ``[strip]`` in its own cache is a reference cycle, freed by
    a full collection only. The collector's survivors are frozen (``gc_pauses``), so each
    frame's strips became garbage nothing freed for minutes: ~3 MB of a 100-teammate run's
    memory (bench/live.py ``--sizes``), growing with the run's frames."""
    for y, strip in enumerate(strips, top):
        if not wanted(y):
            continue
        line = chops[y]
        final_cuts = [cut for cut in cuts[y] if right >= cut >= left]
        offsets = [cut - left for cut in final_cuts[1:]]
        pieces = [strip] if offsets == [strip.cell_length] else strip.divide(offsets)
        for cut, piece in zip(final_cuts, pieces, strict=False):
            if line.get(cut) is None:
                line[cut] = piece

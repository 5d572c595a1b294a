"""A read-only table that always fits its width: never a sideways scroll.

Its values are agent text (a task's subject, an agent's last words): drawn literally, escapes
shown (``widgets.agent_text``; a ``str`` cell of a DataTable would be parsed as markup). Its
columns are given as ``app.display.fit.Column``: when the values do not fit, the columns
that may shrink do (their values end in "…"), then the least important go
(``app.display.fit.fit_columns``). Refitted on every ``set_rows`` and on a resize.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from app.display.fit import Column, cut, fit_columns
from widgets.agent_text import shown

#: Cells a DataTable adds around each value (its cell padding, one each side).
CELL_GAP = 2


class FittedTable(DataTable[Text]):
    """See the module docstring; the first value of a row is its key."""

    DEFAULT_CSS = """
    FittedTable { overflow-x: hidden; scrollbar-size-vertical: 1; }
    """

    def __init__(self, columns: list[Column], **kwargs: Any) -> None:
        super().__init__(zebra_stripes=True, **kwargs)
        self.fit_to = columns
        self._rows: Sequence[tuple[str, ...]] = []
        self._layout: tuple[tuple[int, int], ...] = ()

    def set_rows(self, rows: Sequence[tuple[str, ...]]) -> None:
        """Show ``rows`` (one value per column), fitted to the width."""
        self._rows = rows
        columns = self.fit_to
        values = [tuple(shown(value) for value in row) for row in rows]
        naturals = [
            max([len(c.name), *(len(row[i]) for row in values)]) for i, c in enumerate(columns)
        ]
        room = (self.size.width or self.app.size.width // 2) - 1  # the scrollbar's column
        widths = fit_columns(columns, naturals, room, CELL_GAP)
        kept = tuple((i, w) for i, w in enumerate(widths) if w)
        if kept != self._layout:
            self.clear(columns=True)
            for i, w in kept:
                self.add_column(cut(columns[i].name, w), width=w, key=columns[i].name)
            self._layout = kept
        else:
            self.clear()
        for key, row in zip(rows, values, strict=True):
            self.add_row(*(Text(cut(row[i], w)) for i, w in kept), key=key[0])

    def on_resize(self) -> None:
        if self._rows:
            cursor = self.cursor_row
            self.set_rows(self._rows)
            if self.row_count:
                self.move_cursor(row=min(cursor, self.row_count - 1), animate=False)

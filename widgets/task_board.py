"""The task board: a DataTable keyed by task id, updated row by row.

Columns have fixed widths (the subject takes what is left), so a resize only changes widths,
never re-measures. New rows are added in chunks, one chunk per timer tick: 5,000 tasks fill
the board in the background without blocking the screen. Completed tasks are dimmed; the
owner is drawn in the owner's colour. ``_internal`` and deleted tasks never reach the board
(the store drops them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import JustifyMethod
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.geometry import Size
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from app.core import Task
from app.display.format import agent_name, one_line, rich_color
from widgets.agent_text import agent_text
from widgets.borders import set_border

#: (label, key, width); the subject's width is computed from the board's width.
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("#", "id", 4),
    ("Subject", "subject", 30),
    ("Status", "status", 11),
    ("Owner", "owner", 12),
    ("Blocked by", "blocked", 6),
)
#: The fixed columns' widths by the board's inner width (the subject takes the rest): from 60
#: cells an owner's whole name (100x30 cut subjects at 17 and owners at 9, issue 30); below
#: 45 the status and owner shrink, so that every column keeps a place (60x20 cut at "Ow").
WIDE = {"id": 4, "status": 11, "owner": 12, "blocked": 6}
NARROW = {"id": 3, "status": 11, "owner": 9, "blocked": 6}
TINY = {"id": 3, "status": 6, "owner": 5, "blocked": 2}


def fixed_widths(inner: int) -> dict[str, int]:
    """The widths of the columns but the subject's, for a board ``inner`` cells wide."""
    return WIDE if inner >= 60 else NARROW if inner >= 45 else TINY


CHUNK = 150  # rows added per timer tick
CHUNK_PAUSE = 0.005
STATUS_STYLES = {"pending": "", "in_progress": "bold yellow", "completed": "green"}
Row = tuple[Text, Text, Text, Text, Text]


def _cell(value: str, style: str, justify: JustifyMethod = "left") -> Text:
    """A cell cut with an ellipsis when its column is narrower than the value (agent text:
    escapes shown, ``widgets.agent_text``)."""
    return agent_text(value, style=style, justify=justify, no_wrap=True, overflow="ellipsis")


def _same(a: Text, b: Text) -> bool:
    """Rich's ``Text.__eq__`` ignores the base style; a dimmed cell must count as changed."""
    return a.plain == b.plain and a.style == b.style and a.spans == b.spans


class TaskBoard(DataTable[Text]):
    """Tasks of the team shown; ``apply`` takes the store's upserts and removals."""

    class Filled(Message):
        """Every queued row has been added."""

    DEFAULT_CSS = """
    TaskBoard { height: 1fr; overflow-x: hidden; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False, cell_padding=1)
        self._rows: dict[str, Row] = {}  # what each row shows (or will, once in view)
        self._tasks: dict[str, Task] = {}
        self._stale: set[str] = set()  # rows whose table cells are behind ``_rows``
        self.owner_colors: dict[str, str] = {}
        self._error: str = ""
        self._backlog: dict[str, Task] = {}
        self._chunk_timer: Timer | None = None
        self._last_id = 0

    def on_mount(self) -> None:
        for label, key, width in COLUMNS:
            self.add_column(_cell(label, ""), width=width, key=key)
        self.watch(self, "scroll_y", self._write_visible, init=False)

    def on_resize(self, event: events.Resize) -> None:
        """Give the subject whatever the other (fixed) columns leave."""
        inner = self.size.width - 1  # room for the vertical scrollbar
        fixed = fixed_widths(inner)
        padding = 2 * self.cell_padding * len(COLUMNS)
        widths = {**fixed, "subject": max(8, inner - sum(fixed.values()) - padding)}
        changed = False
        for key, width in widths.items():
            column = self.columns.get(ColumnKey(key))
            if column is not None and column.width != width:
                column.width = width
                changed = True
        if changed:
            total = sum(c.get_render_width(self) for c in self.columns.values())
            self.virtual_size = Size(total, self.virtual_size.height)
            self.refresh()
        self._write_visible()

    # ------------------------------------------------------------------ subtitle

    def set_error(self, error: str) -> None:
        """An unreadable task file: shown in the subtitle until it is readable again."""
        self._error = error
        self._subtitle()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._subtitle()

    def on_focus(self) -> None:
        self._subtitle()

    def on_blur(self) -> None:
        self._subtitle()

    def _subtitle(self) -> None:
        """The task the board names: the one the person moved to (while it has focus), else
        the current one (the first in progress, else the first pending); never a completed
        task the cursor merely rests on, and nothing when all are done."""
        if self._error:
            set_border(self, subtitle=agent_text(f"⚠ {self._error}", style="bold red"))
            return
        key = self._highlighted_key() if self.has_focus else self._current_key()
        row = self._rows.get(key or "")
        set_border(self, subtitle=f"#{row[0].plain} {row[1].plain}" if row else "")

    def _current_key(self) -> str | None:
        tasks = [t for t in self._tasks.values() if t.id in self._rows]
        for status in ("in_progress", "pending"):
            found = next((t.id for t in tasks if t.status == status), None)
            if found is not None:
                return found
        return None

    def _highlighted_key(self) -> str | None:
        if not self.row_count or not self.is_valid_row_index(self.cursor_row):
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return key

    # ------------------------------------------------------------------ data

    def _row(self, task: Task) -> Row:
        dim = "dim" if task.status == "completed" else ""
        owner = agent_name(task.owner) if task.owner else ""
        owner_style = f"{rich_color(self.owner_colors.get(owner))} {dim}".strip() if owner else ""
        blocked = " ".join(f"#{b}" for b in task.blocked_by if self._is_open(b))
        return (
            _cell(task.id, dim, justify="right"),
            _cell(one_line(task.subject, 200), dim),
            _cell(task.status, dim or STATUS_STYLES.get(task.status, "")),
            _cell(owner or "—", owner_style or "dim"),
            _cell(blocked, dim or "red"),
        )

    def apply(self, upserts: Iterable[Task], removals: Iterable[str], *, reset: bool) -> None:
        """Update rows by key, queue new rows, remove rows (``reset``: clear first).

        New rows are added ``CHUNK`` at a time, one chunk per timer tick, so loading
        thousands never blocks the screen. A changed row is written to the table (changed
        cells only) when it is in view, else when it scrolls into view: every cell update
        makes the DataTable redraw all it shows, so a burst of changes to rows nobody sees
        costs nothing. Call inside ``batch_update()``."""
        if reset:
            self.clear()
            self._rows.clear()
            self._tasks.clear()
            self._backlog.clear()
            self._stale.clear()
            self._last_id = 0
            if self._chunk_timer is not None:
                self._chunk_timer.stop()
                self._chunk_timer = None
        for task in upserts:
            if task.id not in self._rows:
                self._backlog[task.id] = task
                continue
            previous = self._tasks.get(task.id)
            self._tasks[task.id] = task
            self._rows[task.id] = self._row(task)
            self._show(task.id)
            if previous is not None and previous.is_resolved != task.is_resolved:
                for dependent in task.blocks:  # their "Blocked by" cell changes too
                    if dependent in self._rows and dependent in self._tasks:
                        self._rows[dependent] = self._row(self._tasks[dependent])
                        self._show(dependent)
        for task_id in removals:
            if task_id in self._backlog:
                del self._backlog[task_id]
            elif task_id in self._rows:
                del self._rows[task_id], self._tasks[task_id]
                self._stale.discard(task_id)
                self.remove_row(task_id)
        if self._chunk_timer is None:
            self._add_chunk()
        self._subtitle()  # the current task may have changed

    def is_open(self, task_id: str) -> bool:
        """Whether ``task_id`` is still to be done (what a task waiting for it waits on)."""
        return self._is_open(task_id)

    def _is_open(self, task_id: str) -> bool:
        """A blocker still to be done (unknown ids count as open: better shown than hidden)."""
        blocker = self._tasks.get(task_id) or self._backlog.get(task_id)
        return blocker is None or not blocker.is_resolved

    def cells(self, task_id: str) -> tuple[str, ...]:
        """The row of ``task_id`` as plain text (what is, or will be, shown)."""
        task = self._backlog.get(task_id)
        row = self._row(task) if task is not None else self._rows[task_id]
        return tuple(cell.plain for cell in row)

    # ------------------------------------------------------------------ writing rows

    def _visible_rows(self) -> range:
        top = int(self.scroll_y)
        return range(max(0, top - 2), top + self.size.height + 2)

    def _show(self, task_id: str) -> None:
        if self.get_row_index(task_id) in self._visible_rows():
            self._write(task_id)
        else:
            self._stale.add(task_id)

    def _write(self, task_id: str) -> None:
        """Write the row's changed cells, and draw that row again, not every row in view:
        ``update_cell`` counts an update of the whole table (every cached line of every row is
        stale), which made each frame of a busy team's board render all it shows (5-10 ms,
        bench/live.py's ``keypress`` row). So the table's count is kept and the row's own
        cached renderables, cells and lines are dropped (textual 8.2's caches)."""
        self._stale.discard(task_id)
        count = self._update_count
        for (_, key, _), cell in zip(COLUMNS, self._rows[task_id], strict=True):
            if not _same(cell, self.get_cell(task_id, key)):
                self.update_cell(task_id, key, cell)
        if self._update_count != count:
            self._update_count = count
            row = RowKey(task_id)
            caches: tuple[LRUCache[Any, Any], ...] = (
                self._cell_render_cache,
                self._row_render_cache,
            )
            for cache in caches:
                keys = cache.keys()  # an LRUCache: no iteration of its own
                for cached in [k for k in keys if k[0] == row]:
                    cache.discard(cached)
            index = self.get_row_index(task_id)  # its cells' renderables, by (count, index)
            keys = self._row_renderable_cache.keys()
            for renderables in [k for k in keys if k[1] == index]:
                self._row_renderable_cache.discard(renderables)
            self._line_cache.clear()  # keyed by line: rebuilt from the rows' caches

    def _write_visible(self) -> None:
        """Rows that came into view: write what changed while they were out of it."""
        if not self._stale:
            return
        for index in self._visible_rows():
            if index >= self.row_count:
                break
            task_id = self.coordinate_to_cell_key(Coordinate(index, 0)).row_key.value
            if task_id in self._stale:
                self._write(task_id)

    def _add_chunk(self) -> None:
        self._chunk_timer = None
        if not self._backlog:
            return
        last_id = self._last_id
        out_of_order = False
        for _ in range(min(CHUNK, len(self._backlog))):
            task_id, task = next(iter(self._backlog.items()))
            del self._backlog[task_id]
            row = self._row(task)
            self.add_row(*row, key=task_id)
            self._rows[task_id] = row
            self._tasks[task_id] = task
            number = int(task_id) if task_id.isdigit() else 0
            out_of_order |= number < last_id
            last_id = max(last_id, number)
        self._last_id = last_id
        if out_of_order:
            self.sort("id", key=lambda cell: int(cell.plain) if cell.plain.isdigit() else 0)
        if self._backlog:
            self._chunk_timer = self.set_timer(CHUNK_PAUSE, self._add_chunk)
        else:
            self._subtitle()
            self.post_message(self.Filled())

    def recolor(self, colors: dict[str, str]) -> None:
        """New member colours: redraw the rows whose owner's colour changed."""
        if colors == self.owner_colors:
            return
        old, self.owner_colors = self.owner_colors, dict(colors)
        for task_id, task in self._tasks.items():
            owner = agent_name(task.owner) if task.owner else None
            if owner and old.get(owner) != colors.get(owner):
                self._rows[task_id] = self._row(task)
                self._show(task_id)

    def task_of(self, task_id: str) -> Task | None:
        """The task of row ``task_id`` (``enter`` opens its detail)."""
        return self._tasks.get(task_id) or self._backlog.get(task_id)

    @property
    def task_ids(self) -> list[str]:
        """Every task id shown or about to be (rows not added yet come last)."""
        return [*self._rows, *self._backlog]

    @property
    def filling(self) -> bool:
        """Rows are still being added."""
        return bool(self._backlog)

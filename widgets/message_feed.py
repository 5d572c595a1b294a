"""The team's message feed: every inbox merged in time order, one line per message.

A virtual list (``ScrollView`` + ``render_line``): only the visible lines are described and
drawn, and drawn lines are cached, so 50,000 messages cost what a screenful does. New items
usually go at the end; an out-of-order one (an older timestamp from another writer) is
inserted in place. The filter shows only what one agent sent or received; a search
(``set_query``) only the messages matching every word typed -- in the line shown, the sender,
the recipients, the frame type or the whole text -- with the words highlighted, and ``move_hit``
steps the cursor through them. Typing narrows: a query that extends the previous one only
re-checks the lines shown.

The feed follows the newest line unless the person scrolled up: ``following`` is decided by
where the person scrolls (back to the end: following again), never by what a layout change
(the board toggled, a resize) did to the scroll position.
"""

from __future__ import annotations

import time
from bisect import insort
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from app.display.feed_facts import FeedFacts
from app.display.format import rich_color, short_time
from app.display.text_search import matches, narrows, query_words, select
from app.display.values import FeedItem

FRAME_STYLE = "italic"
HIT_STYLE = "bold black on yellow"
_SEARCH_TEXT = attrgetter("search_text")
RECENT_QUERIES = 64


class MessageFeed(ScrollView, can_focus=True):
    """Feed items in time order; see the module docstring.

    A cursor (up/down while focused) marks one line; ``enter`` or a click on a line asks for
    the whole message (``Opened``): a line is cut at the panel's width, with "…".

    Times are of today ("14:02:05") or dated ("Nov 20 14:02"), today being ``clock``'s
    (injected: snapshots use a fixed one).
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Previous", show=False),
        Binding("down", "cursor(1)", "Next", show=False),
        Binding("enter", "open", "Read", id="feed-open"),
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | up/down | Move the cursor. |
    | enter | Read the whole message under the cursor (the newest if none). |
    """

    @dataclass
    class Opened(Message):
        """The person asked to read ``item`` in full."""

        item: FeedItem

    DEFAULT_CSS = """
    MessageFeed {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, *, clock: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self._items: list[FeedItem] = []
        self._facts = FeedFacts()
        self._view: list[FeedItem] = self._items
        self.agent_filter: str | None = None
        self.query_text = ""
        self._words: tuple[str, ...] = ()
        #: The views of the queries typed lately (same items, same filter): deleting a
        #: character goes back to one of them instead of searching everything again.
        self._recent: dict[tuple[str, ...], list[FeedItem]] = {}
        self.name_colors: dict[str, str] = {}
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(512)
        self.following = True
        self.cursor: FeedItem | None = None

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def _scrolled(self, old: float, new: float) -> None:
        if self._resizing:
            return
        if new >= self.max_scroll_y:
            self.following = True  # at the end (a layout change clamps the position there)
        elif new < old:
            self.following = False  # the person scrolled up

    _resizing = False

    # ------------------------------------------------------------------ data

    @property
    def item_count(self) -> int:
        """Items shown (after the filter)."""
        return len(self._view)

    def lines(self) -> list[str]:
        """The shown items as plain lines (tests, benchmarks)."""
        return [item.line.plain() for item in self._view]

    def set_items(self, items: list[FeedItem]) -> None:
        """Replace everything (``items`` sorted); a fact another line told already is not
        shown twice (``FeedFacts``)."""
        self._facts.clear()
        self._items = [item for item in items if not self._facts.told(item)]
        self._recent.clear()
        self._rebuild_view()

    def add_items(self, items: Iterable[FeedItem]) -> None:
        """Add items (each batch sorted); keep the view pinned to the end if it was. A fact
        another line told already is not shown twice (``FeedFacts``)."""
        new = [item for item in items if not self._facts.told(item)]
        if not new:
            return
        self._recent = {self._words: self._view} if self._words else {}
        if not self._items or self._items[-1].sort_key <= new[0].sort_key:
            self._items.extend(new)
            if self._view is not self._items:
                self._view.extend(i for i in new if self._shown(i))
        else:
            for item in new:
                insort(self._items, item, key=lambda i: i.sort_key)
            self._cache.clear()
            if self._view is not self._items:
                self._view = [i for i in self._items if self._shown(i)]
                self._recent = {self._words: self._view} if self._words else {}
        self._resize(self.following)

    def touch(self, items: Iterable[FeedItem]) -> None:
        """Items whose recipients changed: redraw."""
        if any(True for _ in items):
            self._recent.clear()
            if self.agent_filter is not None or self._words:
                self._rebuild_view()
            self._cache.clear()
            self.refresh()

    def set_filter(self, agent: str | None) -> None:
        """Show only ``agent``'s messages (sent or received); ``None`` shows everything."""
        if agent != self.agent_filter:
            self.agent_filter = agent
            self._recent.clear()
            self._rebuild_view()

    def set_colors(self, colors: dict[str, str]) -> None:
        if colors != self.name_colors:
            self.name_colors = dict(colors)
            self._cache.clear()
            self.refresh()

    def set_query(self, text: str) -> int:
        """Show only the messages matching every word of ``text`` (``""``: all); returns how
        many are shown."""
        words = query_words(text)
        if words == self._words:
            return len(self._view)
        narrowing = narrows(text, self.query_text) and self._view is not self._items
        self.query_text, self._words = text.strip(), words
        recent = self._recent.get(words)
        if recent is not None or narrowing:
            if recent is None:
                recent = select(self._view, words, _SEARCH_TEXT)
            self._view = recent
            self._cache.clear()
            self.following = True
            self._resize(True)
        else:
            self._rebuild_view()
        if words:
            if len(self._recent) >= RECENT_QUERIES:
                del self._recent[next(iter(self._recent))]
            self._recent[words] = self._view
        return len(self._view)

    def move_hit(self, step: int) -> bool:
        """With a search: the cursor to the next (``step`` 1) or previous (-1) matching line,
        wrapping; from no cursor, the first or the last. Whether there was one."""
        if not self._words or not self._view:
            return False
        index = self._cursor_index()
        if index is None:
            index = 0 if step > 0 else len(self._view) - 1
        else:
            index = (index + step) % len(self._view)
        self._move_cursor(index)
        return True

    def _shown(self, item: FeedItem) -> bool:
        if self.agent_filter is not None and not item.involves(self.agent_filter):
            return False
        return not self._words or matches(self._words, item.search_text)

    def prepare_search(self) -> None:
        """A search is about to start: work out every line's search text in a thread (the
        first keystroke then only filters)."""
        items = list(self._items)
        self.run_worker(
            lambda: [_SEARCH_TEXT(item) for item in items],
            thread=True,
            group="feed-search",
            exclusive=True,
            exit_on_error=False,
        )

    def _rebuild_view(self) -> None:
        if self.agent_filter is None and not self._words:
            self._view = self._items
        elif self.agent_filter is None:
            self._view = select(self._items, self._words, _SEARCH_TEXT)
        else:
            self._view = [i for i in self._items if self._shown(i)]
        self._cache.clear()
        self.following = True
        self._resize(True)

    def _resize(self, scroll_end: bool) -> None:
        size = Size(self.size.width, len(self._view))
        if self.size and size != self.virtual_size:
            # Not ``self.virtual_size = size``: that asks for a layout of the whole screen,
            # on every new message of a busy team (a key press waited behind them). Nothing
            # here moves or resizes: the vertical scrollbar is always shown (overflow-y:
            # scroll), the horizontal never (hidden); only its thumb changes.
            self.set_reactive(MessageFeed.virtual_size, size)
            self.vertical_scrollbar.window_virtual_size = size.height
        else:
            self.virtual_size = size
        if scroll_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    # ------------------------------------------------------------------ cursor

    def _cursor_index(self) -> int | None:
        if self.cursor is None:
            return None
        try:
            return self._view.index(self.cursor)
        except ValueError:
            return None

    def action_cursor(self, step: int) -> None:
        if not self._view:
            return
        index = self._cursor_index()
        if index is None:
            bottom = min(len(self._view), int(self.scroll_offset.y) + self.size.height) - 1
            index = bottom if step < 0 else int(self.scroll_offset.y)
        else:
            index = max(0, min(len(self._view) - 1, index + step))
        self._move_cursor(index)

    def _move_cursor(self, index: int) -> None:
        self.cursor = self._view[index]
        self._cache.clear()
        top = int(self.scroll_offset.y)
        if index < top:
            self.scroll_to(y=index, animate=False, immediate=True)
        elif index >= top + self.size.height:
            self.scroll_to(y=index - self.size.height + 1, animate=False, immediate=True)
        self.refresh()

    def action_open(self) -> None:
        index = self._cursor_index()
        if index is None and self._view:
            index = len(self._view) - 1
        if index is not None:
            self.post_message(self.Opened(self._view[index]))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = int(self.scroll_offset.y) + offset.y
        if 0 <= index < len(self._view):
            self._move_cursor(index)
            self.post_message(self.Opened(self._view[index]))

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()

    # ------------------------------------------------------------------ drawing

    def _text(self, item: FeedItem, now: float) -> Text:
        line = item.line
        text = Text(no_wrap=True, end="")
        text.append(short_time(item.timestamp, now), style="dim")
        text.append(" ")
        text.append(line.actor, style=f"bold {rich_color(self.name_colors.get(line.actor))}")
        if line.target:
            text.append(" -> ", style="dim")
            text.append(line.target, style=rich_color(self.name_colors.get(line.target)))
            text.append(":")
        text.append(" ")
        text.append(line.text, style=FRAME_STYLE if line.kind != "message" else "")
        if self._words:
            text.highlight_words(self._words, HIT_STYLE, case_sensitive=False)
        return text

    def render_line(self, y: int) -> Strip:
        # The scrollbar's column is not the line's: a line cut there would hide its "…".
        width = self.scrollable_content_region.width
        index = self.scroll_offset.y + y
        style = self.rich_style
        if not self._view:
            if y == 0:
                what = "no message matches" if self._words else "no messages yet"
                empty = Text(what, style="dim italic", end="")
                return Strip(empty.render(self.app.console)).crop_extend(0, width, style)
            return Strip.blank(width, style)
        if index >= len(self._view):
            return Strip.blank(width, style)
        item = self._view[index]
        now = self.clock()
        key = (item.seq, width, int(now // 3600))  # a new hour may be a new day: dates again
        strip = self._cache.get(key)
        if strip is None:
            text = self._text(item, now)
            if item is self.cursor:
                text.stylize("reverse" if self.has_focus else "underline")
            text.truncate(width, overflow="ellipsis")
            strip = Strip(text.render(self.app.console), cell_len(text.plain))
            strip = strip.crop_extend(0, width, style)
            self._cache.set(key, strip)
        return strip.apply_offsets(0, index)

    def on_resize(self) -> None:
        self._cache.clear()
        self._resizing = True  # scroll moves from here on are the layout's, not the person's
        try:
            self.virtual_size = Size(self.size.width, len(self._view))
            if self.following:
                self.scroll_end(animate=False, immediate=True, x_axis=False)
        finally:
            self._resizing = False

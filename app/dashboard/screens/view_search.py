"""Search in a live view: ``/`` opens a box that filters the view's feed (leader view) or
transcript (agent view) as you type; ``enter`` hands the keys back, ``n``/``N`` step through
the matching lines; ``esc`` closes the box and shows everything again.

The matching is ``app.display.text_search``'s (the replay's too). The screen owns the keys (see
``DeckScreen``); this object does what they ask, on the widget the screen names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input

from app.dashboard import keys
from widgets.search_bar import SearchBar

#: The search's keys (see ``app.dashboard.keys.SEARCH_KEYS``).
SEARCH_KEYS = keys.SEARCH_KEYS


class Searchable(Protocol):
    """A widget that can be searched: ``MessageFeed``, ``Transcript``."""

    def set_query(self, text: str) -> int: ...

    def move_hit(self, step: int) -> bool: ...

    def prepare_search(self) -> None: ...

    def focus(self, scroll_visible: bool = True) -> Widget: ...


class ViewSearch:
    """The search of one view: ``target`` names the widget searched now, ``focus_keys``
    gives the keys back to the view."""

    def __init__(
        self,
        screen: Screen[None],
        target: Callable[[], Searchable | None],
        focus_keys: Callable[[], None],
    ) -> None:
        self.screen = screen
        self._target = target
        self._focus_keys = focus_keys
        self.query = ""

    # ------------------------------------------------------------------ state

    @property
    def bar(self) -> SearchBar | None:
        try:
            return self.screen.query_one(SearchBar)
        except NoMatches:
            return None

    @property
    def is_open(self) -> bool:
        bar = self.bar
        return bar is not None and bar.is_open

    @property
    def active(self) -> bool:
        """Open with something typed: ``n``/``N`` step through the hits."""
        return self.is_open and bool(self.query.strip())

    @property
    def focused(self) -> bool:
        """The search box has focus (keys are the query's letters)."""
        bar = self.bar
        return bar is not None and self.screen.focused is bar.input

    # ------------------------------------------------------------------ what the keys ask

    def open(self) -> None:
        """``/``: show the box (mounted the first time, above the view's input) and type."""
        target = self._target()
        if target is not None:
            target.prepare_search()
        bar = self.bar
        if bar is None:
            bar = SearchBar()
            inputs = [w for w in self.screen.query(Input) if w.id != "search"]
            before: Widget = inputs[0] if inputs else self.screen.query_one(Footer)
            self.screen.mount(bar, before=before)
            self.screen.call_after_refresh(bar.open)
            return
        bar.open()

    def typed(self, text: str) -> None:
        """The query changed: filter now (every keystroke)."""
        self.query = text
        target = self._target()
        count = target.set_query(text) if target is not None else 0
        bar = self.bar
        if bar is not None:
            bar.show_count(count if text.strip() else None)

    def submitted(self) -> None:
        """``enter`` in the box: the keys act again, on the filtered view, first hit marked."""
        target = self._target()
        if target is None:
            return
        target.focus()
        if self.query.strip():
            target.move_hit(1)

    def hit(self, step: int) -> None:
        target = self._target()
        if target is not None and not target.move_hit(step):
            self.screen.notify("No line matches the search.", severity="warning")

    def close(self) -> None:
        """``esc``: everything shown again, the keys back on the view."""
        bar = self.bar
        self.query = ""
        if bar is not None:
            bar.close()
        target = self._target()
        if target is not None:
            target.set_query("")
        self._focus_keys()

"""The search box of a view (``/``): one line, the query and how many lines match.

Hidden until opened; the view filters its feed or transcript on ``Input.Changed`` from the
input inside (id ``search``). Its hint is true to where the keys go: while the box has focus
``n`` is a letter of the query, so it says "enter, then n/N"; once enter handed the keys back,
"n/N next/prev".
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Static

PLACEHOLDER = "search: text, sender or type · enter, then n/N step through · esc: close"
#: The hint after the count, while typing (``n`` is text) and after enter (``n`` steps).
TYPING_HINT = "enter, then n/N · esc closes"
STEPPING_HINT = "n/N next/prev · esc closes"


class SearchBar(Horizontal):
    DEFAULT_CSS = """
    SearchBar {
        height: 1;
        display: none;
        background: $panel;
        &.-open { display: block; }
        & > .search-mark { width: 2; padding: 0 0 0 1; color: $text-accent; text-style: bold; }
        & > Input { width: 1fr; }
        & > .search-count { width: 43; padding: 0 1; color: $text-muted; text-align: right; }
    }
    """

    def compose(self) -> ComposeResult:
        yield Static("/", classes="search-mark")
        yield Input(placeholder=PLACEHOLDER, id="search", compact=True)
        yield Static(classes="search-count")

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self) -> None:
        self.add_class("-open")
        self.input.focus()

    def close(self) -> None:
        self.remove_class("-open")
        self.input.value = ""
        self.show_count(None)

    _count: int | None = None

    def on_descendant_focus(self) -> None:
        self.show_count(self._count)  # typing again: n is text

    def on_descendant_blur(self) -> None:
        self.show_count(self._count)  # enter handed the keys back: n steps

    def show_count(self, count: int | None) -> None:
        """How many lines match (``None``: nothing typed), and what steps through them from
        where the focus is."""
        self._count = count
        if count is None:
            text = ""
        elif count == 0:
            text = "no match · esc closes"
        else:
            hint = TYPING_HINT if self.input.has_focus else STEPPING_HINT
            text = f"{count:,} shown · {hint}"
        # A fixed width: a new count redraws one line, never the screen's layout.
        self.query_one(".search-count", Static).update(text, layout=False)

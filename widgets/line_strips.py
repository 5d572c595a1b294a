"""One line of Rich text to a Textual strip, the strip Textual would make, made for less.

A panel's line that reads differently is made into a strip again (``Visual.to_strips``): Textual
turns the Rich text into its own ``Content`` (each span's style converted), lays it out for
wrapping, overflow and alignment, then renders it. For one line already cut to its width that
is ~0.3 ms, and the roster's lines were the largest part of a busy team's frames: with fifty
teammates at work most of the rows the roster's page scroll brings into view read differently
from when they were drawn, and each was made this way (bench/live.py ``--sizes 50``).

``line_strip`` makes the same segments directly: Rich splits the line at its spans, each piece's
style is converted as Textual converts a span's (``Style.from_rich_style`` with the app's ANSI
theme, over the widget's visual style, with the ``offset`` meta text selection uses). A line
it cannot promise to make the same way is left to Textual (``None``): a link, a line wider
than the room, or a widget whose text is being selected or aligned. (A whole text's style is
a span under the others, as Textual takes it.)
tests/ui/test_ui_line_strips.py compares both on every panel line and every pane row, in each
theme.
"""

from __future__ import annotations

from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from rich.terminal_theme import TerminalTheme
from rich.text import Span, Text
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget


def line_strip(widget: Widget, line: Text, width: int, style: Style, y: int = 0) -> Strip | None:
    """``line`` drawn over ``style`` as ``Visual.to_strips(widget, visualize(widget, line),
    width, 1, style)[0]`` draws it (as row ``y`` of a text of several rows: the offset text
    selection reads), or ``None`` where only Textual can say."""
    if "\n" in line.plain or cell_len(line.plain) > width:
        return None
    if line.style:  # Rich leaves a whole text's style out of an unstyled text's render
        line = Text(line.plain, spans=[Span(0, len(line.plain), line.style), *line.spans])
    if widget.text_selection is not None or widget.styles.content_align != ("left", "top"):
        return None
    if widget.styles.text_align not in ("left", "start"):
        return None
    app = widget.app
    console, theme = app.console, app.ansi_theme
    segments: list[Segment] = []
    x = 0
    for piece in line.render(console, end=""):
        text, rich = piece.text, piece.style
        if rich is not None and (rich.link or rich._meta):
            return None  # links and meta: Textual's own handling
        over = style if rich is None or not rich else _over(style, rich, theme)
        segments.append(Segment(text, _at(over, x, y)))
        x += len(text)
    return Strip(segments, cell_len(line.plain))


@lru_cache(maxsize=4096)
def _at(style: Style, x: int, y: int) -> RichStyle:
    """``style`` as Rich's, at cell ``x`` of row ``y`` (the same lines are made again and
    again: a Rich style with meta is a dump of it each time)."""
    return style.rich_style_with_offset(x, y)


@lru_cache(maxsize=1024)
def _over(style: Style, rich: RichStyle, theme: TerminalTheme) -> Style:
    """A span's Rich style over the widget's, converted as Textual converts it."""
    return style + Style.from_rich_style(rich, theme)

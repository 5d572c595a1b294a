"""Border titles that repaint only when they change, and then only their border row.

Setting ``border_title``/``border_subtitle`` repaints the whole widget even when the value is
the same, and a ``str`` is parsed as markup. The views set them on every update, with names
and error messages in them: ``set_border`` takes plain text (never markup) and skips values
already shown.

A changed title repaints the one row it is drawn on, not the widget's content: the lead's pane
names the selected teammate in its subtitle, so every selection changed it, and the full
repaint of the pane (its lines cut to the width, ~2 ms) was a good part of a key press's frame
while a team works (bench/live.py's ``keypress`` row). The row is repainted through Textual's
own path (``refresh`` with a region); the value is stored where Textual's setter stores it
(``_border_title``/``_border_subtitle``, textual 8.2 as pinned), else the setter is used.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.geometry import Region
from textual.widget import Widget

from widgets.agent_text import agent_text


def _text(value: str | Text) -> Text:
    """A border's text: a string is agent text (a task subject, a file error), shown
    literally (``widgets.agent_text``)."""
    return agent_text(value) if isinstance(value, str) else value


def _markup(value: str | Text) -> str:
    text = _text(value)
    return Content.from_rich_text(text).markup


def set_border(
    widget: Widget, *, title: str | Text | None = None, subtitle: str | Text | None = None
) -> None:
    """Set the title and/or subtitle (``None``: leave it) as plain text, if changed."""
    if title is not None and widget.border_title != _markup(title):
        _set_edge(widget, "title", _text(title))
    if subtitle is not None and widget.border_subtitle != _markup(subtitle):
        _set_edge(widget, "subtitle", _text(subtitle))


def _set_edge(widget: Widget, edge: str, value: Text) -> None:
    """``widget.border_<edge> = value``, repainting only the row it is drawn on."""
    attribute = f"_border_{edge}"
    height = widget.outer_size.height
    if not hasattr(widget, attribute) or height < 2:  # not laid out yet: nothing to spare
        setattr(widget, f"border_{edge}", value)
        return
    # As Textual's setter does: the first line, tabs expanded.
    setattr(widget, attribute, widget.render_str(Content.from_rich_text(value)).expand_tabs(4))
    setattr(widget, attribute, getattr(widget, attribute).split()[0])
    row = 0 if edge == "title" else height - 1
    offset = widget.content_offset  # ``refresh`` takes regions of the content's coordinates
    widget.refresh(Region(-offset.x, row - offset.y, widget.outer_size.width, 1))

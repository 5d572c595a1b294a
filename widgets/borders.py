"""Border titles that repaint only when they change.

Setting ``border_title``/``border_subtitle`` repaints the whole widget even when the value is
the same, and a ``str`` is parsed as markup. The views set them on every update, with names
and error messages in them: ``set_border`` takes plain text (never markup) and skips values
already shown.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.widget import Widget


def _markup(value: str | Text) -> str:
    text = Text(value) if isinstance(value, str) else value
    return Content.from_rich_text(text).markup


def set_border(
    widget: Widget, *, title: str | Text | None = None, subtitle: str | Text | None = None
) -> None:
    """Set the title and/or subtitle (``None``: leave it) as plain text, if changed."""
    if title is not None and widget.border_title != _markup(title):
        widget.border_title = Text(title) if isinstance(title, str) else title
    if subtitle is not None and widget.border_subtitle != _markup(subtitle):
        widget.border_subtitle = Text(subtitle) if isinstance(subtitle, str) else subtitle

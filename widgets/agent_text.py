"""Agent text for Rich and Textual: :func:`app.display.agent_text.shown`, then kept literal.

``agent_text`` is a Rich ``Text`` (never parsed as markup); ``agent_markup`` is for the few
places that parse markup (a toast's message); ``Fitted`` draws a line built for the width it is
given (an approvals row whose command keeps its start and its end at any width).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text

from app.display.agent_text import shown

__all__ = ["Fitted", "agent_markup", "agent_text", "shown"]


def agent_text(value: object, style: str | Style = "", **options: Any) -> Text:
    """Agent text as a Rich ``Text``: escapes shown, markup literal."""
    return Text(shown(value), style=style, **options)


def agent_markup(value: object) -> str:
    """Agent text for a markup string (a toast, a collapsible's title): escapes shown, every
    ``[`` escaped. (``textual.markup.escape`` leaves a tag cut short, ``[@click=…``, which
    the parser then refuses: the view that drew it failed.)"""
    return shown(value).replace("[", "\\[")


class Fitted:
    """A renderable line made for the width it is drawn at: ``build(width)``."""

    def __init__(self, build: Callable[[int], Text]) -> None:
        self.build = build

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(options.max_width)

    def __str__(self) -> str:
        """The line's words at a width that cuts nothing (what ``str(Text)`` gives)."""
        return self.build(1000).plain

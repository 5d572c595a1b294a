"""Markdown for plans and model text in which names stay as written.

Plans and feedback name files and code without back-quotes: ``__init__.py``, ``_private_helper``.
Plain Markdown reads ``__init__`` as bold "init" and eats the underscores. This parser keeps
everything else (headings, lists, code, links, ``*emphasis*`` and ``**bold**``) and treats an
underscore as a plain character.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.emphasis import tokenize as emphasis
from rich.markdown import Markdown as RichMarkdown


def _stars_only(state: StateInline, silent: bool) -> bool:
    """The emphasis rule for ``*`` only: an ``_`` is left to be plain text."""
    if state.src[state.pos] == "_":
        return False
    return emphasis(state, silent)


def literal_parser() -> MarkdownIt:
    """A ``parser_factory`` for Textual's ``Markdown``: GitHub-like, underscores literal."""
    parser = MarkdownIt("gfm-like")
    parser.inline.ruler.at("emphasis", _stars_only)
    return parser


class StaticMarkdown(RichMarkdown):
    """Markdown drawn in one pass (Rich's renderer, this module's parser): a whole entry of
    a transcript shown at once, at its full height -- Textual's ``Markdown`` mounts its
    blocks later, leaving blank gaps that fill in and push the view about while it opens."""

    def __init__(self, markup: str, **options: Any) -> None:
        super().__init__(markup, **options)
        self.parsed = literal_parser().parse(markup)

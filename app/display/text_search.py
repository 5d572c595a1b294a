"""Search as you type, shared by the live dashboard's feed and transcripts and by replay.

A query matches a text when every word of it is in the text, in any case ("worker-3 done"
finds "Task #4 done by worker-3"). What a text is -- the line shown, the sender, the frame
type -- is the caller's choice; it is lowered once and kept (``haystack``).

Typing narrows: when the new query extends the previous one, everything it matches was
matched before, so only the previous hits are checked again (``narrows``). No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def haystack(*parts: str | None) -> str:
    """The text a query is matched against: ``parts`` lowered, one per line."""
    return "\n".join(p for p in parts if p).lower()


def query_words(query: str) -> tuple[str, ...]:
    return tuple(query.lower().split())


def matches(words: Sequence[str], text: str) -> bool:
    """Whether every word is in ``text`` (a ``haystack``); no words match everything."""
    return all(word in text for word in words)


def select(items: Iterable[T], words: Sequence[str], text_of: Callable[[T], str]) -> list[T]:
    """The items whose text (``text_of``: a ``haystack``) has every word, in order. The
    longest word is checked first: it rules out the most."""
    if not words:
        return list(items)
    first, *rest = sorted(words, key=len, reverse=True)
    if not rest:
        return [item for item in items if first in text_of(item)]
    return [item for item in items if first in (t := text_of(item)) and all(w in t for w in rest)]


def narrows(query: str, previous: str) -> bool:
    """Whether ``query``'s hits are among ``previous``'s (it extends a non-empty query)."""
    new, old = query.strip().lower(), previous.strip().lower()
    return bool(old) and new.startswith(old)


class IndexSearch:
    """Incremental search over a fixed list of texts: ``hits(query)`` -> their indexes."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.texts = [t.lower() for t in texts]
        self._last_query = ""
        self._last_hits: list[int] = list(range(len(self.texts)))

    def hits(self, query: str) -> list[int]:
        """Indexes of the texts matching every word of ``query`` (any case), in order."""
        words = query_words(query)
        if not words:
            self._last_query, self._last_hits = "", list(range(len(self.texts)))
            return list(self._last_hits)
        pool: Iterable[int] = (
            self._last_hits if narrows(query, self._last_query) else range(len(self.texts))
        )
        found = select(pool, words, self.texts.__getitem__)
        self._last_query, self._last_hits = query, found
        return found

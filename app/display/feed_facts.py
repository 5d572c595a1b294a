"""One line per fact in the feed, whichever sources tell it.

Some facts reach the feed twice: a Claude Code teammate going idle is told by its
``TeammateIdle`` hook (a line of the bridge, live or rebuilt from the run archive) and by the
``idle_notification`` it leaves in the lead's inbox (a line of the files). Each feed item names
the fact it tells (``FeedItem.fact_key``); :class:`FeedFacts` lets the first line of a fact in,
and keeps out another line of the same fact told within ``FEED_TWIN_SECONDS`` of it. Lines are
told apart by what they are about, never by their words.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class FeedItem(Protocol):
    """What a fact needs of a feed item (``app.display.values.FeedItem``, which imports this
    module: a Protocol rather than a circle)."""

    @property
    def timestamp(self) -> str: ...

    @property
    def fact_key(self) -> str | None: ...


#: Two lines of one fact (``FeedItem.fact_key``) told this many seconds apart or less are one.
FEED_TWIN_SECONDS = 2.0


def idle_fact(agent: str) -> str:
    return f"idle:{agent}"


def feed_moment(item: FeedItem) -> float | None:
    """``item``'s time in epoch seconds (``None``: its timestamp cannot be read)."""
    try:
        return datetime.fromisoformat(item.timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class FeedFacts:
    """The facts the feed told, and when: :meth:`told` says whether an item's fact was told
    already (by another source, within ``FEED_TWIN_SECONDS``) and otherwise notes it."""

    def __init__(self) -> None:
        self._moments: dict[str, list[float]] = {}

    def clear(self) -> None:
        self._moments.clear()

    def told(self, item: FeedItem) -> bool:
        key = item.fact_key
        if key is None:
            return False
        moment = feed_moment(item)
        if moment is None:
            return False
        moments = self._moments.setdefault(key, [])
        if any(abs(moment - earlier) <= FEED_TWIN_SECONDS for earlier in moments):
            return True
        moments.append(moment)
        del moments[:-50]  # the recent ones are those a twin can meet
        return False

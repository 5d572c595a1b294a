"""What the app streams to the open views through one Textual ``Signal`` (``DeckHost.streamed``):
text as it arrives, whole transcript entries, hook outcomes, the run's end, and a viewer's
transcript that grew in its session file. These are streams, not state: the views take them
as they come instead of watching a reactive.

``app.dashboard.event_relay`` publishes the runtime's; the app publishes ``TranscriptGrew``.
A view subscribes when it is mounted and unsubscribes when it is unmounted
(``app.dashboard.screens.deck_view.DeckView``).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.display.values import FeedItem
from app.runtime.events import TextDelta, TranscriptEntry


@dataclass(frozen=True)
class HookLines:
    """Team hooks that blocked or warned, as feed lines (with their team)."""

    items: list[tuple[str | None, FeedItem]]


@dataclass(frozen=True)
class RunEnded:
    """The run ended (the team is done); ``reason`` says how."""

    reason: str
    ok: bool = True


@dataclass(frozen=True)
class TranscriptGrew:
    """``agent``'s transcript, read from its session file, changed (a viewer)."""

    agent: str


#: One item of the stream.
Streamed = TextDelta | TranscriptEntry | HookLines | RunEnded | TranscriptGrew

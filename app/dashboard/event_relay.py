"""Runtime events -> the dashboard's views, in arrival order.

The runtime calls :meth:`RuntimeRelay.push` from any thread; events are buffered
(``EventBuffer``) and flushed at once for status, approval and transcript events (one pending
``RuntimeFlush`` message at a time), every ``TeamDeckApp.FLUSH_SECONDS`` for streamed text.
A flush hands streamed text, transcript entries and hook outcomes (feed lines) straight to the
open views (they are streams, not state), notices the end of a run, and returns the rest
(``Digest``) for the app to apply to its state.
"""

from __future__ import annotations

import itertools
from typing import Any

from textual.app import App
from textual.message import Message

from app.dashboard.event_burst import Digest, EventBuffer, KeyHint, Notice, digest
from app.dashboard.leaving import RunWatch
from app.dashboard.screens.deck import DeckScreen
from app.display.values import hook_item
from app.runtime.events import RuntimeEvent, TextDelta


class RuntimeFlush(Message):
    """Runtime events are waiting in the buffer (a burst keeps only one of these)."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RuntimeFlush)


class RuntimeRelay:
    """See the module docstring. ``keys`` names the keys that answer a request (notices)."""

    def __init__(self, app: App[Any], keys: KeyHint) -> None:
        self.app = app
        self.keys = keys
        self.partial: dict[str, str] = {}  # text streamed since the agent's last entry
        self._events = EventBuffer()
        self._run = RunWatch()
        self._hook_seq = itertools.count(1)  # feed lines of hook outcomes: -1, -2, ...

    def push(self, event: RuntimeEvent) -> None:
        """The runtime's listener (any thread): buffer; ask for a prompt flush unless text."""
        if self._events.push(event):
            self.app.post_message(RuntimeFlush())

    def views(self) -> list[DeckScreen]:
        """The leader and agent views that are up."""
        return [s for s in self.app.screen_stack if isinstance(s, DeckScreen) and s.is_mounted]

    def flush(self) -> Digest | None:
        """Stream what arrived to the views; ``None`` if nothing did, else the rest to apply."""
        events = self._events.drain()
        if not events:
            return None
        news = digest(events, self.keys)
        views = self.views()
        for event in news.stream:
            if isinstance(event, TextDelta):
                self.partial[event.agent] = self.partial.get(event.agent, "") + event.text
                for view in views:
                    view.on_text(event.agent, event.text)
            else:
                self.partial.pop(event.agent, None)
                for view in views:
                    view.on_entry(event)
        if news.hooks:
            items = [(e.team, hook_item(e, -next(self._hook_seq))) for e in news.hooks]
            for view in views:
                view.on_hooks(items)
        over = self._run.see(events)
        if over is not None:
            for view in views:
                view.run_finished(over, True)
            news.notices.append(Notice(over, "Run finished"))
        return news

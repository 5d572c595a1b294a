"""Runtime events -> the dashboard's views, in arrival order.

The runtime calls :meth:`RuntimeRelay.push` from any thread; events are buffered
(``EventBuffer``) and flushed at once for status, approval and transcript events (one pending
``RuntimeFlush`` message at a time), every ``TeamDeckApp.FLUSH_SECONDS`` for streamed text.
A flush publishes streamed text, transcript entries, hook outcomes (feed lines) and the end of
a run through ``streamed``, a Textual ``Signal`` the open views subscribe to
(``app.dashboard.streams``: they are streams, not state), and returns the rest (``Digest``) for
the app to apply to its state.
"""

from __future__ import annotations

import itertools
from typing import Any

from textual.app import App
from textual.message import Message
from textual.signal import Signal

from app.dashboard.event_burst import Digest, EventBuffer, KeyHint, Notice, digest
from app.dashboard.leaving import RunWatch
from app.dashboard.streams import HookLines, RunEnded, Streamed
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
        #: What the views take as it comes (they subscribe while mounted).
        self.streamed: Signal[Streamed] = Signal(app, "streamed")

    def push(self, event: RuntimeEvent) -> None:
        """The runtime's listener (any thread): buffer; ask for a prompt flush unless text."""
        if self._events.push(event):
            self.app.post_message(RuntimeFlush())

    def flush(self) -> Digest | None:
        """Stream what arrived to the views; ``None`` if nothing did, else the rest to apply."""
        events = self._events.drain()
        if not events:
            return None
        news = digest(events, self.keys)
        publish = self.streamed.publish
        for event in news.stream:
            if isinstance(event, TextDelta):
                self.partial[event.agent] = self.partial.get(event.agent, "") + event.text
            else:
                self.partial.pop(event.agent, None)
            publish(event)
        if news.hooks:
            publish(HookLines([(e.team, hook_item(e, -next(self._hook_seq))) for e in news.hooks]))
        over = self._run.see(events)
        if over is not None:
            publish(RunEnded(over))
            news.notices.append(Notice(over, "Run finished"))
        return news

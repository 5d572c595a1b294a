"""Runtime events -> the dashboard's views, in arrival order.

The runtime calls :meth:`RuntimeRelay.push` from any thread; events are buffered
(``EventBuffer``) and flushed on the views' beat (``TeamDeckApp.FLUSH_SECONDS``, with the
store's deltas: ``app.dashboard.view_beat``); a status, approval or
transcript event asks for a flush at once (one pending ``RuntimeFlush`` message at a time)
unless the last flush was less than :data:`MIN_GAP` ago -- the next tick takes it then. Eight
teammates at full speed send hundreds of such events a second: flushed one by one, each
redrew the roster, the board and the feed, and a key press waited behind them.
A flush publishes streamed text, transcript entries, hook outcomes (feed lines) and the end of
a run through ``streamed``, a Textual ``Signal`` the open views subscribe to
(``app.dashboard.streams``: they are streams, not state), and returns the rest (``Digest``) for
the app to apply to its state.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from textual.app import App
from textual.message import Message
from textual.signal import Signal

from app.dashboard.event_burst import Digest, EventBuffer, KeyHint, Notice, digest
from app.dashboard.leaving import RunWatch
from app.dashboard.streams import HookLines, RunEnded, Streamed
from app.display.values import hook_item
from app.runtime.events import RuntimeEvent, TextDelta

MIN_GAP = 0.1
"""Seconds between two flushes asked for by events (the views update at most this often)."""


def permission_limit(app: App[Any]) -> float | None:
    """The seconds a permission request of the app's runtime waits (``None``: no limit, or
    no runtime)."""
    seconds = getattr(getattr(app, "runtime", None), "permission_timeout", None)
    return float(seconds) if isinstance(seconds, int | float) and seconds > 0 else None


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
        self._flushed_at = 0.0  # time.monotonic() of the last flush

    def push(self, event: RuntimeEvent) -> None:
        """The runtime's listener (any thread): buffer; ask for a prompt flush unless text
        (or unless the views were updated less than ``MIN_GAP`` ago: the tick flushes it)."""
        if self._events.push(event) and time.monotonic() - self._flushed_at >= MIN_GAP:
            self.app.post_message(RuntimeFlush())

    @property
    def pending(self) -> int:
        """Events waiting for the next flush."""
        return len(self._events)

    def flush(self) -> Digest | None:
        """Stream what arrived to the views; ``None`` if nothing did, else the rest to apply."""
        self._flushed_at = time.monotonic()
        events = self._events.drain()
        if not events:
            return None
        news = digest(events, self.keys, permission_limit(self.app))
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
            news.run_ended = True  # the lead's counts start again with the next goal's team
        return news

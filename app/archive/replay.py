"""A recorded run, replayable: the team's state at any point of its timeline (no Textual).

``Replay.load`` reads a window, not the run: the run's index (each event's id and time, the
positions of its messages and of each agent's transcript entries, a checkpoint of the team's
state every ``CHECKPOINT`` events) is kept in the archive by the recorder as it writes the run
(``app.archive.replay_index``), so an open reads those arrays as bytes, the last checkpoint,
and the few events after it (fewer than ``CHECKPOINT``, plus whatever a live run added since).
A run recorded before the archive kept an index is walked in full, as before. The events
themselves (texts, data) stay in the archive and are read when shown, a page at a time
(``StoredEvents``, a few pages kept), so a run of any length opens in about the same time, in
memory that does not grow with its texts. The state after the first ``n`` events (agents with
their status and cost, the task board, the messages so far, any agent's transcript) is the
nearest checkpoint (read from the archive when asked for, a few kept) plus at most
``CHECKPOINT`` events, so a scrub to any point costs the same wherever it lands.

``Search`` filters events by text, sender or frame type (all words must match, any case).
"""

from __future__ import annotations

import bisect
import sqlite3
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from app.archive import query, replay_index
from app.archive.query import Event, RunSummary
from app.archive.replay_state import (
    STATE_KINDS,
    AgentState,
    State,
    TaskState,
    base_state,
    resolve,
)
from app.archive.replay_walk import CHECKPOINT
from app.archive.timeline import event_line
from app.display.text_search import IndexSearch, haystack

__all__ = [
    "CHECKPOINT",
    "STATE_KINDS",
    "AgentState",
    "Replay",
    "Search",
    "State",
    "StoredEvents",
    "TaskState",
]

#: Events read from the archive at a time, and how many such pages are kept.
PAGE = 500
PAGES_KEPT = 8


class StoredEvents(Sequence[Event]):
    """A run's events as a sequence, read from the archive when asked for: ``ids`` are the
    events' ids in order, read at load; a page of ``PAGE`` events is read per miss, and the
    last ``PAGES_KEPT`` pages are kept."""

    def __init__(self, conn: sqlite3.Connection, run_id: int, ids: Sequence[int]) -> None:
        self.conn = conn
        self.run_id = run_id
        self.ids = ids
        self._pages: OrderedDict[int, list[Event]] = OrderedDict()

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.ids)))]
        if index < 0:
            index += len(self.ids)
        if not 0 <= index < len(self.ids):
            raise IndexError(index)
        number, offset = divmod(index, PAGE)
        return self._page(number)[offset]

    def __iter__(self) -> Iterator[Event]:
        for number in range((len(self.ids) + PAGE - 1) // PAGE):
            yield from self._page(number)

    def take(self, indexes: Sequence[int]) -> list[Event]:
        """The events at ``indexes`` (sorted), read by id: a transcript's entries are spread
        over the run, one query instead of a page for each."""
        if not indexes:
            return []
        wanted = [self.ids[i] for i in indexes]
        found: dict[int, Event] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            sql = f"{query.EVENT_SELECT} WHERE id IN ({','.join('?' * len(chunk))})"
            for row in self.conn.execute(sql, chunk):
                found[row[0]] = query.row_event(row)
        return [found[i] for i in wanted]

    def _page(self, number: int) -> list[Event]:
        page = self._pages.get(number)
        if page is not None:
            self._pages.move_to_end(number)
            return page
        first = self.ids[number * PAGE]
        last = self.ids[min(len(self.ids), (number + 1) * PAGE) - 1]
        page = [
            query.row_event(row)
            for row in self.conn.execute(
                f"{query.EVENT_SELECT} WHERE run_id = ? AND id BETWEEN ? AND ? ORDER BY id",
                (self.run_id, first, last),
            )
        ]
        self._pages[number] = page
        if len(self._pages) > PAGES_KEPT:
            self._pages.popitem(last=False)
        return page


class Replay:
    """One run's timeline with random access to the state at any event."""

    def __init__(
        self,
        run: RunSummary,
        events: Sequence[Event],
        agents: list[dict[str, Any]],
        *,
        index: replay_index.Index | None = None,
    ) -> None:
        """``events`` in order (a list, or ``StoredEvents``); ``index`` their index when the
        caller read it already (``Replay.load``), else it is built from ``events``."""
        self.run = run
        self.events = events
        if index is None:
            index = replay_index.walk_events(events)
        self._index = index
        self.ids = index.ids
        self.times = index.times
        self.messages = index.messages
        self.by_agent = index.by_agent
        self._base = base_state(agents)
        self.final = resolve(index.final, self._base)

    @classmethod
    def load(cls, conn: sqlite3.Connection, ref: str) -> Replay:
        """The run ``ref`` of ``conn``'s archive. Its events are read later through a
        read-only connection of the replay's own (``conn`` may be closed after this)."""
        run = query.resolve_run(conn, ref)
        agents = query.agents(conn, run.id)
        reader = _own_reader(conn)
        began = not reader.in_transaction
        if began:  # one snapshot: the stored segments and the events after them
            reader.execute("BEGIN")
        try:
            index = replay_index.load(reader, run.id)
        finally:
            if began:
                reader.execute("COMMIT")
        return cls(run, StoredEvents(reader, run.id, index.ids), agents, index=index)

    def __len__(self) -> int:
        return len(self.ids)

    def _take(self, indexes: Sequence[int]) -> list[Event]:
        events = self.events
        if isinstance(events, StoredEvents):
            return events.take(indexes)
        return [events[i] for i in indexes]

    def state_at(self, position: int) -> State:
        """The state after the first ``position`` events."""
        position = max(0, min(position, len(self)))
        if position == len(self):
            return self.final
        state = resolve(self._index.before(position), self._base)
        for event in self.events[state.position : position]:
            state.apply(event)
        return state

    def feed(self, position: int, limit: int = 200) -> list[Event]:
        """The last ``limit`` messages sent before ``position``."""
        end = bisect.bisect_left(self.messages, position)
        return self._take(self.messages[max(0, end - limit) : end])

    def transcript(self, agent: str, position: int, limit: int = 500) -> list[Event]:
        indexes = self.by_agent.get(agent, array("l"))
        end = bisect.bisect_left(indexes, position)
        return self._take(indexes[max(0, end - limit) : end])

    def position_at(self, when: float) -> int:
        """How many events happened at or before ``when`` (epoch seconds)."""
        return bisect.bisect_right(self.times, when)

    def time_at(self, position: int) -> float:
        if not self.times or position <= 0:
            return self.run.started_at
        return self.times[min(position, len(self.times)) - 1]


def _own_reader(conn: sqlite3.Connection) -> sqlite3.Connection:
    """A read-only connection to ``conn``'s database file (``conn`` itself for a database
    without a file)."""
    for _, name, filename in conn.execute("PRAGMA database_list"):
        if name == "main" and filename:
            uri = f"{Path(filename).as_uri()}?mode=ro"
            return sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
    return conn


class Search(IndexSearch):
    """Incremental search over events (the line shown, its agent, frame type and target):
    each keystroke filters the events (see ``app.display.text_search``)."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.events = events
        super().__init__(haystack(event_line(e), e.agent, e.frame, e.target) for e in events)

"""Walking a run's events to build its replay index (no Textual): every event's id and time,
the positions of the messages and of each agent's transcript entries, and the team's raw state
(``app.archive.replay_state``) at every ``CHECKPOINT`` events. Used by the recorder's writer as
it writes a run and by the replay for the events its stored index does not hold
(``app.archive.replay_index``).
"""

from __future__ import annotations

import bisect
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from app.archive import query
from app.archive.query import Event
from app.archive.replay_state import STATE_KINDS, State, apply_raw

#: A checkpoint of the state every this many events (and a stored segment of the index).
CHECKPOINT = 500

#: What ``Walk.read`` reads of every event, and of the events that change the state: what
#: ``State.apply`` reads (a transcript entry's first line, a call's and a task's data).
INDEX_SELECT = "SELECT id, at, kind, agent FROM events"
STATE_SELECT = (
    "SELECT id, at, kind, agent, target, frame,"
    " CASE WHEN kind = 'transcript' THEN substr(text, 1, 100) WHEN kind != 'usage' THEN text END,"
    " size, CASE WHEN kind IN ('usage', 'task') THEN data END FROM events"
)
_STATE_KINDS = frozenset(STATE_KINDS)


class Walk:
    """The index of a run's events from ``position`` on, built by applying them in order: the
    arrays hold the events from position ``start`` on, ``state`` is the raw state after the
    first ``position`` events."""

    def __init__(self, position: int = 0, last_id: int = 0, state: State | None = None) -> None:
        self.start = self.position = position
        self.last_id = last_id
        self.state = state if state is not None else State(position)
        self.ids: array[int] = array("q")
        self.times: array[float] = array("d")
        self.messages: array[int] = array("q")
        self.entries: dict[str, array[int]] = {}

    def add(
        self,
        rows: Iterable[Any],
        make_event: Callable[[Any], Event],
        on_checkpoint: Callable[[], None],
    ) -> None:
        """Walk ``rows`` (``row[0:4]``: id, at, kind, agent; ``make_event(row)`` the event);
        ``on_checkpoint`` is called after every ``CHECKPOINT``-th event (``position`` and
        ``state`` are then those after it)."""
        rows = rows if isinstance(rows, list) else list(rows)
        first = self.position
        self._index(rows)
        changes = (
            (first + i, make_event(row)) for i, row in enumerate(rows) if row[2] in _STATE_KINDS
        )
        self._states(changes, on_checkpoint)

    def read(
        self, conn: sqlite3.Connection, run_id: int, on_checkpoint: Callable[[], None]
    ) -> None:
        """Walk the run's events after ``last_id`` in the archive: the index columns of all of
        them, then the events that change the state (in one transaction: one snapshot)."""
        first, after = self.position, self.last_id
        where = " WHERE run_id = ? AND id > ?"
        self._index(conn.execute(f"{INDEX_SELECT}{where} ORDER BY id", (run_id, after)))
        kinds = ",".join(f"'{kind}'" for kind in STATE_KINDS)
        rows = conn.execute(
            f"{STATE_SELECT}{where} AND kind IN ({kinds}) ORDER BY id", (run_id, after)
        )
        ids, start = self.ids, self.start

        def changes() -> Iterator[tuple[int, Event]]:
            at = first - start
            for row in rows:
                at = bisect.bisect_left(ids, row[0], at)
                yield start + at, query.row_event(row)

        self._states(changes(), on_checkpoint)

    def _index(self, rows: Iterable[Any]) -> None:
        ids, times, messages, entries = self.ids, self.times, self.messages, self.entries
        position = self.start + len(ids)
        for row in rows:
            ids.append(row[0])
            times.append(row[1])
            kind = row[2]
            if kind == "message":
                messages.append(position)
            elif kind == "transcript" and row[3]:
                found = entries.get(row[3])
                if found is None:
                    found = entries[row[3]] = array("q")
                found.append(position)
            position += 1
        if ids:
            self.last_id = ids[-1]

    def _states(
        self, changes: Iterable[tuple[int, Event]], on_checkpoint: Callable[[], None]
    ) -> None:
        """Apply ``(position, event)`` in order up to the end of the arrays, stopping at every
        checkpoint on the way."""
        state, end = self.state, self.start + len(self.ids)
        after = (self.position // CHECKPOINT + 1) * CHECKPOINT
        for position, event in changes:
            while position >= after:
                self.position = state.position = after
                on_checkpoint()
                after += CHECKPOINT
            state.position = position
            apply_raw(state, event)
        while end >= after:
            self.position = state.position = after
            on_checkpoint()
            after += CHECKPOINT
        self.position = state.position = end

    def segment(
        self, end: int
    ) -> tuple[array[int], array[float], array[int], dict[str, list[int]]]:
        """The ids, times, message positions and transcript positions of the ``CHECKPOINT``
        events before position ``end`` (still in the arrays)."""
        begin = end - CHECKPOINT
        first, last = begin - self.start, end - self.start
        messages = self.messages
        low, high = bisect.bisect_left(messages, begin), bisect.bisect_left(messages, end)
        entries = {}
        for name, positions in self.entries.items():
            lo, hi = bisect.bisect_left(positions, begin), bisect.bisect_left(positions, end)
            if hi > lo:
                entries[name] = positions[lo:hi].tolist()
        return self.ids[first:last], self.times[first:last], messages[low:high], entries

    def forget(self, before: int) -> None:
        """Drop the events before position ``before`` from the arrays (stored already)."""
        count = before - self.start
        if count <= 0:
            return
        del self.ids[:count], self.times[:count]
        del self.messages[: bisect.bisect_left(self.messages, before)]
        for name, positions in list(self.entries.items()):
            del positions[: bisect.bisect_left(positions, before)]
            if not positions:
                del self.entries[name]
        self.start = before

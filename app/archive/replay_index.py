"""A run's replay index, kept in the archive so that a replay opens in the same time whatever
the run's length (no Textual).

What a replay needs besides the events' texts: each event's id and time, the positions of the
messages and of each agent's transcript entries, and the team's state every ``CHECKPOINT``
events. The archive keeps it in ``replay_segments`` (schema v4), one row per ``CHECKPOINT``
events of a run, written once: the events' ids and times and the messages' positions as arrays
of bytes (little-endian int64 / float64), the transcript entries' positions as JSON, and the
raw state after the segment as JSON (``app.archive.replay_state``).

Who writes it: the recorder's writer thread (``SegmentWriter``), at the end of each batch,
from the rows it has just written (read back from the same transaction), so a segment is in
the archive as soon as its last event is committed, whichever way the run ends (closed,
killed, still running). The writer rather than the replay: the replay reads through a
read-only connection and must not take the write lock from a run being recorded, and the
writer pays a few microseconds per event spread over the run instead of a walk over the whole
run at the first open. A run's last segment (fewer than ``CHECKPOINT`` events) is never
stored: the replay reads those events itself, as it does for any events after the stored
segments (a live run that grew since, events the writer had not indexed yet).

``load`` (the replay) reads the stored segments, checks that they still describe the run
(contiguous, and exactly as many events of the run up to the last stored id as they hold),
and walks only the events after them. A run recorded before schema v4 has no segments, and
segments that no longer match are ignored: then it walks the whole run, as replays always did.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from app.archive import query
from app.archive.query import Event
from app.archive.replay_state import STATE_KINDS, State, apply_raw, dump_state, load_state

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
_BIG_ENDIAN = sys.byteorder == "big"


def _to_bytes(values: array[Any]) -> bytes:
    if _BIG_ENDIAN:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_bytes(typecode: str, data: bytes) -> array[Any]:
    values = array(typecode)
    values.frombytes(data)
    if _BIG_ENDIAN:
        values.byteswap()
    return values


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


# ---------------------------------------------------------------------- the writer's side


class SegmentWriter:
    """Keeps one run's segments in the archive as the writer commits its events (writer
    thread): ``Rows.event`` hands it each row it inserts (``written``), and ``sync`` at the end
    of each batch walks them and stores each segment completed. Holds only the segment in
    progress. The first ``sync`` goes on from what the archive holds (a run recorded in two
    parts), reading the run's events after it from the archive, this batch's included."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self._walk: Walk | None = None
        self._written: list[tuple[Any, ...]] = []

    def written(self, row: tuple[Any, ...]) -> None:
        """An events row just inserted, as ``query.EVENT_SELECT`` reads it."""
        self._written.append(row)

    def sync(self, conn: sqlite3.Connection) -> None:
        rows, self._written = self._written, []
        walk = self._walk

        def store() -> None:
            assert walk is not None
            _store_segment(conn, self.run_id, walk)

        if walk is None:
            walk = self._walk = _resume(conn, self.run_id)
            walk.read(conn, self.run_id, store)
        else:
            walk.add(rows, query.row_event, store)
        walk.forget(walk.position // CHECKPOINT * CHECKPOINT)

    def moved(self, conn: sqlite3.Connection, first_moved: int) -> None:
        """Events from id ``first_moved`` on left the run (``Rows.next_run``): the segments
        holding any are deleted, and the run's index goes on from those before them."""
        conn.execute(
            "DELETE FROM replay_segments WHERE run_id = ? AND last_id >= ?",
            (self.run_id, first_moved),
        )
        self._walk, self._written = None, []
        self.sync(conn)


def _resume(conn: sqlite3.Connection, run_id: int) -> Walk:
    """A walk from the end of the run's stored segments (all of them dropped if they no longer
    match the run: it is then walked from its start)."""
    row = conn.execute(
        "SELECT segment, last_id, state FROM replay_segments WHERE run_id = ?"
        " ORDER BY segment DESC LIMIT 1",
        (run_id,),
    ).fetchone()
    if row is not None:
        segment, last_id, state = row
        count = (segment + 1) * CHECKPOINT
        stored = conn.execute(
            "SELECT count(*) FROM replay_segments WHERE run_id = ?", (run_id,)
        ).fetchone()[0]
        if stored == segment + 1 and _events_up_to(conn, run_id, last_id) == count:
            return Walk(count, last_id, load_state(state))
        conn.execute("DELETE FROM replay_segments WHERE run_id = ?", (run_id,))
    return Walk()


def _events_up_to(conn: sqlite3.Connection, run_id: int, last_id: int) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM events WHERE run_id = ? AND id <= ?", (run_id, last_id)
        ).fetchone()[0]
    )


def _store_segment(conn: sqlite3.Connection, run_id: int, walk: Walk) -> None:
    """The segment that ends at ``walk.position``, with ``walk.state`` (the state there)."""
    ids, times, messages, entries = walk.segment(walk.position)
    conn.execute(
        "INSERT OR REPLACE INTO replay_segments (run_id, segment, first_id, last_id, ids, times,"
        " messages, entries, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            walk.position // CHECKPOINT - 1,
            ids[0],
            ids[-1],
            _to_bytes(ids),
            _to_bytes(times),
            _to_bytes(messages),
            json.dumps(entries, ensure_ascii=False, separators=(",", ":")),
            dump_state(walk.state),
        ),
    )


# ---------------------------------------------------------------------- the replay's side


@dataclass
class Index:
    """A run's whole index, as the replay holds it: ``stored`` segments in the archive (their
    checkpoints read when asked for), the checkpoints after them in ``checkpoints`` (raw), and
    ``final`` the raw state after the last event."""

    ids: array[int] = field(default_factory=lambda: array("q"))
    times: array[float] = field(default_factory=lambda: array("d"))
    messages: array[int] = field(default_factory=lambda: array("q"))
    by_agent: dict[str, array[int]] = field(default_factory=dict)
    checkpoints: dict[int, State] = field(default_factory=lambda: {0: State()})
    final: State = field(default_factory=State)
    stored: int = 0  # segments read from the archive
    run_id: int = 0
    conn: sqlite3.Connection | None = None

    def before(self, position: int) -> State:
        """The raw checkpoint at or before ``position`` (do not change it)."""
        return self.checkpoint(position // CHECKPOINT)

    def checkpoint(self, number: int) -> State:
        """The raw state after the first ``number * CHECKPOINT`` events (do not change it)."""
        found = self.checkpoints.get(number)
        if found is not None:
            return found
        if self.conn is None or not 0 < number <= self.stored:
            raise IndexError(number)
        row = self.conn.execute(
            "SELECT state FROM replay_segments WHERE run_id = ? AND segment = ?",
            (self.run_id, number - 1),
        ).fetchone()
        state = load_state(row[0])
        self._keep(number, state)
        return state

    def _keep(self, number: int, state: State) -> None:
        """Keep a few checkpoints read from the archive (scrubbing goes back and forth)."""
        read = [n for n in self.checkpoints if 0 < n <= self.stored]
        if len(read) >= 8:
            del self.checkpoints[read[0]]
        self.checkpoints[number] = state

    def walk(self, walk: Walk) -> Callable[[], None]:
        """``on_checkpoint`` for ``walk``: keeps a copy of each checkpoint."""

        def keep() -> None:
            self.checkpoints[walk.position // CHECKPOINT] = walk.state.copy()

        return keep

    def extend(self, walk: Walk) -> None:
        """Add what ``walk`` went through (it started where this index ends)."""
        self.ids.extend(walk.ids)
        self.times.extend(walk.times)
        self.messages.extend(walk.messages)
        for name, positions in walk.entries.items():
            self.by_agent.setdefault(name, array("q")).extend(positions)
        self.final = walk.state


def walk_events(events: Iterable[Event]) -> Index:
    """The index of events held in memory (a replay built from a list)."""
    index = Index()
    walk = Walk()
    walk.add(((e.id, e.at, e.kind, e.agent, e) for e in events), _fifth, index.walk(walk))
    index.extend(walk)
    return index


def _fifth(row: tuple[Any, ...]) -> Event:
    event: Event = row[4]
    return event


def load(conn: sqlite3.Connection, run_id: int) -> Index:
    """The index of run ``run_id``: its stored segments, then a walk over the events after
    them (all its events when none are stored or they no longer match). ``conn`` is kept to
    read the stored checkpoints later; read inside one transaction (one snapshot)."""
    index = Index(run_id=run_id, conn=conn)
    last_id, state = _read_segments(conn, index)
    walk = Walk(len(index.ids), last_id, state)
    walk.read(conn, run_id, index.walk(walk))
    index.extend(walk)
    return index


def _read_segments(conn: sqlite3.Connection, index: Index) -> tuple[int, State | None]:
    """Read the run's stored segments into ``index``: ``(last id, raw state)`` after them, or
    ``(0, None)`` (and nothing read) if there are none or they do not match the run."""
    rows = conn.execute(
        "SELECT segment, last_id, ids, times, messages, entries FROM replay_segments"
        " WHERE run_id = ? ORDER BY segment",
        (index.run_id,),
    )
    size = CHECKPOINT * 8
    last_id = 0
    for number, (segment, last, ids, times, messages, entries) in enumerate(rows):
        if segment != number or len(ids) != size or len(times) != size:
            break  # a gap, or segments of another size: use the ones before
        index.ids.extend(_from_bytes("q", ids))
        index.times.extend(_from_bytes("d", times))
        index.messages.extend(_from_bytes("q", messages))
        for name, positions in json.loads(entries).items():
            index.by_agent.setdefault(name, array("q")).extend(positions)
        index.stored, last_id = number + 1, last
    if not index.stored:
        return 0, None
    count = index.stored * CHECKPOINT
    if index.ids[-1] != last_id or _events_up_to(conn, index.run_id, last_id) != count:
        index.ids, index.times, index.messages, index.by_agent = (
            array("q"),
            array("d"),
            array("q"),
            {},
        )
        index.stored = 0
        return 0, None
    return last_id, index.checkpoint(index.stored).copy()

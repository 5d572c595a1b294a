"""A run's replay index, kept in the archive so that a replay opens in the same time whatever
the run's length (no Textual).

What a replay needs besides the events' texts: each event's id and time, the positions of the
messages and of each agent's transcript entries, and the team's state every ``CHECKPOINT``
events. The archive keeps it in ``replay_segments`` (schema v4), one row per ``CHECKPOINT``
events of a run, written once: the events' ids and times and the messages' positions as arrays
of bytes (little-endian int64 / float64), the transcript entries' positions as JSON, and the
raw state after the segment as JSON (``app.archive.replay_state``).

Who writes it: the recorder's writer thread (``SegmentWriter``), at the end of each batch,
from the rows the batch inserted (``Rows.event`` hands each one over: nothing is read back),
inside the batch's transaction, so a segment is in the archive as soon as its last event is
committed, whichever way the run ends (closed, killed, still running), and a reader never sees
an index ahead of the events. The writer rather than the replay: the replay reads through a
read-only connection and must not take the write lock from a run being recorded, and the
writer pays about two microseconds per event spread over the run (a few percent of what it
costs to record) instead of a walk over the whole run at every open. Segments are written once
and never rewritten (no growing row to store again "from time to time"); about 20 bytes per
event, plus the checkpoints' JSON. A run's last segment (fewer than ``CHECKPOINT`` events) is
never stored: the replay reads those events itself, as it does for any events after the stored
segments (a live run that grew since, a run whose index stopped).

``load`` (the replay) reads the stored segments, checks that they still describe the run
(contiguous, and exactly as many events of the run up to the last stored id as they hold),
and walks only the events after them. A run recorded before schema v4 has no segments, and
segments that no longer match are ignored: then it walks the whole run, as replays always did.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from app.archive import query, replay_walk
from app.archive.query import Event
from app.archive.replay_state import State, dump_state, load_state
from app.archive.replay_walk import Walk

log = logging.getLogger(__name__)
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


# ---------------------------------------------------------------------- the writer's side


class SegmentWriter:
    """Keeps one run's segments in the archive as the writer commits its events (writer
    thread): ``Rows.event`` hands it each row it inserts (``written``), and ``sync`` at the end
    of each batch walks them and stores each segment completed. Holds only the segment in
    progress. The first ``sync`` goes on from what the archive holds (a run recorded in two
    parts), reading the run's events after it from the archive, this batch's included.

    A bug here stops the index (``stop``; a replay then walks the events after what it stored),
    never the recording; a database error is the writer's (it stops the archive)."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.stopped = False
        self._walk: Walk | None = None
        self._written: list[tuple[Any, ...]] = []

    def written(self, row: tuple[Any, ...]) -> None:
        """An events row just inserted, as ``query.EVENT_SELECT`` reads it."""
        if not self.stopped:
            self._written.append(row)

    def stop(self) -> None:
        self.stopped, self._walk, self._written = True, None, []

    def sync(self, conn: sqlite3.Connection, *, moved_from: int | None = None) -> None:
        """Index the rows written since the last call. ``moved_from``: events from that id on
        left the run (``Rows.next_run``): the segments holding any are deleted, and the index
        goes on from those before them."""
        if self.stopped:
            return
        try:
            if moved_from is not None:
                conn.execute(
                    "DELETE FROM replay_segments WHERE run_id = ? AND last_id >= ?",
                    (self.run_id, moved_from),
                )
                self._walk = None
            self._sync(conn)
        except sqlite3.DatabaseError:
            raise
        except Exception:
            log.exception("history: the replay index of run %s could not be kept", self.run_id)
            self.stop()

    def _sync(self, conn: sqlite3.Connection) -> None:
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
        every = replay_walk.CHECKPOINT
        walk.forget(walk.position // every * every)


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
        count = (segment + 1) * replay_walk.CHECKPOINT
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
            walk.position // replay_walk.CHECKPOINT - 1,
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
        """The raw checkpoint at or before ``position`` (do not change it): the nearest one,
        or an earlier one if the archive no longer holds it as it was when the replay opened
        (a next goal took the run's last events meanwhile)."""
        number = position // replay_walk.CHECKPOINT
        while True:
            found = self.checkpoint(number)
            if found is not None:
                return found
            number -= 1

    def checkpoint(self, number: int) -> State | None:
        """The raw state after the first ``number * CHECKPOINT`` events (do not change it),
        ``None`` if the archive no longer has it."""
        found = self.checkpoints.get(number)
        if found is not None or number == 0:
            return found
        if self.conn is None or not 0 < number <= self.stored:
            raise IndexError(number)
        row = self.conn.execute(
            "SELECT state, last_id FROM replay_segments WHERE run_id = ? AND segment = ?",
            (self.run_id, number - 1),
        ).fetchone()
        if row is None or row[1] != self.ids[number * replay_walk.CHECKPOINT - 1]:
            return None
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
            self.checkpoints[walk.position // replay_walk.CHECKPOINT] = walk.state.copy()

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
    size = replay_walk.CHECKPOINT * 8
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
    count = index.stored * replay_walk.CHECKPOINT
    if index.ids[-1] != last_id or _events_up_to(conn, index.run_id, last_id) != count:
        index.ids, index.times, index.messages, index.by_agent = (
            array("q"),
            array("d"),
            array("q"),
            {},
        )
        index.stored = 0
        return 0, None
    state = index.checkpoint(index.stored)
    assert state is not None  # read in the same transaction as the segments
    return last_id, state.copy()

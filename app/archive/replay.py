"""A finished run, replayable: the team's state at any point of its timeline (no Textual).

``Replay.load`` reads a window, not the run: each event's id, time, kind and agent (a few
numbers per event, in arrays), and the events that change the state (status, usage,
transcript, task), from which it builds a checkpoint every ``CHECKPOINT`` events. The events
themselves (texts, data) stay in the archive and are read when shown, a page at a time
(``StoredEvents``, a few pages kept), so a run of any length opens in about the time it takes
to read those columns, in memory that does not grow with its texts. The state after the first
``n`` events (agents with their status and cost, the task board, the messages so far, any
agent's transcript) is the nearest checkpoint plus at most ``CHECKPOINT`` events, so a scrub to
any point costs the same wherever it lands.

``Search`` filters events by text, sender or frame type (all words must match, any case).
"""

from __future__ import annotations

import bisect
import copy
import sqlite3
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from app.archive import query
from app.archive.query import Event, RunSummary
from app.archive.timeline import event_line
from app.display.text_search import IndexSearch, haystack

CHECKPOINT = 500
#: Events read from the archive at a time, and how many such pages are kept.
PAGE = 500
PAGES_KEPT = 8
#: The kinds that change a ``State`` (the others only move its position).
STATE_KINDS = ("status", "usage", "transcript", "task")


@dataclass
class AgentState:
    name: str
    color: str | None = None
    agent_type: str | None = None
    status: str = "idle"
    detail: str = ""
    model_calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    last: str = ""


@dataclass
class TaskState:
    id: str
    subject: str
    status: str
    owner: str | None


@dataclass
class State:
    """The team after some events: what the replay's panels draw."""

    position: int = 0  # events applied
    agents: dict[str, AgentState] = field(default_factory=dict)
    tasks: dict[str, TaskState] = field(default_factory=dict)
    cost: float = 0.0
    tokens: int = 0

    def copy(self) -> State:
        """An independent copy (a task's state is replaced, never changed, so it is shared)."""
        agents = {name: copy.copy(agent) for name, agent in self.agents.items()}
        return State(self.position, agents, dict(self.tasks), self.cost, self.tokens)

    def apply(self, event: Event) -> None:
        self.position += 1
        data = event.data or {}
        agent = self.agents.get(event.agent or "") if event.agent else None
        if event.agent and agent is None and event.kind in ("status", "usage", "transcript"):
            agent = self.agents[event.agent] = AgentState(event.agent)
        match event.kind:
            case "status" if agent is not None:
                agent.status = event.frame or agent.status
                agent.detail = event.text
            case "usage" if agent is not None:
                tokens = int(data.get("input", 0)) + int(data.get("output", 0))
                cost = float(data.get("cost_usd") or 0.0)
                agent.model_calls += 1
                agent.tokens += tokens
                agent.cost += cost
                self.tokens += tokens
                self.cost += cost
            case "transcript" if agent is not None:
                if event.frame == "tool_call":
                    agent.last = f"calling {event.target}"
                elif event.frame == "assistant":
                    agent.last = event.text.splitlines()[0][:80] if event.text else ""
            case "task":
                task_id = event.target or "?"
                if event.frame == "deleted":
                    self.tasks.pop(task_id, None)
                else:
                    self.tasks[task_id] = TaskState(
                        task_id, event.text, event.frame or "pending", data.get("owner")
                    )
            case "mode":
                pass


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
        agents: list[dict[str, object]],
        *,
        index: tuple[Sequence[int], Sequence[float], Sequence[str | None], Sequence[str | None]]
        | None = None,
        changes: Iterable[tuple[int, Event]] | None = None,
    ) -> None:
        """``events`` in order (a list, or ``StoredEvents``); ``index`` (their ids, times,
        kinds and agents) and ``changes`` (``(position, event)`` for the events that change
        the state) when the caller read them already, else they are taken from ``events``."""
        self.run = run
        self.events = events
        if index is None:
            index = (
                [e.id for e in events],
                [e.at for e in events],
                [e.kind for e in events],
                [e.agent for e in events],
            )
        ids, self.times, kinds, agent_names = index
        self.ids = ids
        self.messages = array("l", (i for i, kind in enumerate(kinds) if kind == "message"))
        by_agent: dict[str, array[int]] = {}
        for i, kind in enumerate(kinds):
            if kind == "transcript" and agent_names[i]:
                by_agent.setdefault(str(agent_names[i]), array("l")).append(i)
        self.by_agent = by_agent
        base = State()
        for info in agents:
            name = str(info["name"])
            base.agents[name] = AgentState(
                name,
                color=info.get("color"),  # type: ignore[arg-type]
                agent_type=info.get("agent_type"),  # type: ignore[arg-type]
                status="not started",
            )
        if changes is None:
            changes = ((i, e) for i, e in enumerate(events) if e.kind in STATE_KINDS)
        self._checkpoints: list[State] = [base.copy()]
        state = base
        for position, event in changes:
            while position >= len(self._checkpoints) * CHECKPOINT:
                state.position = len(self._checkpoints) * CHECKPOINT
                self._checkpoints.append(state.copy())
            state.position = position
            state.apply(event)
        while len(self._checkpoints) * CHECKPOINT <= len(ids):
            state.position = len(self._checkpoints) * CHECKPOINT
            self._checkpoints.append(state.copy())
        state.position = len(ids)
        self.final = state

    @classmethod
    def load(cls, conn: sqlite3.Connection, ref: str) -> Replay:
        """The run ``ref`` of ``conn``'s archive. Its events are read later through a
        read-only connection of the replay's own (``conn`` may be closed after this)."""
        run = query.resolve_run(conn, ref)
        agents = query.agents(conn, run.id)
        reader = _own_reader(conn)
        ids: array[int] = array("q")
        times: array[float] = array("d")
        kinds: list[str | None] = []
        names: list[str | None] = []
        rows = reader.execute(
            "SELECT id, at, kind, agent FROM events WHERE run_id = ? ORDER BY id", (run.id,)
        )
        for event_id, at, kind, agent in rows:
            ids.append(event_id)
            times.append(at)
            kinds.append(_KINDS.setdefault(kind, kind))
            names.append(_KINDS.setdefault(agent, agent))
        changes = _state_changes(reader, run.id, ids)
        return cls(
            run,
            StoredEvents(reader, run.id, ids),
            agents,
            index=(ids, times, kinds, names),
            changes=changes,
        )

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
        checkpoint = self._checkpoints[position // CHECKPOINT]
        state = checkpoint.copy()
        for event in self.events[checkpoint.position : position]:
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


#: Kind and agent names, one string object each however many events carry them.
_KINDS: dict[Any, Any] = {}


def _own_reader(conn: sqlite3.Connection) -> sqlite3.Connection:
    """A read-only connection to ``conn``'s database file (``conn`` itself for a database
    without a file)."""
    for _, name, filename in conn.execute("PRAGMA database_list"):
        if name == "main" and filename:
            uri = f"{Path(filename).as_uri()}?mode=ro"
            return sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
    return conn


def _state_changes(
    conn: sqlite3.Connection, run_id: int, ids: Sequence[int]
) -> Iterator[tuple[int, Event]]:
    """``(position, event)`` for each event that changes a ``State``, with only what
    ``State.apply`` reads: an assistant entry's first line, no data but a call's and a task's."""
    kinds = ",".join(f"'{kind}'" for kind in STATE_KINDS)
    rows = conn.execute(
        "SELECT id, at, kind, agent, target, frame,"
        " CASE WHEN kind = 'transcript' THEN substr(text, 1, 100) ELSE text END, size,"
        " CASE WHEN kind IN ('usage', 'task') THEN data END"
        f" FROM events WHERE run_id = ? AND kind IN ({kinds}) ORDER BY id",
        (run_id,),
    )
    position = 0
    for row in rows:
        position = bisect.bisect_left(ids, row[0], position)
        yield position, query.row_event(row)


class Search(IndexSearch):
    """Incremental search over events (the line shown, its agent, frame type and target):
    each keystroke filters the events (see ``app.display.text_search``)."""

    def __init__(self, events: Sequence[Event]) -> None:
        self.events = events
        super().__init__(haystack(event_line(e), e.agent, e.frame, e.target) for e in events)

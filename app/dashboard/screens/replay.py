"""``teamdeck replay RUN``: a finished run played back from the archive, read-only.

The same picture as the dashboard (agents with status and cost, the task board, the message
feed, an agent's transcript), driven by ``app.archive.replay.Replay`` at a position on the
run's timeline. Keys: ``space`` play/pause, ``+``/``-`` speed, ``left``/``right`` one event,
``[``/``]`` one minute, ``home``/``end``, ``/`` search the feed (``n``/``N`` next/previous
hit), ``enter`` an agent's transcript, ``esc`` back, ``q`` quit. The palette lists the runs.

The live dashboard's palette lists them too (``RunCommands``, added by ``app.dashboard.recording``):
picking one opens its replay over the dashboard (a run still being recorded: as far as it
is), and ``q`` / ``esc`` close it there.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static

from app.archive import query
from app.archive.db import HistoryUnavailable
from app.archive.replay import Replay, Search
from app.archive.timeline import duration, event_line, run_length
from app.dashboard.replay_diffs import EditDiffs
from app.dashboard.replay_trends import ReplayTrends
from app.display.agent_text import flat, shown
from app.display.fit import Column, Part, fit_parts
from app.runtime.model.pricing import cost_label, format_usd
from widgets.fitted_table import FittedTable
from widgets.footer import KeyFooter, fit_keys
from widgets.usage_trend import UsageTrend

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
TICK = 0.1
FEED_LINES = 200


#: The tables' columns: at a narrow width the long ones shrink (with "…"), then the least
#: important go (``drop``, highest first); the agent, its cost, a task and its owner stay.
AGENT_COLUMNS = [
    Column("agent", least=10),
    Column("status", drop=2, least=7),
    Column("calls", drop=4),
    Column("tokens", drop=3),
    Column("cost"),
    Column("last", drop=1, least=6),
]
TASK_COLUMNS = [
    Column("#"),
    Column("task", least=6),
    Column("status", drop=1),
    Column("owner", least=6),
]


def clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


class ReplayScreen(Screen[None]):
    AUTO_FOCUS = None
    #: Footer order: what matters most first (a narrow footer cuts the end), q Quit first.
    BINDINGS = [
        Binding("q", "close", "Quit"),
        Binding("space", "toggle_play", "Play/pause"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("enter", "open_agent", "Transcript"),
        Binding("left_square_bracket", "minute(-1)", "-1 min", key_display="["),
        Binding("right_square_bracket", "minute(1)", "+1 min", key_display="]"),
        Binding("plus,equals_sign", "faster", "Faster", key_display="+"),
        Binding("minus", "slower", "Slower", key_display="-"),
        Binding("left", "step(-1)", "Back", show=False),
        Binding("right", "step(1)", "Forward", show=False),
        Binding("home", "jump(0)", "Start", show=False),
        Binding("end", "jump(-1)", "End", show=False),
        Binding("n", "hit(1)", "Next hit", show=False),
        Binding("N", "hit(-1)", "Previous hit", show=False),
        Binding("up", "select(-1)", "Previous agent", show=False),
        Binding("down", "select(1)", "Next agent", show=False),
        Binding("escape", "back", "Back", show=False),
    ]

    DEFAULT_CSS = """
    ReplayScreen #replay-header { height: 1; background: $panel; padding: 0 1; }
    ReplayScreen #replay-top { height: 40%; }
    ReplayScreen #replay-agents { width: 1fr; }
    ReplayScreen #replay-tasks { width: 1fr; }
    ReplayScreen #replay-feed { height: 1fr; padding: 0 1; border-top: solid $panel; }
    ReplayScreen #replay-search { display: none; height: 3; }
    ReplayScreen.-searching #replay-search { display: block; }
    """

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The footer's keys that fit its width, whole, in ``BINDINGS``' order."""
        order = {b.action: i for i, b in enumerate(self.BINDINGS) if isinstance(b, Binding)}
        return fit_keys(
            self.app,
            super().active_bindings,
            lambda binding: order.get(binding.action, len(order)),
        )

    def __init__(self, replay: Replay, position: int | None = None) -> None:
        super().__init__()
        self.replay = replay
        self.position = len(replay) if position is None else position
        self.speed = 1.0
        self.play_time = replay.time_at(self.position)  # the timeline's clock while playing
        self.playing = False
        self.agent: str | None = None  # the transcript shown instead of the feed
        self._search: Search | None = None  # built when the person first searches
        self.query_text = ""
        self.hits: list[int] = []
        self._hit_ids: set[int] = set()
        self._timer: Timer | None = None
        self.diffs = EditDiffs()  # the transcript shows each Edit/Write call's diff
        self.trends = ReplayTrends(replay)  # tokens over time, task progress

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(id="replay-header")
        with Horizontal(id="replay-top"):
            agents = FittedTable(AGENT_COLUMNS, id="replay-agents", cursor_type="row")
            tasks = FittedTable(TASK_COLUMNS, id="replay-tasks", cursor_type="none")
            for table in (agents, tasks):  # the screen keeps the keys: arrows move the timeline
                table.can_focus = False
            yield agents
            yield tasks
        yield UsageTrend(id="replay-trend")
        with Vertical(id="replay-feed"):
            yield Static(id="replay-lines")
        search = Input(placeholder="search the feed: text, sender or type", id="replay-search")
        search.can_focus = False  # until ``/`` opens it
        yield search
        yield KeyFooter()

    def on_mount(self) -> None:
        self.draw()
        self._timer = self.set_interval(TICK, self._tick, pause=True)

    def on_resize(self) -> None:
        self.call_after_refresh(self.draw)  # the tables' columns fit the new width

    # ------------------------------------------------------------------ drawing

    @property
    def length(self) -> float:
        """The run's length, as ``teamdeck history`` lists it (``run_length``)."""
        replay = self.replay
        last = replay.times[-1] if len(replay) else None
        return run_length(replay.run, last) or 0.0

    def header_line(self, cost: str, width: int) -> Text:
        """The header in ``width`` cells: the team's name shortens first, then the event
        count, "read-only" and the word "teamdeck" go; the run, play state, time and cost
        stay."""
        run = self.replay.run
        elapsed = self.replay.time_at(self.position) - run.started_at
        state = "▶ playing" if self.playing else "⏸ paused"
        parts = [
            Part("teamdeck ", "bold", drop=1),
            Part("replay", "bold"),
            Part(f" · run {run.id} · "),
            Part(flat(run.team) or "no team"),
            Part(" · "),
            Part(state, "bold"),
            Part(f" {self.speed:g}x · {duration(elapsed)} / {duration(self.length)}"),  # one format
            Part(f" · event {self.position}/{len(self.replay)}", drop=3),
            Part(f" · {cost}", "dim"),
            Part(" · read-only", "dim", drop=2),
        ]
        header = Text(no_wrap=True, overflow="ellipsis", end="")
        for part in fit_parts(parts, width, shorten=3):
            header.append(part.text, style=part.style)
        return header

    def draw(self) -> None:
        replay = self.replay
        state = replay.state_at(self.position)
        run = replay.run
        cost = cost_label(state.cost, offline=run.offline)
        bar = self.query_one("#replay-header", Static)
        width = (bar.size.width or self.app.size.width) - 2 * (bar.size.width == 0)
        bar.update(self.header_line(cost, width))

        agents = self.query_one("#replay-agents", FittedTable)
        selected = agents.cursor_row
        rows = [
            (
                agent.name,
                agent.status + (f" ({agent.detail})" if agent.detail else ""),
                str(agent.model_calls),
                str(agent.tokens),
                "$0" if run.offline else format_usd(agent.cost),
                agent.last,
            )
            for agent in state.agents.values()
        ]
        agents.set_rows(rows)
        if agents.row_count:
            agents.move_cursor(row=min(selected, agents.row_count - 1), animate=False)
        tasks = [
            (task.id, task.subject, task.status, task.owner or "-") for task in state.tasks.values()
        ]
        self.query_one("#replay-tasks", FittedTable).set_rows(tasks)
        trends, progress = self.trends.values(self.position, state)
        chosen = rows[agents.cursor_row][0] if agents.row_count else None
        self.query_one(UsageTrend).show(trends, chosen, progress)
        self.query_one("#replay-lines", Static).update(self.feed_text())

    def feed_text(self) -> Text:
        replay = self.replay
        if self.agent is not None:
            events = replay.transcript(self.agent, self.position, FEED_LINES)
            title = f"{self.agent}'s transcript"
        else:
            events = replay.feed(self.position, FEED_LINES)
            title = "messages"
        current: int | None = None  # the event id of the hit shown (n/N moved to it)
        if self.query_text:
            events = [e for e in events if e.id in self._hit_ids]
            on_hit = self.hit_at()
            if on_hit is None:
                title += f" matching {self.query_text!r} ({len(self.hits)} in the run)"
            else:
                title += f" matching {self.query_text!r} (hit {on_hit + 1}/{len(self.hits)})"
                current = self.replay.ids[self.hits[on_hit]]
            typing = self.focused is self.query_one("#replay-search", Input)  # n is text there
            title += " · enter, then n/N" if typing else " · n/N next/prev · esc closes"
        text = Text(no_wrap=True, overflow="ellipsis")  # a line each: the newest stay in view
        text.append(title + "\n", style="bold")
        height = self.query_one("#replay-feed").size.height
        rows = height - 1 if height > 1 else 40  # below the title: the newest that fit
        picked: list[Text] = []
        for event in reversed(events[-rows:]):  # the newest first, until the rows are full
            at = clock(event.at - replay.run.started_at)
            line = Text()
            if event.id == current:  # the hit n/N moved to: marked, so that the move shows
                line.append("▶ ", style="bold yellow").append(f"{at}  ", style="bold")
                line.append(shown(event_line(event)), style="reverse").append("\n")
            else:
                line.append(f"{at}  ", style="dim").append(shown(event_line(event)) + "\n")
            if self.agent is not None:
                line.append_text(self.diffs.lines(event))
            rows -= line.plain.count("\n")
            if rows < 0 and picked:
                break
            picked.append(line)
        for line in reversed(picked):
            text.append_text(line)
        return text

    # ------------------------------------------------------------------ moving

    def move_to(self, position: int) -> None:
        self.position = max(0, min(position, len(self.replay)))
        self.play_time = self.replay.time_at(self.position)
        if self.position >= len(self.replay) and self.playing:
            self.set_playing(False)
        self.draw()

    def set_playing(self, playing: bool) -> None:
        self.playing = playing
        timer = self._timer
        if timer is not None:
            timer.resume() if playing else timer.pause()

    def _tick(self) -> None:
        """Playing: the timeline's clock runs at ``speed``; events up to it are shown."""
        self.play_time += TICK * self.speed
        self.position = max(0, min(self.replay.position_at(self.play_time), len(self.replay)))
        if self.position >= len(self.replay):
            self.set_playing(False)
        self.draw()

    def action_toggle_play(self) -> None:
        if not self.playing and self.position >= len(self.replay):
            self.move_to(0)
        self.set_playing(not self.playing)
        self.draw()

    def action_faster(self) -> None:
        self.speed = next((s for s in SPEEDS if s > self.speed), self.speed)
        self.draw()

    def action_slower(self) -> None:
        self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), self.speed)
        self.draw()

    def action_step(self, delta: int) -> None:
        self.move_to(self.position + delta)

    def action_minute(self, delta: int) -> None:
        when = self.replay.time_at(self.position) + 60 * delta
        self.move_to(self.replay.position_at(when))

    def action_jump(self, where: int) -> None:
        self.move_to(len(self.replay) if where < 0 else where)

    # ------------------------------------------------------------------ search

    @property
    def search(self) -> Search:
        """The search over every event, made on first use (it reads the whole run)."""
        if self._search is None:
            self._search = Search(self.replay.events)
        return self._search

    def action_search(self) -> None:
        self.add_class("-searching")
        search = self.query_one("#replay-search", Input)
        search.can_focus = True
        search.focus()

    @on(Input.Changed, "#replay-search")
    def _typed(self, event: Input.Changed) -> None:
        self.query_text = event.value.strip()
        self.find()
        self.draw()

    def find(self) -> None:
        """The hits of the query among the lines the view lists (the messages, or the agent's
        transcript): ``n`` moved to hits the feed did not show, and seemed not to move."""
        if not self.query_text:
            self.hits, self._hit_ids = [], set()
            return
        if self.agent is None:
            listed = self.replay.messages
        else:
            listed = self.replay.by_agent.get(self.agent, array("l"))
        found = set(listed)
        self.hits = [i for i in self.search.hits(self.query_text) if i in found]
        self._hit_ids = {self.replay.ids[i] for i in self.hits}

    @on(Input.Submitted, "#replay-search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.input.can_focus = False  # the keys go back to the timeline; esc closes the box
        self.set_focus(None)
        if self.hits:
            self.action_hit(1)

    def hit_at(self) -> int | None:
        """Which hit the point is on (0 for the first), ``None`` when it is on none: the
        header's "hit k/N" follows the point however it moved there."""
        index = bisect_left(self.hits, self.position - 1)
        if index < len(self.hits) and self.hits[index] == self.position - 1:
            return index
        return None

    def action_hit(self, direction: int) -> None:
        """Move to the next (previous) event matching the search, after (before) the point."""
        if not self.hits:
            return
        # Positions count events applied: showing hit i means position i + 1.
        if direction > 0:
            later = [i for i in self.hits if i + 1 > self.position]
            target = later[0] if later else self.hits[0]
        else:
            earlier = [i for i in self.hits if i + 1 < self.position]
            target = earlier[-1] if earlier else self.hits[-1]
        self.move_to(target + 1)

    @property
    def over_dashboard(self) -> bool:
        """Opened over another screen (the live dashboard's palette): closing returns there."""
        return len(self.app.screen_stack) > 1

    def action_close(self) -> None:
        if self.over_dashboard:
            self.dismiss()
        else:
            self.app.exit()

    def action_back(self) -> None:
        if not self.has_class("-searching") and self.agent is None and self.over_dashboard:
            self.dismiss()
            return
        if self.has_class("-searching"):
            self.remove_class("-searching")
            search = self.query_one("#replay-search", Input)
            search.value = ""
            search.can_focus = False
            self.set_focus(None)
        elif self.agent is not None:
            self.agent = None
            self.find()
        self.draw()

    def action_select(self, delta: int) -> None:
        table = self.query_one("#replay-agents", DataTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + delta)))
            if self.agent is not None:
                self.action_open_agent()

    def action_open_agent(self) -> None:
        table = self.query_one("#replay-agents", DataTable)
        if table.row_count == 0:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        self.agent = str(key) if key is not None else None
        self.find()
        self.draw()


class RunCommands(Provider):
    """The archived runs in the palette: pick one to replay it."""

    def _runs(self) -> list[query.RunSummary]:
        path: Path | None = getattr(self.app, "history_path", None)
        if path is None:
            return []
        try:
            conn = query.open_reader(path)
        except HistoryUnavailable:
            return []
        try:
            return query.list_runs(conn, limit=200)
        finally:
            conn.close()

    def _open(self, run_id: int) -> Callable[[], None]:
        return partial(open_run, self.app, run_id)

    async def discover(self) -> Hits:
        for run in self._runs():
            yield DiscoveryHit(self._label(run), self._open(run.id), help=run.goal)

    async def search(self, text: str) -> Hits:
        matcher = self.matcher(text)
        for run in self._runs():
            label = self._label(run)
            score = matcher.match(f"{label} {run.goal}")
            if score > 0:
                yield Hit(score, matcher.highlight(label), self._open(run.id), help=run.goal)

    @staticmethod
    def _label(run: query.RunSummary) -> str:
        took = duration(run.duration) if run.duration is not None else "so far"
        return f"Replay run {run.id}: {run.team or '-'} ({run.outcome}, {took})"


def open_run(app: App[Any], run_id: int) -> None:
    """Replay run ``run_id`` of ``app.history_path`` over what ``app`` shows. A run being
    recorded by ``app`` itself (``app.recorder``) is committed first, so it plays to now."""
    path: Path | None = getattr(app, "history_path", None)
    if path is None:
        return
    recorder = getattr(app, "recorder", None)
    if recorder is not None and getattr(recorder, "run_id", None) == run_id:
        recorder.flush(2.0)
    try:
        conn = query.open_reader(path)
        try:
            replay = Replay.load(conn, str(run_id))
        finally:
            conn.close()
    except (HistoryUnavailable, query.RunNotFound) as exc:
        app.notify(str(exc), severity="error")
        return
    app.push_screen(ReplayScreen(replay))


class ReplayApp(App[None]):
    """The replay, on its own (``teamdeck replay RUN``)."""

    TITLE = "teamdeck replay"
    COMMANDS = App.COMMANDS | {RunCommands}

    def __init__(self, replay: Replay, history_path: Path | None = None) -> None:
        super().__init__()
        self.replay = replay
        self.history_path = history_path

    def get_default_screen(self) -> ReplayScreen:
        return ReplayScreen(self.replay)

    def open_run(self, run_id: int) -> None:
        open_run(self, run_id)

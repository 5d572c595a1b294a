"""TeamDeckApp: wires the file watcher, the store and the runtime's events into the views.

Data flows one way. File changes (this process's and others', from one ``Watcher``) are
collected for ``COALESCE_SECONDS`` and applied by the ``Store`` in a thread; the resulting
``StoreDelta`` arrives as a ``StoreUpdated`` message. Runtime events are buffered as they come
(``EventBuffer``) and flushed in order: at once for status/approval/transcript events (one
pending ``RuntimeFlush`` message at a time), every ``FLUSH_SECONDS`` for streamed text. The
app keeps the shared view state (``DeckState``) and tells each view what changed.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App
from textual.css.query import NoMatches
from textual.markup import escape
from textual.message import Message
from textual.worker import Worker, WorkerState

import styles
from app.commands import DeckCommands
from app.core import ChangeEvent, Home, InboxChanged
from app.core.watch import Watcher
from app.runtime.api import RuntimeAPI
from app.runtime.events import (
    ApprovalChanged,
    MessageSent,
    RunFinished,
    StatusChanged,
    TeamLifecycle,
    TextDelta,
    TranscriptEntry,
    UsageChanged,
)
from app.screens.agent import AgentScreen
from app.screens.deck import DeckScreen
from app.screens.leader import LeaderScreen
from app.store import DeckState, EventBuffer, Store, StoreDelta, StoreFeeder
from widgets.task_board import TaskBoard

Parts = set[str] | frozenset[str]


@dataclass
class StoreUpdated(Message):
    """The store re-read something: apply ``delta``."""

    delta: StoreDelta


class RuntimeFlush(Message):
    """Runtime events are waiting in the buffer (a burst keeps only one of these)."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RuntimeFlush)


class TeamDeckApp(App[None]):
    """The dashboard.

    Args:
        home: the home whose files are shown.
        runtime: the running team, or ``None`` for a read-only viewer of the files.
        team: the team to show (default: the runtime's, else the newest in the home).
        demo: mark the header as a demo run.
        goal: a first prompt for the lead, sent once the runtime has started.
        clock: time source for elapsed times (tests pass a fixed one).
        watch: watch other processes' writes (``False``: only this process's).
        watcher: the process's ``Watcher`` if one exists (default: the runtime's, else a new
            one, which is also handed to the runtime: one watcher per process).
    """

    TITLE = "teamdeck"
    CSS_PATH = Path(styles.__file__).parent / "deck.tcss"
    COMMANDS = App.COMMANDS | {DeckCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    FLUSH_SECONDS = 0.05  # streamed text is drawn this often
    COALESCE_SECONDS = 0.02  # file changes are collected this long before they are read
    TASK_BURST_SECONDS = 0.1  # task-only changes are applied at most this often

    def __init__(
        self,
        home: Home,
        runtime: RuntimeAPI | None,
        *,
        team: str | None = None,
        demo: bool = False,
        goal: str | None = None,
        clock: Callable[[], float] = time.time,
        watch: bool = True,
        watcher: Watcher | None = None,
    ) -> None:
        super().__init__()
        self.home = home
        self.runtime = runtime
        self.goal = goal
        self.clock = clock
        self.watcher = (
            watcher or getattr(runtime, "watcher", None) or Watcher(home, cross_process=watch)
        )
        if runtime is not None and getattr(runtime, "watcher", False) is None:
            runtime.watcher = self.watcher  # type: ignore[attr-defined]
        team = team or (runtime.team if runtime is not None else None)
        self.store = Store(home, team, pick=runtime is None)
        self.deck = DeckState(
            team=team,
            model_description=runtime.model_description if runtime is not None else "",
            read_only=runtime is None,
            demo=demo,
        )
        self.partial: dict[str, str] = {}  # text streamed since the agent's last entry
        self.loaded = False  # the first store load has been shown
        self.store_updates = 0
        self._events = EventBuffer()
        self.feeder = StoreFeeder(
            self.store,
            lambda delta: self.post_message(StoreUpdated(delta)),
            self._store_failed,
            coalesce=self.COALESCE_SECONDS,
            task_burst=self.TASK_BURST_SECONDS,
        )
        self._unsubscribe: Callable[[], None] | None = None

    def get_default_screen(self) -> LeaderScreen:
        return LeaderScreen()

    @property
    def leader(self) -> LeaderScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, LeaderScreen)
        return screen

    # ------------------------------------------------------------------ lifecycle

    def on_mount(self) -> None:
        self.set_interval(self.FLUSH_SECONDS, self.flush_runtime)
        self.set_interval(1.0, self._tick)
        self._watch_files()
        self._refresh_store()
        if self.runtime is not None:
            self._unsubscribe = self.runtime.subscribe(self._on_runtime_event)
            if hasattr(self.runtime, "spawner"):
                self.runtime.spawner = self.spawn_agent
            self._start_runtime()
            self.pull_agents()
            self.pull_approvals()

    async def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.runtime is not None:
            with contextlib.suppress(Exception):
                await self.runtime.stop()

    @work(group="runtime", exit_on_error=False, name="runtime")
    async def _start_runtime(self) -> None:
        assert self.runtime is not None
        await self.runtime.start()
        if self.goal:
            self.runtime.submit(self.goal)

    def spawn_agent(self, name: str, factory: Callable[[], Awaitable[None]]) -> Worker[None]:
        """The runtime's spawner: each agent runs as a worker of its own group."""
        return self.run_worker(factory(), name=name, group=f"agent-{name}", exit_on_error=False)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(escape(f"{event.worker.name}: {error}"), title="Error", severity="error")

    # ------------------------------------------------------------------ files -> store

    @work(group="watcher", exit_on_error=False, name="watcher")
    async def _watch_files(self) -> None:
        async with contextlib.aclosing(self.watcher.events()) as batches:
            async for batch in batches:
                self.queue_changes(batch)

    def queue_changes(self, events: list[ChangeEvent]) -> None:
        self.feeder.queue(events)

    def switch_team(self, team: str | None) -> None:
        """Show another team (read everything again)."""
        self.feeder.switch_team(team)

    @work(group="store", exit_on_error=False, name="store")
    async def _refresh_store(self) -> None:
        await self.feeder.run()

    def _store_failed(self, exc: Exception) -> None:
        self.notify(escape(f"reading the team files failed: {exc}"), severity="error")

    def on_store_updated(self, message: StoreUpdated) -> None:
        if not self.screen_stack or not self.leader.is_mounted:
            self.call_after_refresh(self.on_store_updated, message)  # still starting up
            return
        delta = message.delta
        if delta.reset:
            gc.unfreeze()  # the previous team's objects may be garbage now
        known = {a.request_id for a in self.deck.approvals}
        self.deck.apply(delta)
        self.deck.merge_agents(self.runtime.snapshot() if self.runtime is not None else None)
        try:
            with self.batch_update():
                self.leader.apply_store(delta)
                self.broadcast({"agents", "header", "approvals"})
        except NoMatches:  # the views are being torn down: we are quitting
            return
        for task in delta.completed:
            by = f" by {task.owner}" if task.owner else ""
            self.notify(escape(f"#{task.id} {task.subject}{by}"), title="Task completed")
        for error in delta.new_errors:
            self.notify(escape(error), title="Unreadable file", severity="error", timeout=10)
        if self.runtime is None and self.loaded:
            for approval in self.deck.approvals:
                if approval.request_id not in known:
                    self._announce(approval.agent, approval.kind)
        self.loaded = True
        self.store_updates += 1

    def on_task_board_filled(self, _: TaskBoard.Filled) -> None:
        # A big team is loaded: move what was just built out of the collector's way, so
        # full collections stay short (tens of thousands of long-lived rows and feed items
        # would otherwise make each one stall the event loop for 100+ ms).
        gc.freeze()

    # ------------------------------------------------------------------ runtime -> views

    def _on_runtime_event(self, event: Any) -> None:
        """Runtime callback (any thread): buffer, and ask for a prompt flush unless it is text."""
        if self._events.push(event):
            self.post_message(RuntimeFlush())

    def on_runtime_flush(self, _: RuntimeFlush) -> None:
        self.flush_runtime()

    def flush_runtime(self) -> None:
        """Hand buffered runtime events to the views, in arrival order."""
        events = self._events.drain()
        if not events:
            return
        agents = approvals = False
        views = [s for s in self.screen_stack if isinstance(s, DeckScreen) and s.is_mounted]
        for event in events:
            match event:
                case TextDelta(agent=agent, text=text):
                    self.partial[agent] = self.partial.get(agent, "") + text
                    for view in views:
                        view.on_text(agent, text)
                case TranscriptEntry():
                    self.partial.pop(event.agent, None)
                    for view in views:
                        view.on_entry(event)
                case StatusChanged(agent=agent, status=status, detail=detail):
                    agents = True
                    if status == "failed":
                        why = f": {detail}" if detail else ""
                        self.notify(escape(f"{agent} failed{why}"), severity="error", timeout=10)
                case UsageChanged():
                    agents = True
                case ApprovalChanged(resolved=False, kind=kind, agent=agent):
                    approvals = True
                    self._announce(agent, kind)
                case ApprovalChanged():
                    approvals = True
                case MessageSent(team=team, recipient=recipient) if team == self.store.team:
                    self.queue_changes([InboxChanged(team, recipient)])
                case TeamLifecycle(team=team, event="created"):
                    self.switch_team(team)
                case RunFinished(ok=ok, reason=reason):
                    self.notify(
                        escape(reason),
                        title="Run finished",
                        severity="information" if ok else "error",
                    )
        if agents:
            self.pull_agents()
        if approvals:
            self.pull_approvals()

    def _announce(self, agent: str, kind: str) -> None:
        if kind == "plan":
            self.notify(
                escape(f"{agent} asks you to approve a plan (a approve · enter review)"),
                title="Plan",
            )
        elif kind == "permission":
            self.notify(
                escape(f"{agent} asks for a permission (a allow · enter review)"),
                title="Permission",
            )

    def pull_agents(self) -> None:
        self.deck.merge_agents(self.runtime.snapshot() if self.runtime is not None else None)
        self.broadcast({"agents", "header"})

    def pull_approvals(self) -> None:
        """Re-read the runtime's queue; close a review dialog whose request was answered."""
        if self.runtime is None:
            return
        self.deck.approvals = self.runtime.approvals()
        pending = {a.request_id for a in self.deck.approvals}
        request_id = getattr(self.screen, "request_id", None)
        if request_id is not None and request_id not in pending:
            self.screen.dismiss(None)
            self.notify("That request was answered elsewhere.", severity="warning")
        self.broadcast({"approvals", "header"})

    def broadcast(self, parts: Parts) -> None:
        """Tell every mounted view which parts of ``deck`` changed."""
        for screen in self.screen_stack:
            if isinstance(screen, DeckScreen) and screen.is_mounted:
                screen.refresh_deck(parts)

    def _tick(self) -> None:
        if isinstance(self.screen, DeckScreen):
            self.screen.tick()

    # ------------------------------------------------------------------ navigation

    def select_agent(self, name: str) -> None:
        self.deck.selected = name
        if self.deck.feed_filter is not None:
            self.deck.feed_filter = name
        self.broadcast({"agents", "filter"})

    def open_agent(self, name: str) -> None:
        self.select_agent(name)
        if not isinstance(self.screen, AgentScreen):
            self.show_leader()
            self.push_screen(AgentScreen(name))

    def show_leader(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def set_feed_filter(self, agent: str | None) -> None:
        self.deck.feed_filter = agent
        self.broadcast({"filter"})

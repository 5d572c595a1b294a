"""TeamDeckApp: turns file changes and runtime events into view state; the views watch it.

Data flows one way. File changes (this process's and others', from one ``Watcher``) are
collected for ``COALESCE_SECONDS`` and applied by the ``Store`` in a thread; the resulting
``StoreDelta`` arrives as a ``StoreUpdated`` message. Runtime events are buffered as they come
(``EventBuffer``) and flushed in order: at once for status/approval/transcript events (one
pending ``RuntimeFlush`` message at a time), every ``FLUSH_SECONDS`` for streamed text.

What the views show lives in the reactives below; screens watch them and post messages
(``app.messages``) to change them. Steering goes through ``steering`` (``app.runtime.steering``).
Only the store's incremental parts (board rows, feed lines) and streamed text are handed to
the screens directly, because they are streams, not state.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App
from textual.css.query import NoMatches
from textual.markup import escape
from textual.message import Message
from textual.reactive import var
from textual.screen import ModalScreen
from textual.worker import Worker, WorkerState

import styles
from app.commands import DeckCommands
from app.core import ChangeEvent, Home
from app.core.watch import Watcher
from app.leaving import RunWatch, ask_quit, live_team, offer_cleanup
from app.messages import (
    ApprovalSettled,
    FilterFeed,
    OpenAgent,
    SelectAgent,
    ShowLeader,
    SwitchTeam,
    ToggleBoard,
)
from app.runtime.api import AgentSnapshot, Approval, RuntimeAPI, Spawner
from app.runtime.events import RuntimeEvent, TextDelta, TranscriptEntry
from app.runtime.steering import ReadOnlySteering, RuntimeSteering, Steering
from app.screens import modes
from app.screens.agent import AgentScreen
from app.screens.deck import DeckScreen
from app.screens.leader import LeaderScreen
from app.store import Store, StoreDelta
from app.store_feeder import StoreFeeder
from app.toasts import ToastBatch
from app.view_state import (
    EventBuffer,
    HeaderInfo,
    Notice,
    TeamFiles,
    digest,
    find_agent,
    header_info,
    hook_item,
    merge_agents,
    request_notice,
    task_notice,
    valid_selection,
    with_usage,
)
from widgets.task_board import TaskBoard

log = logging.getLogger(__name__)

#: Builds the runtime the app drives, given the process's watcher and the app's spawner (each
#: agent runs as a Textual worker of its own group).
RuntimeFactory = Callable[[Watcher, Spawner], RuntimeAPI]


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
        runtime: builds the running team (called once, here, with the watcher and the
            spawner), or ``None`` for a read-only viewer of the files.
        team: the team to show (default: the runtime's, else the newest in the home).
        demo: mark the header as a demo run.
        goal: a first prompt for the lead, sent once the runtime has started.
        clock: time source for elapsed times (tests pass a fixed one).
        watch: watch other processes' writes (``False``: only this process's).
        watcher: the process's ``Watcher`` if one exists (default: a new one; it is handed
            to the runtime: one watcher per process).
    """

    TITLE = "teamdeck"
    CSS_PATH = Path(styles.__file__).parent / "deck.tcss"
    COMMANDS = App.COMMANDS | {DeckCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    FLUSH_SECONDS = 0.05  # streamed text is drawn this often
    TRANSCRIPT_POLL_SECONDS = 0.5  # a viewer reads what the agents' session files gained
    COALESCE_SECONDS = 0.02  # file changes are collected this long before they are read
    TASK_BURST_SECONDS = 0.1  # task-only changes are applied at most this often
    #: ``cli_modes.ModeOptions`` of this run, if any (see ``app.screens.modes``).
    mode_options: Any = None
    #: a viewer's transcripts (``entries(agent)``), e.g. a Claude Code team's session files
    transcript_source: Any = None
    #: a viewer of a home with several teams asks which one first, once the team shown by
    #: default (the newest activity: the picker's first line) is loaded
    #: (``app.screens.team_picker``)
    pick_on_start = False

    agents: var[tuple[AgentSnapshot, ...]] = var(())
    """The agents the panels show: the lead first, runtime snapshots merged with the files."""
    approvals: var[tuple[Approval, ...]] = var(())
    """Pending requests, oldest first: the runtime's queue (a viewer: those in the files)."""
    selected: var[str | None] = var(None)
    """The selected agent's name: always one of ``agents`` (the lead by default)."""
    feed_filter: var[str | None] = var(None)
    """Show only this agent's messages in the feed (``None``: all)."""
    board_visible: var[bool] = var(True)
    """Whether the task board is shown."""
    files: var[TeamFiles] = var(TeamFiles())
    """What the team's files say (errors, open and current tasks, the list of teams)."""
    header: var[HeaderInfo] = var(HeaderInfo())
    """The header line, counted from ``agents``, ``approvals`` and ``files``."""

    def __init__(
        self,
        home: Home,
        runtime: RuntimeFactory | None,
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
        self.goal = goal
        self.clock = clock
        self.demo = demo
        self.watcher = watcher or Watcher(home, cross_process=watch)
        self.runtime = runtime(self.watcher, self.spawn_agent) if runtime is not None else None
        self.steering: Steering = (
            RuntimeSteering(self.runtime) if self.runtime is not None else ReadOnlySteering()
        )
        self.model_description = self.runtime.model_description if self.runtime else ""
        team = team or (self.runtime.team if self.runtime is not None else None)
        self.store = Store(home, team, pick=self.runtime is None)
        self.set_reactive(TeamDeckApp.files, TeamFiles(team=team))
        self.set_reactive(TeamDeckApp.header, self._header())
        self.partial: dict[str, str] = {}  # text streamed since the agent's last entry
        #: a viewer's token usage per agent, from ``transcript_source`` (in, out, cache, tools)
        self.usage: dict[str, tuple[int, int, int, int]] = {}
        self.loaded = False  # the first store load has been shown
        self._events = EventBuffer()
        self._hook_seq = itertools.count(1)  # feed lines of hook outcomes: -1, -2, ...
        self.feeder = StoreFeeder(
            self.store,
            lambda delta: self.post_message(StoreUpdated(delta)),
            self._store_failed,
            coalesce=self.COALESCE_SECONDS,
            task_burst=self.TASK_BURST_SECONDS,
        )
        self._unsubscribe: Callable[[], None] | None = None
        #: Completed tasks come in bursts: one toast per burst ("3 tasks completed").
        self.toasts = ToastBatch(self._toast, lambda delay, done: self.set_timer(delay, done))
        self._run = RunWatch()
        self._left_checked = False

    def get_default_screen(self) -> LeaderScreen:
        return LeaderScreen()

    @property
    def leader(self) -> LeaderScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, LeaderScreen)
        return screen

    def agent(self, name: str | None) -> AgentSnapshot | None:
        """The shown agent called ``name``, if any."""
        return find_agent(self.agents, name)

    @property
    def transcripts_from_files(self) -> bool:
        """A viewer that reads the agents' transcripts from their session files."""
        return self.runtime is None and self.transcript_source is not None

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        """``agent``'s transcript so far (a viewer: from ``transcript_source`` if it has one)."""
        if self.runtime is None and self.transcript_source is not None:
            return list(self.transcript_source.entries(agent))
        return self.runtime.transcript(agent) if self.runtime is not None else []

    # ------------------------------------------------------------------ lifecycle

    def on_mount(self) -> None:
        self.set_interval(self.FLUSH_SECONDS, self.flush_runtime)
        self.set_interval(1.0, self._tick)
        if self.transcripts_from_files:
            self.set_interval(self.TRANSCRIPT_POLL_SECONDS, self._poll_transcripts)
        self._watch_files()
        self._refresh_store()
        if self.runtime is not None:
            self._unsubscribe = self.runtime.subscribe(self._on_runtime_event)
            self._start_runtime()
            self._pull_agents()
            self.approvals = tuple(self.runtime.approvals())
            modes.confirm_bypass_at_start(self)

    async def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.runtime is not None:
            try:
                await self.runtime.stop()
            except Exception:  # quitting anyway: say why in the log, not on a closing screen
                log.exception("stopping the runtime failed")
        await self.watcher.stop()

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
        known = {a.request_id for a in self.approvals}
        try:
            with self.batch_update():
                self.leader.apply_store(delta)
                self.files = self._dated(delta.files(self.files))
                if self.runtime is None:
                    self.approvals = tuple(delta.pending)
        except NoMatches:  # the views are being torn down: we are quitting
            return
        for notice in map(task_notice, delta.completed):
            self.toasts.add(escape(notice.message), notice.title)
        self._show(Notice(e, "Unreadable file", "error", 10) for e in delta.new_errors)
        if self.runtime is None and self.loaded:
            new = [a for a in self.approvals if a.request_id not in known]
            self._show(n for a in new if (n := request_notice(a.agent, a.kind, self.request_hint)))
        if not self._left_checked and self.runtime is not None and delta.reset:
            self._left_checked = True
            left = list(self.files.teams)
            if left and self.runtime.team is None:  # an earlier run's teams, left on disk
                self.run_worker(offer_cleanup(self, left), group="ui", exit_on_error=False)
        first, self.loaded = not self.loaded, True
        if first and self.pick_on_start:
            # After the first load: the picker then knows (and highlights) the team shown.
            from app.screens.team_picker import open_team_picker

            open_team_picker(self)

    # ------------------------------------------------------------------ session files -> views

    _polling = False

    def _poll_transcripts(self) -> None:
        """A viewer: read what every shown agent's session file gained (one read at a time,
        in a thread); open views follow, panels get the token counts."""
        if not self._polling:
            self._polling = True
            self._read_transcripts([a.name for a in self.agents])

    @work(thread=True, group="transcripts", exit_on_error=False, name="transcripts")
    def _read_transcripts(self, agents: list[str]) -> None:
        source = self.transcript_source
        changed: set[str] = set()
        usage: dict[str, tuple[int, int, int, int]] = {}
        try:
            changed = source.poll(agents)
            for name in agents:
                u = source.usage(name)
                if u is not None:
                    usage[name] = (
                        u.input_tokens,
                        u.output_tokens,
                        u.cache_read_tokens,
                        u.tool_calls,
                    )
        finally:
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self._transcripts_read, changed, usage)

    def _transcripts_read(
        self, changed: set[str], usage: dict[str, tuple[int, int, int, int]]
    ) -> None:
        self._polling = False
        if usage != self.usage:
            self.usage = usage
            self._pull_agents()
        views = [s for s in self.screen_stack if isinstance(s, DeckScreen) and s.is_mounted]
        for agent in sorted(changed):
            for view in views:
                view.transcript_grew(agent)

    def on_task_board_filled(self, _: TaskBoard.Filled) -> None:
        # A big team is loaded: move what was just built out of the collector's way, so
        # full collections stay short (tens of thousands of long-lived rows and feed items
        # would otherwise make each one stall the event loop for 100+ ms).
        gc.freeze()

    # ------------------------------------------------------------------ runtime -> views

    def _on_runtime_event(self, event: RuntimeEvent) -> None:
        """Runtime callback (any thread): buffer, and ask for a prompt flush unless it is text."""
        if self._events.push(event):
            self.post_message(RuntimeFlush())

    def on_runtime_flush(self, _: RuntimeFlush) -> None:
        self.flush_runtime()

    def flush_runtime(self) -> None:
        """Hand buffered runtime events to the views, in arrival order (see ``digest``);
        nothing once the app is shutting down (its views are being taken apart)."""
        if not self.is_running:
            return
        events = self._events.drain()
        if not events:
            return
        news = digest(events, self.request_hint)
        views = [s for s in self.screen_stack if isinstance(s, DeckScreen) and s.is_mounted]
        for event in news.stream:
            if isinstance(event, TextDelta):
                self.partial[event.agent] = self.partial.get(event.agent, "") + event.text
                for view in views:
                    view.on_text(event.agent, event.text)
            else:
                self.partial.pop(event.agent, None)
                for view in views:
                    view.on_entry(event)
        if news.new_team is not None:  # a second goal: everything switches together
            self.feed_filter = None
            self.feeder.switch_team(news.new_team)
        if news.hooks:
            items = [(e.team, hook_item(e, -next(self._hook_seq))) for e in news.hooks]
            for view in views:
                view.on_hooks(items)
        over = self._run.see(events)
        if over is not None:
            for view in views:
                view.run_finished(over, True)
            news.notices.append(Notice(over, "Run finished"))
        if news.agents_changed:
            self._pull_agents()
        if news.approvals_changed and self.runtime is not None:
            self.approvals = tuple(self.runtime.approvals())
        self._show(news.notices)

    def request_hint(self, agent: str) -> str:
        """The keys that answer ``agent``'s request from where the person is now."""
        views = [s for s in self.screen_stack if isinstance(s, DeckScreen)]
        hint = views[-1].request_hint(agent) if views else ""
        if views and views[-1] is not self.screen:
            hint = f"close this dialog, then {hint}"
        return hint

    def _toast(self, message: str, title: str, severity: str) -> None:
        self.notify(message, title=title, severity=severity)  # type: ignore[arg-type]

    async def action_quit(self) -> None:
        """ctrl+q: with a live team, ask first (see ``app.leaving``)."""
        team = live_team(self)
        if team is None:
            self.exit()
        elif not isinstance(self.screen, ModalScreen):
            self.run_worker(ask_quit(self, team), group="ui", exit_on_error=False)

    def _show(self, notices: Iterable[Notice]) -> None:
        for notice in notices:
            self.notify(
                escape(notice.message),
                title=notice.title,
                severity=notice.severity,
                timeout=notice.timeout,
            )

    def _pull_agents(self) -> None:
        agents = merge_agents(
            self.runtime.snapshot() if self.runtime is not None else None, self.files
        )
        self.agents = with_usage(agents, self.usage) if self.usage else agents

    def _dated(self, files: TeamFiles) -> TeamFiles:
        """``files`` with ``stale`` as of now (a viewer: only it knows the last activity)."""
        if self.runtime is not None:
            return files
        stale = files.stale_now(self.clock())
        return files if stale == files.stale else dataclasses.replace(files, stale=stale)

    def _header(self) -> HeaderInfo:
        return header_info(
            self.files,
            self.agents,
            self.approvals,
            model=self.model_description,
            read_only=self.steering.read_only,
            demo=self.demo,
            priced=self.runtime is not None,
            budget_limit=budget.limit if (budget := getattr(self, "budget", None)) else None,
        )

    def _tick(self) -> None:
        self.header = self._header()  # costs grow with every model call
        self.files = self._dated(self.files)  # a quiet team turns stale without a file event
        if self.is_running and isinstance(self.screen, DeckScreen):
            self.screen.tick()

    # ------------------------------------------------------------------ state rules

    def watch_files(self) -> None:
        self._pull_agents()
        self.header = self._header()

    def watch_agents(self) -> None:
        self.selected = valid_selection(self.selected, self.agents)
        self.header = self._header()

    def watch_approvals(self) -> None:
        self.header = self._header()
        if not self.screen_stack:
            return
        request_id = getattr(self.screen, "request_id", None)
        if request_id is not None and request_id not in {a.request_id for a in self.approvals}:
            self.screen.dismiss(None)
            self.notify("That request was answered elsewhere.", severity="warning")

    # ------------------------------------------------------------------ what the views ask for

    @on(SelectAgent)
    def _select(self, message: SelectAgent) -> None:
        self._set_selection(message.name)

    def _set_selection(self, name: str) -> None:
        self.selected = valid_selection(name, self.agents)
        if self.feed_filter is not None:
            self.feed_filter = self.selected

    @on(OpenAgent)
    def _open(self, message: OpenAgent) -> None:
        self._set_selection(message.name)
        if not isinstance(self.screen, AgentScreen):
            self._show_leader()
            self.push_screen(AgentScreen(message.name))

    @on(ShowLeader)
    def _show_leader(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    @on(FilterFeed)
    def _filter(self, message: FilterFeed) -> None:
        self.feed_filter = message.agent

    @on(ToggleBoard)
    def _toggle_board(self) -> None:
        self.board_visible = not self.board_visible

    @on(SwitchTeam)
    def _switch_team(self, message: SwitchTeam) -> None:
        self.feeder.switch_team(message.team)

    @on(ApprovalSettled)
    def _settled(self, message: ApprovalSettled) -> None:
        self.approvals = tuple(a for a in self.approvals if a.request_id != message.request_id)

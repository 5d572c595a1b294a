"""TeamDeckApp: turns file changes and runtime events into view state; the views watch it.

Data flows one way. File changes (this process's and others', from one ``Watcher``) are
collected for ``COALESCE_SECONDS`` and applied by the ``Store`` in a thread; the resulting
``StoreDelta`` arrives as a ``StoreUpdated`` message, applied with the runtime's events on one
beat (``view_beat``). Runtime events go through a ``RuntimeRelay`` (``event_relay``), which
publishes text and transcript entries to the views (``streamed``, a Textual ``Signal``;
``streams``) and leaves the state changes (agents, approvals, a new team, notices) to the app.

What the views show lives in the reactives below; screens watch them and post messages
(``app.dashboard.messages``) to change them. Steering goes through ``steering``
(``app.runtime.steering``); the requests pending and the team's toasts are ``team_news``'s.
Only the store's incremental parts (board rows, feed lines) and streamed text are handed to
the screens directly, because they are streams, not state.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

from textual import on, work
from textual.app import App
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import ModalScreen
from textual.worker import Worker, WorkerState

import styles
from app.core import ChangeEvent, Home
from app.core.watch import Watcher
from app.dashboard.claude_bridge import BridgeLink
from app.dashboard.event_relay import RuntimeFlush, RuntimeRelay
from app.dashboard.first_frame import report_first_frame
from app.dashboard.leaving import SHUTDOWN_WAIT, ask_quit, live_team, offer_cleanup
from app.dashboard.loop_turns import favour_the_loop
from app.dashboard.palette.commands import DeckCommands
from app.dashboard.screens import modes
from app.dashboard.screens.deck import DeckScreen
from app.dashboard.screens.host import ModeChoices
from app.dashboard.screens.leader import LeaderScreen
from app.dashboard.session_transcripts import AgentUsage, SessionFiles
from app.dashboard.store import Store, StoreDelta  # (defined in store_delta)
from app.dashboard.store_feeder import StoreFeeder
from app.dashboard.streams import TranscriptGrew
from app.dashboard.team_news import TeamNews
from app.dashboard.team_source import TeamSource
from app.dashboard.terminal_keys import read_esc_and_digit_as_alt
from app.dashboard.toasts import ToastBatch
from app.dashboard.view_beat import ViewBeat
from app.display.values import (
    HeaderInfo,
    TeamFiles,
    header_info,
    merge_agents,
    since_goal,
    with_usage,
)
from app.runtime.api import AgentSnapshot, RuntimeAPI
from app.runtime.bridge.steering import BridgeSteering
from app.runtime.events import TranscriptEntry
from app.runtime.steering import Steering
from widgets.agent_text import agent_markup
from widgets.task_board import TaskBoard

log = logging.getLogger(__name__)


@dataclass
class StoreUpdated(Message):
    """The store re-read something: apply ``delta``."""

    delta: StoreDelta


class TeamDeckApp(TeamNews):
    """The dashboard.

    Args:
        home: the home whose files are shown.
        source: where the team comes from (``app.dashboard.team_source``): a runtime this
            process runs (built here, with the watcher and the spawner) or only the files.
        demo: mark the header as a demo run.
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

    FLUSH_SECONDS = 0.1  # the views' beat: what the team did is drawn this often (view_beat)
    TRANSCRIPT_POLL_SECONDS = 0.5  # a viewer reads what the agents' session files gained
    COALESCE_SECONDS = 0.02  # file changes are collected this long before they are read
    TASK_BURST_SECONDS = 0.1  # task-only changes are applied at most this often
    SHUTDOWN_WAIT = (
        SHUTDOWN_WAIT  # seconds teammates get to answer on quit (``app.dashboard.leaving``)
    )

    def __init__(
        self,
        home: Home,
        source: TeamSource,
        *,
        demo: bool = False,
        clock: Callable[[], float] = time.time,
        watch: bool = True,
        watcher: Watcher | None = None,
        bridge: BridgeLink | None = None,
    ) -> None:
        super().__init__()
        read_esc_and_digit_as_alt()  # esc 3 is esc then 3, never a "£" typed
        self.bridge = bridge
        self.home = home
        self.source = source
        self.clock = clock
        self.demo = demo
        self.keep_home = False  # a demo: the person left its team on disk (quit dialog)
        self.left_team: tuple[str, bool] | None = None  # (team, left running) on quitting
        self.watcher = watcher or Watcher(home, cross_process=watch)
        shown = self.shown_team
        self.steering: Steering = source.connect(self.watcher, self.spawn_agent, shown)
        if bridge is not None:
            self.steering = BridgeSteering(self.steering, bridge.bridge)
        self.model_description = source.model_description
        team = source.team
        self.store = Store(home, team, pick=source.shows_newest)
        #: a viewer's transcripts, read from the agents' session files if it has a source
        reader = source.transcripts(shown)
        self.session_files: SessionFiles | None = (
            SessionFiles(self, reader, self._transcripts_read) if reader is not None else None
        )
        #: the run's mode options, if any (see ``app.dashboard.screens.modes``)
        self.mode_options: ModeChoices | None = source.modes
        #: a viewer of a home with several teams asks which one first, once the team shown by
        #: default (the picker's first line) is loaded (``app.dashboard.screens.team_picker``)
        self.pick_on_start = source.pick
        self.set_reactive(TeamDeckApp.files, TeamFiles(team=team))
        self.set_reactive(TeamDeckApp.header, self.header_now())
        self.relay = RuntimeRelay(self, self.request_hint)
        self.partial = self.relay.partial  # text streamed since each agent's last entry
        self.streamed = self.relay.streamed  # the views subscribe while mounted
        #: a viewer's token usage per agent, from its session files (in, out, cache, tools)
        self.usage: dict[str, AgentUsage] = {}
        self.loaded = False  # the first store load has been shown
        self.feeder = StoreFeeder(
            self.store,
            lambda delta: self.post_message(StoreUpdated(delta)),
            self._store_failed,
            coalesce=self.COALESCE_SECONDS,
            task_burst=self.TASK_BURST_SECONDS,
        )
        self._unsubscribe: Callable[[], None] | None = None
        self.beat = ViewBeat[StoreDelta](self.FLUSH_SECONDS, self._on_beat, self.set_timer)
        self.toasts = ToastBatch(
            self._toast, lambda delay, done: self.set_timer(delay, done), tag=self._toast_team
        )
        self._left_checked = False

    def get_default_screen(self) -> LeaderScreen:
        return LeaderScreen()

    @property
    def leader(self) -> LeaderScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, LeaderScreen)
        return screen

    @property
    def runtime(self) -> RuntimeAPI | None:
        """The running team (``None``: only files are read)."""
        return self.source.runtime

    def shown_team(self) -> str | None:
        """The team shown now (the person may switch it)."""
        return self.store.team

    @property
    def awaits_goal(self) -> bool:
        """The lead waits for a first goal (a runtime with no team and no goal yet): the
        leader view starts in its input. Otherwise (the demo, ``run GOAL``, a team running)
        it starts on the panels, where the keys act; the input is ``i`` away."""
        return (
            self.runtime is not None
            and self.source.team is None
            and not getattr(self.source, "goal", None)
        )

    @property
    def transcripts_from_files(self) -> bool:
        """A viewer that reads the agents' transcripts from their session files."""
        return self.session_files is not None

    def transcript(self, agent: str) -> list[TranscriptEntry]:
        """``agent``'s transcript so far (a viewer: from its session files if it reads them)."""
        if self.session_files is not None:
            return self.session_files.entries(agent)
        return self.source.transcript(agent)

    # ------------------------------------------------------------------ lifecycle

    def on_mount(self) -> None:
        self.call_after_refresh(report_first_frame)  # the start-up figure (bench/startup.py)
        self._switch_back = favour_the_loop()  # the team's threads yield the GIL sooner
        self.set_interval(self.FLUSH_SECONDS, self.beat.tick)
        self.set_interval(1.0, lambda: self.beat.after_keys(self._tick))  # not between keys
        files = self.session_files
        if files is not None:
            self.set_interval(
                self.TRANSCRIPT_POLL_SECONDS, lambda: files.poll([a.name for a in self.agents])
            )
        follow = self.feeder.follow(self.watcher)
        self.run_worker(follow, name="watcher", group="watcher", exit_on_error=False)
        self._refresh_store()
        if self.bridge is not None and (warning := self.bridge.start(self)):
            self.notify(agent_markup(warning), severity="warning", timeout=10)
        self._unsubscribe = self.source.subscribe(self.relay.push)
        # After the first frame: loading the model SDK (in a thread) competes with the first paint.
        self.call_after_refresh(self._start_runtime)
        self.pull_agents()
        self._runtime_approvals()
        modes.confirm_bypass_at_start(self)
        if (notify := getattr(self, "notify_watch", None)) is not None:
            notify.start(self)  # calls the person when needed (``notify_watch``)

    async def on_unmount(self) -> None:
        if (notify := getattr(self, "notify_watch", None)) is not None:
            notify.stop()
        if self.bridge is not None:
            self.bridge.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
        try:
            await self.source.stop()
        except Exception:  # quitting anyway: say why in the log, not on a closing screen
            log.exception("stopping the runtime failed")
        await self.watcher.stop()
        self._switch_back()

    @work(group="runtime", exit_on_error=False, name="runtime")
    async def _start_runtime(self) -> None:
        await self.source.start()  # and the lead's first goal, if it has one

    def spawn_agent(self, name: str, factory: Callable[[], Awaitable[None]]) -> Worker[None]:
        """The runtime's spawner: each agent runs as a worker of its own group."""
        return self.run_worker(factory(), name=name, group=f"agent-{name}", exit_on_error=False)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(
                agent_markup(f"{event.worker.name}: {error}"), title="Error", severity="error"
            )

    # ------------------------------------------------------------------ files -> store

    def queue_changes(self, events: list[ChangeEvent]) -> None:
        self.feeder.queue(events)

    @work(group="store", exit_on_error=False, name="store")
    async def _refresh_store(self) -> None:
        await self.feeder.run()

    def _store_failed(self, exc: Exception) -> None:
        self.notify(agent_markup(f"reading the team files failed: {exc}"), severity="error")

    def on_store_updated(self, message: StoreUpdated) -> None:
        if not self.screen_stack or not self.leader.is_mounted:
            self.call_after_refresh(self.on_store_updated, message)  # still starting up
            return
        self.beat.store(message.delta)

    def _on_beat(self, deltas: list[StoreDelta]) -> bool:  # the store's deltas, then events
        if not self.screen_stack or not self.leader.is_mounted:  # quitting: the views are gone
            return False
        drew = bool(deltas) or self.relay.pending > 0
        began = time.thread_time()  # the loop's CPU, not the clock: a loaded machine's
        with self.batch_update():  # waits are not the dashboard's cost
            for delta in deltas:
                self._apply_store(delta)
            self.flush_runtime()
        if drew:  # the time budget: the CPU it took to put these changes on the screen
            self.call_after_refresh(lambda: self.beat.spent(time.thread_time() - began))
        return drew

    def _apply_store(self, delta: StoreDelta) -> None:
        if delta.reset:
            gc.unfreeze()  # the previous team's objects may be garbage now
        known = {a.request_id for a in self.approvals}
        pending = self.store_requests(delta)
        try:  # inside the beat's batch_update
            self.leader.apply_store(delta)
            self.files = self._dated(delta.files(self.files), fresh=True)
            if pending is not None:
                self.approvals = pending
        except NoMatches:  # the views are being torn down: we are quitting
            return
        self.store_news(delta)
        if pending is not None and self.loaded:
            self._announce(known)
        if not self._left_checked and delta.reset:
            self._left_checked = True
            left = self.source.leftover_teams(self.files)  # an earlier run's, left on disk
            if left:
                self.run_worker(offer_cleanup(self, left), group="ui", exit_on_error=False)
        first, self.loaded = not self.loaded, True
        if first and self.pick_on_start:
            # After the first load: the picker then knows (and highlights) the team shown.
            from app.dashboard.screens.team_picker import open_team_picker

            open_team_picker(self)

    # ------------------------------------------------------------------ session files -> views

    def _transcripts_read(self, changed: set[str], usage: dict[str, AgentUsage]) -> None:
        """What the session files gained: open views follow, panels get the token counts."""
        if usage != self.usage:
            self.usage = usage
            self.pull_agents()
            if check := getattr(getattr(self, "budget", None), "check", None):
                check(self, self.agents)  # a Claude Code team's (``claude_budget``)
        for agent in sorted(changed):
            self.streamed.publish(TranscriptGrew(agent))

    def on_task_board_filled(self, _: TaskBoard.Filled) -> None:
        # A big team is loaded: move what was just built out of the collector's way, so full
        # collections stay short (10,000s of rows and feed items: 100+ ms stalls otherwise).
        gc.freeze()

    # ------------------------------------------------------------------ runtime -> views

    def on_runtime_flush(self, _: RuntimeFlush) -> None:
        self.beat.runtime()

    def flush_runtime(self) -> None:
        """Apply the runtime events received so far (none once the app is shutting down)."""
        if not self.is_running:
            return
        try:
            news = self.relay.flush()
        except NoMatches:  # the views are being torn down: we are quitting
            return
        if news is None:
            return
        self.feeder.queue(news.sent)  # the feed's, should the files go first (Store.apply)
        if news.run_ended:  # the next goal counts from here (a copy: the runtime's is live)
            self._lead_at_end = tuple(replace(a) for a in self.source.snapshot() or () if a.is_lead)
        if news.new_team is not None:  # a second goal: everything switches together
            self.feed_filter = None
            self.feeder.switch_team(news.new_team)
            self._lead_base = self._lead_at_end
        if news.agents_changed:
            self.pull_agents()
        if news.approvals_changed:
            self._runtime_approvals()
        self._show(news.notices)

    async def action_quit(self) -> None:
        """ctrl+q: with a live team, ask first (see ``app.dashboard.leaving``)."""
        team = live_team(self)
        if team is None:
            self.exit()
        elif not isinstance(self.screen, ModalScreen):
            self.run_worker(ask_quit(self, team), group="ui", exit_on_error=False)

    # ------------------------------------------------------------------ DeckState's part

    _lead_at_end: tuple[AgentSnapshot, ...] = ()  # the lead when the last run ended
    _lead_base: tuple[AgentSnapshot, ...] = ()  # ... as the team shown began (``since_goal``)

    def pull_agents(self) -> None:
        agents = since_goal(merge_agents(self.source.snapshot(), self.files), self._lead_base)
        self.agents = with_usage(agents, self.usage) if self.usage else agents

    def show_team(self, team: str | None) -> None:
        self.feeder.switch_team(team)

    def header_now(self) -> HeaderInfo:
        return header_info(
            self.files,
            self.agents,
            self.approvals,
            model=self.model_description,
            read_only=self.steering.read_only,
            demo=self.demo,
            priced=self.source.priced,
            budget_limit=budget.limit if (budget := getattr(self, "budget", None)) else None,
            sandbox=self.runtime.sandbox_description if self.runtime is not None else "",
        )

    def _tick(self) -> None:
        self.header = self.header_now()  # costs grow with every model call
        self.files = self._dated(self.files)  # a quiet team turns stale without a file event
        if self.is_running and isinstance(self.screen, DeckScreen):
            self.screen.tick()

"""The dashboard's view state: typed reactives, the rules that keep them consistent, and the
messages from the views that change them.

``TeamDeckApp`` (``app.dashboard.app``) derives from :class:`DeckState` and feeds it from the files
and
the runtime. The screens and the palette read these reactives
(``app.dashboard.screens.host.DeckHost``),
watch them, and post ``app.dashboard.messages`` up to change them; they never set them.
"""

from __future__ import annotations

from typing import Any

from textual import events, on
from textual.reactive import var

from app.dashboard.messages import (
    ApprovalSettled,
    FilterFeed,
    OpenAgent,
    SelectAgent,
    ShowLeader,
    SwitchTeam,
    ToggleBoard,
)
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.toast_hold import HoldsToasts
from app.dashboard.view_beat import ViewBeat
from app.display.values import HeaderInfo, TeamFiles, find_agent, valid_selection
from app.runtime.api import AgentSnapshot, Approval
from app.runtime.scheduling import input_first


class DeckState(HoldsToasts):
    """The reactives below and what changes them; see the module docstring. A subclass says
    where the agents and the header come from and how another team is shown."""

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
    #: What the team did reaches the views on this beat (the subclass makes it).
    beat: ViewBeat[Any]
    #: How long a key press holds the team's changes back, at most (``ViewBeat.hold``).
    KEY_FIRST_SECONDS = 0.05

    #: How long a key press holds the team's threads back, at most (``input_first``).
    PERSON_FIRST_SECONDS = 0.1

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.beat.hold(self.KEY_FIRST_SECONDS)  # the key's frame first
            input_first.person_waits(self.PERSON_FIRST_SECONDS)  # the team's threads wait
            await super().on_event(event)
            self.call_after_refresh(input_first.person_served)  # until the key's frame
            return
        await super().on_event(event)

    def agent(self, name: str | None) -> AgentSnapshot | None:
        """The shown agent called ``name``, if any."""
        return find_agent(self.agents, name)

    # ------------------------------------------------------------------ the subclass's part

    def pull_agents(self) -> None:
        """Set ``agents`` from what is known now (runtime snapshots and ``files``)."""
        raise NotImplementedError

    def header_now(self) -> HeaderInfo:
        """The header for the current state."""
        raise NotImplementedError

    def show_team(self, team: str | None) -> None:
        """Read and show another team of the home."""
        raise NotImplementedError

    # ------------------------------------------------------------------ state rules

    def watch_files(self) -> None:
        self.pull_agents()
        self.header = self.header_now()
        self.drop_stale_toasts()  # another team shown: the last one's news is not this one's

    def watch_agents(self) -> None:
        self.selected = valid_selection(self.selected, self.agents)
        self.header = self.header_now()

    def watch_approvals(self) -> None:
        self.header = self.header_now()
        self.drop_stale_toasts()  # a request answered: its toast goes
        if not self.screen_stack:
            return
        request_id = getattr(self.screen, "request_id", None)  # a plan or permission dialog
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
        self.show_team(message.team)

    @on(ApprovalSettled)
    def _settled(self, message: ApprovalSettled) -> None:
        self.approvals = tuple(a for a in self.approvals if a.request_id != message.request_id)

"""The leader view (default screen): header, roster, approvals queue, task board, message
feed, the lead's streamed transcript and an input to the lead."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, OptionList

from app.core.paths import LEAD_NAME
from app.runtime.api import Approval
from app.runtime.events import TranscriptEntry
from app.screens.deck import ALL_PARTS, DeckScreen
from app.store import StoreDelta
from widgets.approvals import ApprovalsQueue
from widgets.borders import set_border
from widgets.message_feed import MessageFeed
from widgets.roster import Roster
from widgets.status_bar import StatusBar
from widgets.task_board import TaskBoard
from widgets.transcript import Transcript


class LeaderScreen(DeckScreen):
    """See the module docstring."""

    BINDINGS = [
        Binding("i", "focus_input", "Type", id="focus-input"),
        Binding("escape", "focus_roster", "Roster", show=False, id="focus-roster"),
    ]

    def compose(self) -> ComposeResult:
        clock = self.deck_app.clock
        yield StatusBar(id="status")
        with Horizontal(id="main"):
            with Vertical(id="side"):
                yield Roster(clock=clock, id="roster")
                yield ApprovalsQueue(id="approvals")
            with Vertical(id="work"):
                yield TaskBoard(id="board")
                yield MessageFeed(id="feed")
                yield Transcript(id="lead")
        yield Input(placeholder="Message the lead… (enter sends)", id="prompt")
        yield Footer()

    _shown_selection: str | None = None

    def on_mount(self) -> None:
        set_border(self.query_one("#roster"), title="Team")
        set_border(self.query_one("#board"), title="Tasks")
        set_border(self.query_one("#lead"), title=LEAD_NAME)
        prompt = self.query_one("#prompt", Input)
        if self.runtime is None:
            prompt.placeholder = "Read-only viewer: no runtime to send to"
            prompt.disabled = True
        lead = self.query_one("#lead", Transcript)
        if self.runtime is not None:
            lead.show(
                LEAD_NAME,
                self.runtime.transcript(LEAD_NAME),
                self.deck_app.partial.get(LEAD_NAME, ""),
            )
        else:
            lead.show(None, [])
        self.refresh_deck(ALL_PARTS)
        self.query_one("#roster").focus()

    # ------------------------------------------------------------------ state in

    def refresh_deck(self, parts: frozenset[str] | set[str]) -> None:
        deck = self.deck
        if "agents" in parts or "header" in parts or "approvals" in parts:
            self.show_status()
        if "agents" in parts:
            roster = self.query_one(Roster)
            roster.set_agents(deck.agents, deck.inbox_errors, deck.selected)
            error = Text(f"⚠ {deck.config_error}", style="bold red") if deck.config_error else ""
            set_border(roster, subtitle=error)
            feed = self.query_one(MessageFeed)
            feed.set_colors(deck.colors)
            self.query_one(TaskBoard).recolor(deck.colors)
        if "approvals" in parts or deck.selected != self._shown_selection:
            queue = self.query_one(ApprovalsQueue)
            queue.set_approvals(deck.approvals)
            if deck.selected != self._shown_selection:
                # Selecting a teammate highlights its own request: a / r answer that one.
                self._shown_selection = deck.selected
                queue.highlight_agent(deck.selected)
            count = f" ({len(deck.approvals)})" if deck.approvals else ""
            set_border(queue, title=f"Approvals{count}")
        if "filter" in parts or "agents" in parts:
            self._show_filter()
        if "board" in parts:
            self.query_one(TaskBoard).display = deck.board_visible
        if "header" in parts:
            board = self.query_one(TaskBoard)
            set_border(board, title=f"Tasks ({deck.open_tasks} open)")
            errors = deck.task_errors
            first = next(iter(errors.values()), "")
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            board.set_error(f"{first}{more}")

    def _show_filter(self) -> None:
        feed = self.query_one(MessageFeed)
        feed.set_filter(self.deck.feed_filter)
        title = "Messages"
        if self.deck.feed_filter:
            title += f" · {self.deck.feed_filter} only (f: all)"
        inbox_errors = self.deck.inbox_errors
        first = next(iter(inbox_errors.values()), "")
        set_border(
            feed, title=title, subtitle=Text(f"⚠ {first}", style="bold red") if first else ""
        )

    def apply_store(self, delta: StoreDelta) -> None:
        """Board rows and feed lines from a store delta (call inside ``batch_update``)."""
        board = self.query_one(TaskBoard)
        if delta.reset or delta.task_upserts or delta.task_removals:
            board.apply(delta.task_upserts, delta.task_removals, reset=delta.reset)
        feed = self.query_one(MessageFeed)
        if delta.feed_reset:
            feed.set_items(delta.feed_added)
        else:
            feed.add_items(delta.feed_added)
            feed.touch(delta.feed_updated)
        if delta.inbox_errors or delta.feed_reset:
            self._show_filter()

    def on_text(self, agent: str, text: str) -> None:
        if agent == LEAD_NAME:
            self.query_one("#lead", Transcript).add_text(text)

    def on_entry(self, entry: TranscriptEntry) -> None:
        if entry.agent == LEAD_NAME:
            self.query_one("#lead", Transcript).add_entry(entry)

    def selected_approval(self) -> Approval | None:
        return self.query_one(ApprovalsQueue).selected

    # ------------------------------------------------------------------ the person's input

    def action_focus_input(self) -> None:
        self.query_one("#prompt", Input).focus()

    def action_focus_roster(self) -> None:
        self.query_one(Roster).focus()

    @on(Input.Submitted, "#prompt")
    def _submit(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            self.send_to(LEAD_NAME, text)
            event.input.clear()

    @on(Roster.Selected)
    def _selected(self, event: Roster.Selected) -> None:
        self.deck_app.select_agent(event.name)

    @on(Roster.Opened)
    def _opened(self, event: Roster.Opened) -> None:
        self.deck_app.open_agent(event.name)

    @on(OptionList.OptionSelected, "#approvals")
    def _review(self, event: OptionList.OptionSelected) -> None:
        approval = self.query_one(ApprovalsQueue).selected
        if approval is not None and approval.request_id == event.option.id:
            self.open_approval(approval)

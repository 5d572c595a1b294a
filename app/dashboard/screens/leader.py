"""The leader view (default screen): header, roster, approvals queue, task board, message
feed, the lead's streamed transcript and an input to the lead."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, OptionList

from app.core.paths import LEAD_NAME
from app.dashboard import keys
from app.dashboard.messages import OpenAgent
from app.dashboard.screens.deck import DeckScreen
from app.dashboard.screens.message import MessageScreen
from app.dashboard.screens.task_detail import TaskScreen
from app.dashboard.store_delta import StoreDelta
from app.display.trends import AgentTrend, UsageHistory
from app.display.values import FeedItem, TeamFiles, agent_colors
from app.runtime.api import Approval
from app.runtime.events import TranscriptEntry
from widgets.agent_text import agent_text
from widgets.approvals import ApprovalsQueue
from widgets.borders import set_border
from widgets.compose_box import ComposeBox
from widgets.footer import KeyFooter
from widgets.message_feed import MessageFeed
from widgets.needs_you import NeedsYou
from widgets.roster import Roster
from widgets.status_bar import StatusBar
from widgets.task_board import TaskBoard
from widgets.transcript_tail import TranscriptTail
from widgets.usage_trend import UsageTrend, shown_lines

#: The lead's pane when the lead is a Claude Code session teamdeck only steers.
LEAD_FROM_FILES = (
    "The lead's own Claude Code session shows here, read from its transcript under the home's "
    "projects/ folder (found through the team's leadSessionId), once a team is shown. "
    "No team yet? Start Claude Code and ask it for an agent team; with Claude Code 2.1.332 "
    "and later, run teamdeck claude setup first, so its requests come here. "
    "What you type below goes into the lead's inbox, from user."
)

#: Entries the lead's pane keeps (one line each, see ``TranscriptTail``). The lead's own view
#: keeps the whole transcript.
LEAD_PANE_ENTRIES = 20

#: The lead's transcript before anything happened: what to do first. The demo's command comes
#: second: at 80x24 and 100x30 the pane shows four rows, and it was cut off there.
FIRST_SCREEN = (
    "Type a goal for the lead in the box below and press enter (e.g. “Summarize the Python "
    "files here”). To watch a team first: ctrl+q, then .venv/bin/teamdeck demo (teamdeck "
    "demo if it is on your PATH). The lead creates a team, splits the work into tasks and "
    "spawns teammates: their panels, the task board and their messages appear here, and you "
    "approve their plans. In the box ctrl+j starts a new line; esc leaves it, i opens it again."
)


class LeaderScreen(DeckScreen):
    """See the module docstring."""

    BINDINGS = [
        keys.LEAVE_INPUT.binding(),
        *keys.SEARCH_KEYS,
        keys.BACK_TO_INPUT.binding("new-goal"),
        keys.OPEN.binding(),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Hook outcomes shown in the feed, with their team (a rebuilt feed gets them back).
        self._hook_items: list[tuple[str | None, FeedItem]] = []
        self.usage_history = UsageHistory()  # tokens over time, task progress (``UsageTrend``)
        self._trends_shown: dict[str, AgentTrend] = {}  # the trend's lines, as last made

    def compose(self) -> ComposeResult:
        clock = self.host.clock
        yield StatusBar(id="status")
        with Horizontal(id="main"):
            with Vertical(id="side"):
                yield Roster(clock=clock, id="roster")
                with Vertical(id="asks"):
                    yield ApprovalsQueue(id="approvals")
                    yield UsageTrend(id="trend")
            with Vertical(id="work"):
                yield TaskBoard(id="board")
                yield MessageFeed(clock=clock, id="feed")
                yield TranscriptTail(id="lead", max_items=LEAD_PANE_ENTRIES)
        yield NeedsYou(id="needs")
        yield ComposeBox(placeholder="A goal or a message for the lead…", id="prompt")
        yield KeyFooter(compact=self.narrow, show_command_palette=not self.narrow)

    #: Below this many columns the side column narrows further: at 60x20 the board was cut
    #: at "Ow".
    TINY = 70
    #: The roster is a strip above the board (``-strip``) narrower than this, ...
    STRIP_BELOW = 120
    #: ... with at least this many rows: at 80x24 a strip's rows would cut the board.
    STRIP_ROWS = 28

    def _fit_breakpoints(self) -> None:
        """The app's breakpoints, and the leader view's own: ``-strip`` (see the style
        sheet), set before the first layout too, so the view is never drawn in one layout
        then the other."""
        super()._fit_breakpoints()
        width, height = self.app.size
        if not (self.app.is_running and width and height):
            return
        strip = width < self.STRIP_BELOW and height >= self.STRIP_ROWS
        self.set_class(strip, "-strip")
        if not self.is_mounted:
            return
        side = self.query_one("#side")
        side.styles.width = 21 if 0 < width < self.TINY and not strip else None
        roster = self.query_one(Roster)
        roster.styles.grid_size_columns = 1 if width < self.TINY else 2

    def on_resize(self) -> None:
        super().on_resize()
        self._fit_breakpoints()

    def on_mount(self) -> None:
        self._fit_breakpoints()
        host = self.host
        set_border(self.query_one("#roster"), title="Team")
        set_border(self.query_one("#board"), title="Tasks")
        self._label_lead(host.selected)
        prompt = self.query_one("#prompt", ComposeBox)
        lead = self.query_one("#lead", TranscriptTail)
        if self.steering.read_only:
            prompt.placeholder = "Read-only viewer: no runtime to send to"
            prompt.disabled = True
            lead.show(None, [])
        else:
            if host.transcripts_from_files:
                prompt.placeholder = "A message for the lead (into its inbox)…"
            lead.show(
                LEAD_NAME,
                host.transcript(LEAD_NAME),
                host.partial.get(LEAD_NAME, ""),
                empty=LEAD_FROM_FILES if host.transcripts_from_files else FIRST_SCREEN,
            )
        self.watch(self.app, "header", self.show_header)
        self.watch(self.app, "files", self._show_files)
        self.watch(self.app, "agents", self._show_agents)
        self.watch(self.app, "approvals", self._show_approvals)
        self.watch(self.app, "selected", self._show_selection)
        self.watch(self.app, "feed_filter", self._show_filter)
        self.watch(self.app, "board_visible", self._show_board)
        # A first goal to type: the compose box is open (its border says "typing — esc to
        # leave"). A team at work (the demo, ``run GOAL``, ``attach``): the panels have the
        # focus, so the keys act at once; the box is ``i`` away.
        if host.awaits_goal and not self.steering.read_only:
            prompt.open()
        else:
            self.query_one("#roster").focus()
        self.show_needs()

    # ------------------------------------------------------------------ state in

    def _show_agents(self) -> None:
        host = self.host
        roster = self.query_one(Roster)
        roster.set_agents(list(host.agents), dict(host.files.inbox_errors), host.selected)
        colors = agent_colors(host.files, host.agents)
        self.query_one(MessageFeed).set_colors(colors)
        self.query_one(TaskBoard).recolor(colors)
        self._show_filter()

    def _show_files(self, old: TeamFiles, files: TeamFiles) -> None:
        if old is files or (old.inbox_errors, old.config) != (files.inbox_errors, files.config):
            self._show_agents()  # panels' file errors, colours (else ``agents`` redraws them)
        roster = self.query_one(Roster)
        error = (
            agent_text(f"⚠ {files.config_error}", style="bold red") if files.config_error else ""
        )
        set_border(roster, subtitle=error)
        board = self.query_one(TaskBoard)
        set_border(board, title=f"Tasks ({files.open_tasks} open)")
        errors = files.task_errors
        first = next(iter(errors.values()), "")
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        board.set_error(f"{first}{more}")

    def _show_approvals(self, approvals: tuple[Approval, ...]) -> None:
        queue = self.query_one(ApprovalsQueue)
        queue.set_approvals(list(approvals))
        count = f" ({len(approvals)})" if approvals else ""
        set_border(queue, title=f"Approvals{count}")
        self._show_target()

    def _show_selection(self, selected: str | None) -> None:
        self.selection_shown()
        self._label_lead(selected)
        self.query_one(Roster).select(selected)
        self._show_target()
        self._show_trend(fresh=False)  # narrow, the trend line is the selected agent's

    def _show_target(self) -> None:
        """What ``a``/``r``/``v`` answer, before the key is pressed: highlighted in the queue
        (the selected teammate's oldest request, else the oldest), named in the footer."""
        target = self.selected_approval()
        self.query_one(ApprovalsQueue).highlight_request(target.request_id if target else None)
        self.show_needs()

    def _label_lead(self, selected: str | None) -> None:
        """The bottom panel is the lead's transcript whatever is selected: say so, and how to
        read the selected teammate's."""
        lead = self.query_one("#lead", TranscriptTail)
        set_border(lead, title=Text.assemble((LEAD_NAME, "bold"), " · lead's transcript"))
        if selected and selected != LEAD_NAME and self.host.agent(selected) is not None:
            hint = f"{selected}'s transcript: enter on its panel"
        else:
            hint = "a teammate's transcript: select it, then enter"
        set_border(lead, subtitle=hint)

    def _show_filter(self) -> None:
        host = self.host
        feed = self.query_one(MessageFeed)
        feed.set_filter(host.feed_filter)
        title = "Messages"
        if host.feed_filter:
            title += f" · {host.feed_filter} only (f: all)"
        first = next(iter(host.files.inbox_errors.values()), "")
        set_border(
            feed, title=title, subtitle=agent_text(f"⚠ {first}", style="bold red") if first else ""
        )

    def _show_board(self, visible: bool) -> None:
        self.query_one(TaskBoard).display = visible

    def apply_store(self, delta: StoreDelta) -> None:
        """Board rows and feed lines: the store's incremental parts (inside ``batch_update``)."""
        board = self.query_one(TaskBoard)
        if delta.reset or delta.task_upserts or delta.task_removals:
            board.apply(delta.task_upserts, delta.task_removals, reset=delta.reset)
        if delta.reset or delta.task_upserts or delta.task_removals:
            history = self.usage_history
            history.tasks(delta.task_upserts, delta.task_removals, reset=delta.reset)
            self._show_trend()
        feed = self.query_one(MessageFeed)
        if delta.feed_reset:
            hooks = [item for team, item in self._hook_items if team == delta.team]
            feed.set_items(sorted([*delta.feed_added, *hooks], key=_sort_key))
        else:
            feed.add_items(delta.feed_added)
            feed.touch(delta.feed_updated)

    def tick(self) -> None:
        super().tick()
        self.usage_history.sample(self.host.agents)
        self._show_trend()

    def _show_trend(self, *, fresh: bool = True) -> None:
        """The trend's lines; ``fresh=False`` (a selection moved): the totals as last shown,
        so the key's frame draws the selection and not every line's newer total (eight
        totals and sparklines repainted on each key press while a team works, bench/live.py's
        ``keypress`` row); the next tick or board change brings them up to date."""
        history = self.usage_history
        trends = history.trends(shown_lines(self.host.agents, self.host.selected))
        if fresh:
            self._trends_shown = {trend.name: trend for trend in trends}
        else:  # (values: the runtime's snapshots change in place)
            trends = [self._trends_shown.setdefault(t.name, t) for t in trends]
        self.query_one(UsageTrend).show(trends, self.host.selected, history.progress())

    def search_target(self) -> MessageFeed:
        return self.query_one(MessageFeed)

    def on_hooks(self, items: list[tuple[str | None, FeedItem]]) -> None:
        """Hook outcomes of the team shown join the feed."""
        self._hook_items.extend(items)
        shown = self.host.files.team
        self.query_one(MessageFeed).add_items(item for team, item in items if team == shown)

    def on_text(self, agent: str, text: str) -> None:
        if agent == LEAD_NAME:
            self.query_one("#lead", TranscriptTail).add_text(text)

    def on_entry(self, entry: TranscriptEntry) -> None:
        if entry.agent == LEAD_NAME:
            self.query_one("#lead", TranscriptTail).add_entry(entry)

    def transcript_grew(self, agent: str) -> None:
        if agent == LEAD_NAME and not self.steering.read_only:
            self.query_one("#lead", TranscriptTail).follow(self.host.transcript(LEAD_NAME))

    def run_finished(self, reason: str, ok: bool) -> None:
        nxt = "type a new goal" if self.typing else "n new goal"
        mark = "run finished" if ok else "run ended"
        line = f"{mark} — {reason} · {nxt} · ctrl+q quit"
        self.query_one("#lead", TranscriptTail).add_entry(
            TranscriptEntry(LEAD_NAME, "notice", line, {"finished": True})
        )

    def selected_approval(self) -> Approval | None:
        queue = self.query_one(ApprovalsQueue)
        if queue.has_focus and queue.selected_id is not None:
            return queue.selected  # the one the person moved to (its agent is selected)
        return super().selected_approval()

    # ------------------------------------------------------------------ the person's input

    @on(ComposeBox.Submitted, "#prompt")
    def _submit(self, event: ComposeBox.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text and self.send_to(LEAD_NAME, text).ok:
            event.box.clear()  # else the text stays, to send again
            self.close_compose()  # sent: the keys act again

    @on(Roster.Selected)
    def _selected(self, event: Roster.Selected) -> None:
        self.select(event.name)

    @on(Roster.Opened)
    def _opened(self, event: Roster.Opened) -> None:
        self.post_message(OpenAgent(event.name))

    def action_open_selected(self) -> None:
        """``enter`` where no panel takes it (the lead's pane): the selected agent's view."""
        if self.selection is not None:
            self.post_message(OpenAgent(self.selection))

    @on(DataTable.RowSelected, "#board")
    def _open_task(self, event: DataTable.RowSelected) -> None:
        """``enter`` on the board: the task's detail."""
        board = self.query_one(TaskBoard)
        task = board.task_of(str(event.row_key.value))
        if task is not None:
            self.app.push_screen(TaskScreen(task, is_open=board.is_open))

    @on(MessageFeed.Opened)
    def _read_message(self, event: MessageFeed.Opened) -> None:
        self.app.push_screen(MessageScreen(event.item))

    def focus_moved(self) -> None:
        super().focus_moved()
        queue = self.query_one(ApprovalsQueue)
        approval = queue.selected if queue.has_focus else None
        if approval is not None and approval.agent != self.selection:
            self.select(approval.agent)  # reached with tab: a / r answer what is highlighted

    @on(OptionList.OptionHighlighted, "#approvals")
    def _queue_moved(self, event: OptionList.OptionHighlighted) -> None:
        queue = self.query_one(ApprovalsQueue)
        approval = queue.selected if queue.has_focus else None
        if approval is not None and approval.request_id == event.option.id:
            self.select(approval.agent)  # a / r answer what is highlighted

    @on(OptionList.OptionSelected, "#approvals")
    def _review(self, event: OptionList.OptionSelected) -> None:
        approval = self.query_one(ApprovalsQueue).selected
        if approval is not None and approval.request_id == event.option.id:
            self.open_approval(approval)


def _sort_key(item: FeedItem) -> tuple[str, int]:
    return item.sort_key

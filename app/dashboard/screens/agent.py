"""The agent view: one agent's streamed transcript and a compose box that messages it (a
teammate gets the text injected before any other mail; the lead gets it as a prompt). The box
opens with ``enter`` or ``i``; the view opens with the keys, never with a box to type in."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal

from app.dashboard import keys
from app.dashboard.screens.deck import DeckScreen
from app.display.agent_text import flat
from app.display.format import agent_cost, format_count
from app.runtime.events import TERMINAL_STATUSES, TranscriptEntry
from widgets.borders import set_border
from widgets.compose_box import ComposeBox
from widgets.footer import KeyFooter
from widgets.needs_you import NeedsYou
from widgets.roster import Roster
from widgets.status_bar import StatusBar
from widgets.teammate_panel import machine_label
from widgets.transcript import Transcript


class AgentScreen(DeckScreen):
    """Shows ``agent``; follows the selection (shift+up/down, 0-9) while open."""

    #: ``on_mount`` gives the transcript the focus: no other widget holds it first, so the
    #: footer's first keys are the view's.
    AUTO_FOCUS = ""

    #: esc leaves the compose box first, then closes a search, then goes back to the leader
    #: view; enter opens the compose box.
    BINDINGS = [
        keys.LEAVE_INPUT.binding(),
        *keys.SEARCH_KEYS,
        keys.BACK.binding(),
        keys.COMPOSE.binding(),
    ]

    def __init__(self, agent: str) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="main"):
            yield Roster(clock=self.host.clock, id="roster")
            transcript = Transcript(id="transcript")
            self._show_transcript(transcript, self.agent)  # drawn in the view's first frame
            yield transcript
        yield NeedsYou(id="needs")
        yield ComposeBox(id="inject")
        yield KeyFooter(compact=self.narrow, show_command_palette=not self.narrow)

    def on_mount(self) -> None:
        set_border(self.query_one("#roster"), title="Team")
        self._show_input()
        self._title()
        self.watch(self.app, "header", self.show_header)
        self.watch(self.app, "agents", self._show_agents)
        self.watch(self.app, "files", self._show_agents)
        self.watch(self.app, "selected", self._follow_selection)
        self.watch(self.app, "approvals", self._show_pending)
        # Focused now, not after the first frame (``focus()`` waits a turn): the footer's first
        # keys are those of the focus the view opens with. The keys act: typing is enter away.
        self.set_focus(self.query_one(Transcript))

    def show_agent(self, agent: str) -> None:
        if agent != self.agent:
            self.guard_keys()  # another agent shown: a key meant for the last one waits
        self.agent = agent
        self._show_transcript(self.query_one(Transcript), agent)
        self._show_input()
        self._title()

    def _show_transcript(self, transcript: Transcript, agent: str) -> None:
        host = self.host
        transcript.show(agent, host.transcript(agent), host.partial.get(agent, ""))

    def _show_input(self) -> None:
        """The input invites a message only to an agent that can still read one. It is never
        disabled by what the agent does: a person typing when the agent finishes keeps the
        focus and the text (the letters still to come must stay text, never keys); sending
        then says why nothing was sent (``_inject``)."""
        inject = self.query_one("#inject", ComposeBox)
        agent = self.agent
        snap = self.host.agent(agent)
        finished = snap is not None and snap.status in TERMINAL_STATUSES
        if self.steering.read_only:
            placeholder = "Read-only viewer: no runtime to send to"
        elif finished:
            assert snap is not None
            placeholder = f"{agent} has {snap.status}: it reads no more messages"
        elif snap is not None and snap.is_lead:
            placeholder = f"A message for {agent}…"
        else:
            placeholder = f"A message for {agent} (delivered before other mail)…"
        inject.placeholder = placeholder
        disabled = self.steering.read_only
        if disabled != inject.disabled:
            if disabled and inject.has_focus:
                self.focus_keys()
            inject.disabled = disabled
            self.refresh_bindings()

    def _title(self) -> None:
        transcript = self.query_one(Transcript)
        snap = self.host.agent(self.agent)
        title = Text(self.agent, style="bold")
        if snap is not None:
            title.append(f" · {snap.status}")
            if snap.machine:
                title.append(f" · {machine_label(snap.machine)}")
            if snap.current_task:
                title.append(f" · {flat(snap.current_task)}")
            tokens = f"{format_count(snap.input_tokens + snap.output_tokens)} tok"
            cost = agent_cost(snap)
            spent = f"{tokens}{f' · {cost}' if cost else ''} · {snap.tool_calls} tools"
            set_border(transcript, subtitle=spent)
        set_border(transcript, title=title)

    def _follow_selection(self, selected: str | None) -> None:
        self.selection_shown()
        self._show_selected(selected)

    def _show_selected(self, selected: str | None) -> None:
        if selected and selected != self.agent and self.host.agent(selected):
            self.show_agent(selected)
        self.query_one(Roster).select(selected)
        self._show_pending()

    def _show_agents(self) -> None:
        host = self.host
        roster = self.query_one(Roster)
        roster.set_agents(list(host.agents), dict(host.files.inbox_errors), host.selected)
        self._show_selected(host.selected)
        self._show_input()
        self._title()

    def search_target(self) -> Transcript:
        return self.query_one(Transcript)

    def on_text(self, agent: str, text: str) -> None:
        if agent == self.agent:
            self.query_one(Transcript).add_text(text)

    def on_entry(self, entry: TranscriptEntry) -> None:
        if entry.agent == self.agent:
            self.query_one(Transcript).add_entry(entry)

    def transcript_grew(self, agent: str) -> None:
        if agent == self.agent:
            self.query_one(Transcript).follow(self.host.transcript(agent))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("toggle_board", "toggle_filter"):
            return False  # the board and the feed are on the leader view
        if action == "back":  # esc leaves the input first, then closes a search
            return not self.typing and not self.search.is_open
        if action == "focus_input" and parameters == ("enter",):
            return not self.typing and self.input_widget() is not None and not self.search.focused
        return super().check_action(action, parameters)

    def _show_pending(self) -> None:
        """The request ``a``/``r``/``v`` answer, on the "needs you" line."""
        self.show_needs()

    def focus_moved(self) -> None:
        super().focus_moved()
        if self.is_mounted:
            self._show_pending()

    def focus_keys(self) -> None:
        self.query_one(Transcript).focus()

    def action_back(self) -> None:
        self.dismiss()

    @on(ComposeBox.Submitted, "#inject")
    def _inject(self, event: ComposeBox.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        snap = self.host.agent(self.agent)
        if snap is not None and snap.status in TERMINAL_STATUSES:
            ended = {"completed": "finished", "killed": "been killed"}.get(snap.status, snap.status)
            self.notify(f"message not sent: {self.agent} has {ended}", severity="warning")
            return  # the text stays: copy it, or send it to someone else
        if self.send_to(self.agent, text).ok:
            event.box.clear()
            self.close_compose()  # sent: the keys act again

    @on(Roster.Selected)
    def _selected(self, event: Roster.Selected) -> None:
        self.select(event.name)

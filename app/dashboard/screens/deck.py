"""What the leader and agent views share: the keys that steer the team and the answers to
approvals, kills and shutdowns.

Screens never read files and never call the runtime: they watch the app's reactives (see
``app.dashboard.screens.host.DeckHost``), post ``app.dashboard.messages`` up to change them, and
steer the team
through ``host.steering`` (``app.runtime.steering``), showing the ``Outcome`` it returns.
"""

from __future__ import annotations

from typing import cast

from textual import on, work
from textual.binding import Binding
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Input

from app.dashboard.messages import (
    ApprovalSettled,
    AskInterrupt,
    AskKill,
    AskShutdown,
    AskSpawn,
    FilterFeed,
    SelectAgent,
    ToggleBoard,
)
from app.dashboard.screens import modes
from app.dashboard.screens.confirm import ConfirmScreen
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.help import HelpScreen
from app.dashboard.screens.host import DeckHost
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.dashboard.screens.spawn_mode import spawn_mode_for
from app.dashboard.screens.view_search import SEARCH_KEYS, Searchable, ViewSearch
from app.display.values import FeedItem, HeaderInfo, teammates
from app.runtime.api import Approval
from app.runtime.by_files.status import moment_text
from app.runtime.events import TERMINAL_STATUSES, TranscriptEntry
from app.runtime.steering import READ_ONLY, Outcome, Steering, describe_request
from widgets.roster import Roster
from widgets.status_bar import StatusBar


class DeckScreen(Screen[None]):
    """Base class of ``LeaderScreen`` and ``AgentScreen``."""

    BINDINGS = [
        # Footer order: what matters most first (a narrow footer cuts the end).
        Binding("question_mark", "help", "Help", id="help"),
        Binding("f1", "help('typing')", "Help", id="help-typing"),
        *(
            Binding(str(n), f"jump({n})", f"Agent {n}", show=False, id=f"jump-{n}")
            for n in range(10)
        ),
        Binding("a", "approve", "Approve", id="approve"),
        Binding("r", "reject", "Reject", id="reject"),
        Binding("v", "review", "Review", id="review"),
        Binding("s", "shutdown", "Shutdown", id="shutdown"),
        Binding("K", "kill", "Kill", id="kill"),
        Binding("f", "toggle_filter", "Filter", show=False, id="filter"),
        Binding("i", "focus_input", "Type", id="focus-input"),
        Binding("ctrl+t", "toggle_board", "Board", id="toggle-board"),
        Binding("shift+down", "select(1)", "Next", key_display="⇧↓", id="select-next"),
        Binding("shift+up", "select(-1)", "Prev", key_display="⇧↑", id="select-prev"),
        modes.BINDING,
        *SEARCH_KEYS,
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | shift+up/down | Select the previous/next agent. |
    | 0-9 | Jump to the lead (0) or a teammate (1-9). |
    | a / r | Approve / reject the selected teammate's oldest request. |
    | v | Review that request in its dialog. |
    | s / K | Ask the selected teammate to shut down / kill it. |
    | f | Filter the feed by the selected agent. |
    | i | Type into the view's input (esc leaves it). |
    | ctrl+t | Toggle the task board. |
    | ? (f1 while typing) | Help. |
    | shift+tab | Cycle the lead's permission mode. |
    | / | Search the feed (agent view: the transcript) as you type; enter: keys again. |
    | n / N | With a search: the next / previous matching line. |
    | escape | Close the search (everything shown again). |

    Single-letter keys act only while no input has focus (typing never fires them), and the
    footer shows only the keys that work from where focus is.
    """

    #: Actions of keys a person could type: off (and not in the footer) while typing.
    LETTER_ACTIONS = frozenset(
        {
            "approve",
            "reject",
            "review",
            "shutdown",
            "kill",
            "toggle_filter",
            "jump",
            "focus_input",
            "search",
            "hit",
        }
    )

    # ------------------------------------------------------------------ access

    @property
    def host(self) -> DeckHost:
        return cast(DeckHost, self.app)

    @property
    def steering(self) -> Steering:
        return self.host.steering

    # ------------------------------------------------------------------ typing or keys

    _asked: str | None = None

    @property
    def selection(self) -> str | None:
        """The selected agent, counting a selection asked for that the app has not taken
        yet: keys typed fast ("3a") act on what the person just selected."""
        return self._asked if self._asked is not None else self.host.selected

    def select(self, name: str) -> None:
        """Ask the app to select ``name``."""
        self._asked = name
        self.post_message(SelectAgent(name))

    def selection_shown(self) -> None:
        """The app's selection changed (the views call this from their watchers)."""
        self._asked = None

    @property
    def search(self) -> ViewSearch:
        """The view's search (``/``)."""
        found: ViewSearch | None = getattr(self, "_search", None)
        if found is None:
            found = self._search = ViewSearch(self, self.search_target, self.focus_keys)
        return found

    def search_target(self) -> Searchable | None:
        """The widget ``/`` searches (the leader view's feed, the agent view's transcript)."""
        return None

    @property
    def typing(self) -> bool:
        """An input has focus: keys are text, not commands."""
        return isinstance(self.focused, Input)

    def input_widget(self) -> Input | None:
        """The view's input (``None`` when it has none or it is disabled)."""
        found = [w for w in self.query(Input) if w.id != "search"]
        widget = found[0] if found else None
        return widget if widget is not None and not widget.disabled else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "help":
            return (parameters == ("typing",)) == self.typing
        if action == "leave_input":
            return self.typing and not self.search.focused
        if action == "focus_input":
            return not self.typing and self.input_widget() is not None
        if action == "close_search":
            return self.search.is_open
        if action == "hit" and not self.search.active:
            return False
        if action == "search" and self.search_target() is None:
            return False
        if action in self.LETTER_ACTIONS:
            return not self.typing
        return True

    # ------------------------------------------------------------------ search (``/``)

    def action_search(self) -> None:
        self.search.open()

    def action_hit(self, step: int) -> None:
        self.search.hit(step)

    def action_close_search(self) -> None:
        self.search.close()

    @on(Input.Changed, "#search")
    def _search_typed(self, event: Input.Changed) -> None:
        event.stop()
        self.search.typed(event.value)

    @on(Input.Submitted, "#search")
    def _search_done(self, event: Input.Submitted) -> None:
        event.stop()
        self.search.submitted()

    def on_descendant_focus(self) -> None:
        self.focus_moved()

    def on_descendant_blur(self) -> None:
        self.focus_moved()

    def focus_moved(self) -> None:
        """Focus moved inside the view: the footer shows what works from there."""
        self.refresh_bindings()

    def action_focus_input(self) -> None:
        widget = self.input_widget()
        if widget is not None:
            widget.focus()

    def action_leave_input(self) -> None:
        """Leave the input: single-letter keys work again."""
        self.focus_keys()

    def focus_keys(self) -> None:
        """Focus the view's main panel (where single-letter keys act)."""
        self.query_one(Roster).focus()

    # ------------------------------------------------------------------ hooks for subclasses

    def on_text(self, agent: str, text: str) -> None:
        """Streamed text of ``agent`` (already batched)."""

    def on_entry(self, entry: TranscriptEntry) -> None:
        """A whole transcript entry."""

    def run_finished(self, reason: str, ok: bool) -> None:
        """The run ended (the team is done): show it where the lead's report is."""

    def on_hooks(self, items: list[tuple[str | None, FeedItem]]) -> None:
        """Team hooks that blocked or warned, as feed lines (with their team)."""

    def transcript_grew(self, agent: str) -> None:
        """``agent``'s transcript, read from its session file, changed (a viewer)."""

    def show_header(self, header: HeaderInfo) -> None:
        """Redraw the header line (watches ``host.header``)."""
        stale_text = "" if header.stale_since is None else moment_text(header.stale_since)
        self.query_one(StatusBar).show(
            team=header.team,
            model=header.model,
            teammates=header.teammates,
            open_tasks=header.open_tasks,
            approvals=header.approvals,
            read_only=header.read_only,
            demo=header.demo,
            error=header.error,
            mode=header.mode,
            cost=header.cost,
            stale="" if header.stale_since is None else f"stale since {stale_text}",
        )

    def tick(self) -> None:
        """Once a second: redraw elapsed times."""
        for roster in self.query(Roster):
            roster.tick()

    def selected_approval(self) -> Approval | None:
        """The request ``a``/``r``/``v`` answer: the selected agent's oldest, else none (never
        someone else's)."""
        return next((a for a in self.host.approvals if a.agent == self.selection), None)

    def _no_request(self) -> None:
        if self.steering.read_only:
            self.notify(READ_ONLY, severity="warning")
            return
        name = self.selection or "nobody"
        self.notify(f"{name} has no pending request.", severity="warning")

    def request_hint(self, agent: str) -> str:
        """The keys that answer ``agent``'s request from where the person is now."""
        steps: list[str] = []
        if self.typing:
            steps.append("esc")
        if self.selection != agent:
            others = teammates(self.host.agents)
            number = next((i for i, a in enumerate(others, 1) if a.name == agent), 0)
            steps.append(f"{number} selects {agent}" if 1 <= number <= 9 else f"select {agent}")
        keys = "a approve · r reject · v review"
        return f"{', then '.join(steps)}, then {keys}" if steps else keys

    def action_cycle_mode(self) -> None:
        modes.cycle_lead_mode(self)

    # ------------------------------------------------------------------ selection

    def action_select(self, step: int) -> None:
        names = [a.name for a in self.host.agents]
        if not names:
            return
        selected = self.selection
        index = names.index(selected) if selected in names else -step
        self.select(names[(index + step) % len(names)])

    def action_jump(self, number: int) -> None:
        agents = self.host.agents
        if number == 0:
            target = next((a for a in agents if a.is_lead), None)
        else:
            others = teammates(agents)
            target = others[number - 1] if number <= len(others) else None
        if target is None:
            self.notify(f"No agent {number}.", severity="warning")
            return
        self.select(target.name)

    def action_toggle_filter(self) -> None:
        host = self.host
        self.post_message(FilterFeed(None if host.feed_filter else self.selection))

    def action_toggle_board(self) -> None:
        self.post_message(ToggleBoard())

    def action_help(self, _: str = "") -> None:
        self.app.push_screen(HelpScreen())

    # ------------------------------------------------------------------ steering

    def report(self, outcome: Outcome, *, quiet: bool = False) -> Outcome:
        """Show ``outcome`` (a success only unless ``quiet``); returns it."""
        if outcome.failed:
            self.notify(escape(outcome.message), title="Failed", severity="error")
        elif not outcome.ok:
            self.notify(escape(outcome.message), severity="warning")
        elif not quiet:
            self.notify(escape(outcome.message))
        return outcome

    def _teammate(self, verb: str) -> str | None:
        agent = self.host.agent(self.selection)
        if agent is None or agent.is_lead:
            self.notify(f"Select a teammate to {verb} (shift+up/down).", severity="warning")
            return None
        return agent.name

    def action_approve(self) -> None:
        approval = self.selected_approval()
        if approval is None:
            self._no_request()
            return
        self.answer(approval, "approve")

    def action_review(self) -> None:
        approval = self.selected_approval()
        if approval is None:
            self._no_request()
            return
        self.open_approval(approval)

    @work(group="ui", exit_on_error=False)
    async def action_reject(self) -> None:
        approval = self.selected_approval()
        if approval is None:
            self._no_request()
            return
        if approval.kind == "permission":
            self.deny(approval)
            return
        if approval.kind == "plan":
            ask = FeedbackScreen(
                f"Feedback for {approval.agent}'s plan",
                placeholder="what should change (sent to the teammate)",
            )
        else:
            ask = FeedbackScreen(
                f"Why should {approval.agent} keep working?",
                placeholder="reason for rejecting the shutdown",
            )
        text = await self.app.push_screen_wait(ask)
        if text is not None:
            self.answer(approval, "reject", text)

    def answer(self, approval: Approval, action: str, text: str = "") -> None:
        """Answer ``approval``: approve | reject (with ``text``) | allow | always | deny."""
        steering = self.steering
        match action:
            case "approve":
                outcome = steering.approve(approval)
            case "reject":
                outcome = steering.reject(approval, text)
            case "allow" | "always":
                outcome = steering.allow(approval, always=action == "always")
            case _:
                outcome = steering.deny(approval, text or None)
        self.report(outcome)
        if outcome.settled:
            self.post_message(ApprovalSettled(approval.request_id))

    @work(group="ui", exit_on_error=False)
    async def deny(self, approval: Approval) -> None:
        """Deny a permission request; where the answer can carry words (a Claude Code team),
        first ask for an optional reason (enter alone: none; esc: not denied after all)."""
        feedback: str | None = ""
        if self.steering.denial_feedback:
            feedback = await self.app.push_screen_wait(
                FeedbackScreen(
                    f"Deny {describe_request(approval)}: tell {approval.agent} why (optional)",
                    placeholder="why, or what to do instead (sent to the teammate)",
                    hint="enter denies (empty: no reason) · esc cancels",
                    allow_empty=True,
                )
            )
        if feedback is not None:
            self.answer(approval, "deny", feedback)

    @work(group="ui", exit_on_error=False)
    async def open_approval(self, approval: Approval) -> None:
        """Review ``approval`` in its modal, then answer it as decided there."""
        if approval.kind == "permission":
            choice = await self.app.push_screen_wait(PermissionScreen(approval))
            if choice == "deny":
                self.deny(approval)
            elif choice:
                self.answer(approval, choice)
            return
        decision = await self.app.push_screen_wait(PlanReviewScreen(approval))
        if decision is not None:
            self.answer(approval, decision[0], decision[1])

    def action_shutdown(self) -> None:
        name = self._teammate("shut down")
        if name is not None:
            self.post_message(AskShutdown(name))

    @on(AskShutdown)
    def _ask_shutdown(self, message: AskShutdown) -> None:
        message.stop()
        agent = self.host.agent(message.name)
        if agent is not None and agent.status in TERMINAL_STATUSES:
            self.notify(f"{message.name} has already {agent.status}.", severity="warning")
            return
        self.report(self.steering.shutdown(message.name))

    @on(AskInterrupt)
    def _ask_interrupt(self, message: AskInterrupt) -> None:
        message.stop()
        self.report(self.steering.interrupt(message.name))

    def action_kill(self) -> None:
        name = self._teammate("kill")
        if name is not None:
            self.post_message(AskKill(name))

    @on(AskKill)
    def _ask_kill(self, message: AskKill) -> None:
        message.stop()
        agent = self.host.agent(message.name)
        if agent is not None and agent.status in TERMINAL_STATUSES:
            self.notify(f"{message.name} has already {agent.status}.", severity="warning")
            return
        self.confirm_kill(message.name)

    @work(group="ui", exit_on_error=False)
    async def confirm_kill(self, name: str) -> None:
        if self.steering.read_only:
            self.notify(READ_ONLY, severity="warning")
            return
        question = f"Kill {name}? Its turn stops now; unfinished tasks go back to pending."
        if await self.app.push_screen_wait(ConfirmScreen(question, confirm_label="Kill")):
            self.report(self.steering.kill(name))

    @on(AskSpawn)
    def _ask_spawn(self, message: AskSpawn) -> None:
        message.stop()
        self.spawn_teammate()

    @work(group="ui", exit_on_error=False)
    async def spawn_teammate(self) -> None:
        if self.steering.read_only:
            self.notify(READ_ONLY, severity="warning")
            return
        name = await self.app.push_screen_wait(
            FeedbackScreen("Spawn a teammate: its name", placeholder="e.g. researcher")
        )
        if not name:
            return
        prompt = await self.app.push_screen_wait(
            FeedbackScreen(f"What should {name} do?", placeholder="the teammate's first prompt")
        )
        if not prompt:
            return
        mode = await spawn_mode_for(self.app, name)
        if mode is None:
            return
        self.report(await self.steering.spawn(name, prompt, mode))

    def send_to(self, agent: str, text: str) -> None:
        """The person's message: the lead gets it as a prompt, a teammate as injected mail."""
        self.report(self.steering.send(agent, text), quiet=True)

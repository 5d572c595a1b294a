"""What the leader and agent views share: the keys that steer the team and the answers to
approvals, kills and shutdowns.

Screens never read files and never call the runtime: they watch the app's reactives (see
``app.screens.host.DeckHost``), post ``app.messages`` up to change them, and steer the team
through ``host.steering`` (``app.runtime.steering``), showing the ``Outcome`` it returns.
"""

from __future__ import annotations

from typing import cast

from textual import on, work
from textual.binding import Binding
from textual.markup import escape
from textual.screen import Screen

from app.messages import (
    ApprovalSettled,
    AskInterrupt,
    AskKill,
    AskShutdown,
    AskSpawn,
    FilterFeed,
    SelectAgent,
    ToggleBoard,
)
from app.runtime.api import Approval
from app.runtime.events import TERMINAL_STATUSES, TranscriptEntry
from app.runtime.steering import READ_ONLY, Outcome, Steering
from app.screens import modes
from app.screens.confirm import ConfirmScreen
from app.screens.feedback import FeedbackScreen
from app.screens.help import HelpScreen
from app.screens.host import DeckHost
from app.screens.permission import PermissionScreen
from app.screens.plan_review import PlanReviewScreen
from app.view_state import HeaderInfo, teammates
from widgets.roster import Roster
from widgets.status_bar import StatusBar


class DeckScreen(Screen[None]):
    """Base class of ``LeaderScreen`` and ``AgentScreen``."""

    BINDINGS = [
        Binding("shift+down", "select(1)", "Next", id="select-next"),
        Binding("shift+up", "select(-1)", "Prev", id="select-prev"),
        *(
            Binding(str(n), f"jump({n})", f"Agent {n}", show=False, id=f"jump-{n}")
            for n in range(10)
        ),
        Binding("a", "approve", "Approve", id="approve"),
        Binding("r", "reject", "Reject", id="reject"),
        Binding("s", "shutdown", "Shutdown", id="shutdown"),
        Binding("K", "kill", "Kill", id="kill"),
        Binding("f", "toggle_filter", "Filter", show=False, id="filter"),
        Binding("ctrl+t", "toggle_board", "Board", id="toggle-board"),
        Binding("question_mark", "help", "Help", id="help"),
        modes.BINDING,
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | shift+up/down | Select the previous/next agent. |
    | 0-9 | Jump to the lead (0) or a teammate (1-9). |
    | a / r | Approve / reject the selected (else oldest) request. |
    | s / K | Ask the selected teammate to shut down / kill it. |
    | f | Filter the feed by the selected agent. |
    | ctrl+t | Toggle the task board. |
    | ? | Help. |
    | shift+tab | Cycle the lead's permission mode. |
    """

    # ------------------------------------------------------------------ access

    @property
    def host(self) -> DeckHost:
        return cast(DeckHost, self.app)

    @property
    def steering(self) -> Steering:
        return self.host.steering

    # ------------------------------------------------------------------ hooks for subclasses

    def on_text(self, agent: str, text: str) -> None:
        """Streamed text of ``agent`` (already batched)."""

    def on_entry(self, entry: TranscriptEntry) -> None:
        """A whole transcript entry."""

    def show_header(self, header: HeaderInfo) -> None:
        """Redraw the header line (watches ``host.header``)."""
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
        )

    def tick(self) -> None:
        """Once a second: redraw elapsed times."""
        for roster in self.query(Roster):
            roster.tick()

    def selected_approval(self) -> Approval | None:
        """The request ``a``/``r`` answer: by default the selected agent's, else the oldest."""
        approvals = self.host.approvals
        mine = [a for a in approvals if a.agent == self.host.selected]
        chosen = mine or list(approvals)
        return chosen[0] if chosen else None

    def action_cycle_mode(self) -> None:
        modes.cycle_lead_mode(self)

    # ------------------------------------------------------------------ selection

    def action_select(self, step: int) -> None:
        names = [a.name for a in self.host.agents]
        if not names:
            return
        selected = self.host.selected
        index = names.index(selected) if selected in names else -step
        self.post_message(SelectAgent(names[(index + step) % len(names)]))

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
        self.post_message(SelectAgent(target.name))

    def action_toggle_filter(self) -> None:
        host = self.host
        self.post_message(FilterFeed(None if host.feed_filter else host.selected))

    def action_toggle_board(self) -> None:
        self.post_message(ToggleBoard())

    def action_help(self) -> None:
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
        agent = self.host.agent(self.host.selected)
        if agent is None or agent.is_lead:
            self.notify(f"Select a teammate to {verb} (shift+up/down).", severity="warning")
            return None
        return agent.name

    def action_approve(self) -> None:
        approval = self.selected_approval()
        if approval is None:
            self.notify("Nothing to approve.", severity="warning")
            return
        self.answer(approval, "approve")

    @work(group="ui", exit_on_error=False)
    async def action_reject(self) -> None:
        approval = self.selected_approval()
        if approval is None:
            self.notify("Nothing to reject.", severity="warning")
            return
        if approval.kind == "permission":
            self.answer(approval, "deny")
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
    async def open_approval(self, approval: Approval) -> None:
        """Review ``approval`` in its modal, then answer it as decided there."""
        if approval.kind == "permission":
            choice = await self.app.push_screen_wait(PermissionScreen(approval))
            if choice:
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
        self.report(await self.steering.spawn(name, prompt))

    def send_to(self, agent: str, text: str) -> None:
        """The person's message: the lead gets it as a prompt, a teammate as injected mail."""
        self.report(self.steering.send(agent, text), quiet=True)

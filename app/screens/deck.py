"""What the leader and agent views share: the keys that steer the team and the answers to
approvals, kills and shutdowns (every runtime call the person makes goes through here).

Screens never read files: they take state from ``app.deck`` (a ``DeckState``) when the app
tells them what changed (``refresh_deck``), and runtime calls go to ``app.runtime``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual import work
from textual.binding import Binding
from textual.markup import escape
from textual.screen import Screen

from app.runtime.api import Approval
from app.runtime.events import TERMINAL_STATUSES, TranscriptEntry
from app.screens.confirm import ConfirmScreen
from app.screens.feedback import FeedbackScreen
from app.screens.help import HelpScreen
from app.screens.permission import PermissionScreen
from app.screens.plan_review import PlanReviewScreen
from widgets.roster import Roster
from widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from app.app import TeamDeckApp
    from app.runtime.api import RuntimeAPI
    from app.store import DeckState

ALL_PARTS = frozenset({"agents", "approvals", "header", "filter", "board"})
READ_ONLY = "Read-only viewer: there is no runtime here to answer that."


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
    """

    # ------------------------------------------------------------------ access

    @property
    def deck_app(self) -> TeamDeckApp:
        return cast("TeamDeckApp", self.app)

    @property
    def deck(self) -> DeckState:
        return self.deck_app.deck

    @property
    def runtime(self) -> RuntimeAPI | None:
        return self.deck_app.runtime

    # ------------------------------------------------------------------ hooks for subclasses

    def refresh_deck(self, parts: frozenset[str] | set[str]) -> None:
        """Redraw the named parts of the view from ``self.deck``."""

    def on_text(self, agent: str, text: str) -> None:
        """Streamed text of ``agent`` (already batched)."""

    def on_entry(self, entry: TranscriptEntry) -> None:
        """A whole transcript entry."""

    def show_status(self) -> None:
        """Redraw the header line from ``self.deck``."""
        deck = self.deck
        self.query_one(StatusBar).show(
            team=f"{deck.team} (deleted)" if deck.team and deck.removed else deck.team,
            model=deck.model_description,
            teammates=len(deck.teammates),
            open_tasks=deck.open_tasks,
            approvals=len(deck.approvals),
            read_only=deck.read_only,
            demo=deck.demo,
            error=deck.config_error,
        )

    def tick(self) -> None:
        """Once a second: redraw elapsed times."""
        for roster in self.query(Roster):
            roster.tick()

    def selected_approval(self) -> Approval | None:
        """The request ``a``/``r`` answer: by default the selected agent's, else the oldest."""
        approvals = self.deck.approvals
        mine = [a for a in approvals if a.agent == self.deck.selected]
        chosen = mine or approvals
        return chosen[0] if chosen else None

    # ------------------------------------------------------------------ selection

    def action_select(self, step: int) -> None:
        names = self.deck.names
        if not names:
            return
        index = names.index(self.deck.selected) if self.deck.selected in names else -step
        self.deck_app.select_agent(names[(index + step) % len(names)])

    def action_jump(self, number: int) -> None:
        agents = self.deck.agents
        if number == 0:
            target = next((a for a in agents if a.is_lead), None)
        else:
            teammates = self.deck.teammates
            target = teammates[number - 1] if number <= len(teammates) else None
        if target is None:
            self.notify(f"No agent {number}.", severity="warning")
            return
        self.deck_app.select_agent(target.name)

    def action_toggle_filter(self) -> None:
        self.deck_app.set_feed_filter(None if self.deck.feed_filter else self.deck.selected)

    def action_toggle_board(self) -> None:
        self.deck.board_visible = not self.deck.board_visible
        self.deck_app.broadcast({"board"})

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    # ------------------------------------------------------------------ runtime calls

    def _call(self, what: str, method: str, *args: Any) -> str | None:
        """Call ``runtime.method(*args)``; errors become notifications, never crashes."""
        runtime = self.runtime
        if runtime is None:
            self.notify(READ_ONLY, severity="warning")
            return None
        try:
            answer = getattr(runtime, method)(*args)
        except Exception as exc:  # the runtime's error is the person's information
            self.notify(escape(f"{what}: {exc}"), title="Failed", severity="error")
            return None
        finally:
            self.deck_app.pull_approvals()
        return "" if answer is None else str(answer)

    def _report(self, what: str, answer: str | None) -> None:
        if answer is None:
            return
        bad = answer.startswith(("already", "unknown", "not ", "no "))
        self.notify(
            escape(f"{what}: {answer}" if answer else what),
            severity="warning" if bad else "information",
        )

    def _teammate(self, verb: str) -> str | None:
        name = self.deck.selected
        agent = self.deck.agent(name)
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
        rid = approval.request_id
        if approval.kind == "plan":
            if action == "approve":
                answer = self._call("approve plan", "approve_plan", rid)
            else:
                answer = self._call("reject plan", "reject_plan", rid, text)
        elif approval.kind == "shutdown":
            if action == "approve":
                answer = self._call("approve shutdown", "approve_shutdown", rid)
            else:
                answer = self._call("reject shutdown", "reject_shutdown", rid, text)
        else:
            allow = action in ("approve", "allow", "always")
            answer = self._call("permission", "answer_permission", rid, allow, action == "always")
        self._report(approval.title, answer)

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
            self.request_shutdown(name)

    def request_shutdown(self, name: str) -> None:
        agent = self.deck.agent(name)
        if agent is not None and agent.status in TERMINAL_STATUSES:
            self.notify(f"{name} has already {agent.status}.", severity="warning")
            return
        self._report(f"shutdown {name}", self._call("shutdown", "request_shutdown", name))

    def interrupt(self, name: str) -> None:
        self._report(f"interrupted {name}", self._call("interrupt", "interrupt", name))

    def action_kill(self) -> None:
        name = self._teammate("kill")
        if name is not None:
            self.confirm_kill(name)

    @work(group="ui", exit_on_error=False)
    async def confirm_kill(self, name: str) -> None:
        if self.runtime is None:
            self.notify(READ_ONLY, severity="warning")
            return
        question = f"Kill {name}? Its turn stops now; unfinished tasks go back to pending."
        if await self.app.push_screen_wait(ConfirmScreen(question, confirm_label="Kill")):
            self._report(f"killed {name}", self._call("kill", "kill", name))

    @work(group="ui", exit_on_error=False)
    async def spawn_teammate(self) -> None:
        if self.runtime is None:
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
        try:
            answer = await self.runtime.spawn_teammate(name, prompt)
        except Exception as exc:
            self.notify(escape(f"spawn {name}: {exc}"), title="Failed", severity="error")
            return
        self._report(f"spawn {name}", answer)
        self.deck_app.pull_agents()

    def send_to(self, agent: str, text: str) -> None:
        """The person's message: the lead gets it as a prompt, a teammate as injected mail."""
        agent_snap = self.deck.agent(agent)
        if agent_snap is None or agent_snap.is_lead:
            self._call("send", "submit", text)
        else:
            self._call("send", "inject_message", agent, text)

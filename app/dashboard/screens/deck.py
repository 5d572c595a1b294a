"""What the leader and agent views share: their keys (``app.dashboard.keys``, in footer order)
and the steering ones among them, the answers to approvals, kills and shutdowns. The rest of
what the views share (typing or keys, search, selection, header) is ``DeckView``'s.

Screens never read files and never call the runtime: they watch the app's reactives (see
``app.dashboard.screens.host.DeckHost``), post ``app.dashboard.messages`` up to change them, and
steer the team
through ``host.steering`` (``app.runtime.steering``), showing the ``Outcome`` it returns.
"""

from __future__ import annotations

import time
from dataclasses import replace

from textual import on, work
from textual.binding import ActiveBinding
from textual.widgets import Footer

from app.dashboard import keys
from app.dashboard.event_burst import answer_keys
from app.dashboard.messages import (
    ApprovalSettled,
    AskInterrupt,
    AskKill,
    AskShutdown,
    AskSpawn,
)
from app.dashboard.review import agent_work, edit_diff, project_folder
from app.dashboard.screens.confirm import ConfirmScreen
from app.dashboard.screens.deck_view import DeckView
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.dashboard.screens.spawn_mode import spawn_mode_for
from app.dashboard.screens.work_review import WorkReviewScreen
from app.display.values import request_label, teammates
from app.runtime.api import Approval
from app.runtime.events import TERMINAL_STATUSES
from app.runtime.steering import READ_ONLY, Outcome, describe_request
from widgets.agent_text import agent_markup
from widgets.footer import fit_keys, palette_fits
from widgets.needs_you import NeedsYou

#: The "needs you" line of ``--claude`` while Claude Code's home has no team: what to do, in
#: one line that fits 80 columns (an empty dashboard said nothing, issue 30).
NO_CLAUDE_TEAM = "No Claude Code team yet: start Claude Code; 2.1.332+: teamdeck claude setup"

#: The footer's keys that act on a running team: not offered once the run is over (issue 30).
RUN_KEYS = frozenset({"approve", "reject", "review", "shutdown", "kill"})

#: Seconds a second ``s`` for the same teammate is refused (its answer is on its way).
SHUTDOWN_PENDING = 30.0

#: The footer's keys, most needed first: a footer too narrow for all drops whole keys from
#: the end of this list (they still work; ``?`` lists them), never a word of one.
FOOTER_PRIORITY = (
    "help",
    "help-typing",
    "leave-input",
    "back",
    "close-search",
    "approve",
    "reject",
    "review",
    "shutdown",
    "kill",
    "focus-input",
    "toggle-board",
    "select-next",
    "select-prev",
)


class DeckScreen(DeckView):
    """Base class of ``LeaderScreen`` and ``AgentScreen``."""

    BINDINGS = [
        # Footer order: what matters most first (a narrow footer cuts the end).
        keys.HELP.binding(),
        keys.HELP_TYPING.binding(),
        keys.BACK_TO_INPUT.binding("focus-input"),
        *keys.JUMP.bindings,
        keys.APPROVE.binding(),
        keys.REJECT.binding(),
        keys.REVIEW.binding(),
        keys.WORK.binding(),
        keys.SHUTDOWN.binding(),
        keys.KILL.binding(),
        keys.FILTER.binding(),
        keys.BOARD.binding(),
        *keys.SELECT.bindings,
        keys.MODE.binding(),
        *keys.SEARCH_KEYS,
        keys.CTRL_C.binding(),
    ]

    # ------------------------------------------------------------------ requests

    def selected_approval(self) -> Approval | None:
        """The request ``a``/``r``/``v`` answer: the selected agent's oldest, else the oldest
        the person can answer (a plan or a permission: a shutdown request is its teammate's).
        It is never a surprise: the queue highlights it and the footer names it."""
        pending = self.host.approvals
        own = next((a for a in pending if a.agent == self.selection), None)
        return own or next((a for a in pending if a.kind != "shutdown"), None)

    #: The request the "needs you" line names (``show_needs``): the one a / r / v answer.
    _named_id: str | None = None

    def named_request(self) -> Approval | None:
        """The request ``a``/``r``/``v`` answer: the one the "needs you" line names, if it is
        still pending; never another one (a request that came meanwhile is named first)."""
        return next((a for a in self.host.approvals if a.request_id == self._named_id), None)

    def show_needs(self) -> None:
        """Name on the "needs you" line the request ``a``/``r``/``v`` answer."""
        target = self.selected_approval()
        self._named_id = None if target is None else target.request_id
        for line in self.view_widgets(NeedsYou):
            if target is None:
                idle = "read-only: nothing to answer" if self.steering.read_only else ""
                if self.host.home.is_claude and self.host.files.team is None:
                    idle = NO_CLAUDE_TEAM  # what to do, not an empty dashboard (issue 30)
                line.show(None, idle=idle or "nothing needs you")
                continue
            keys = answer_keys(target.kind)
            others = sum(1 for a in self.host.approvals if a.kind != "shutdown") - 1
            line.show(
                request_label(target, detail=0 if self.narrow else 24),
                since=target.created_at,
                now=self.host.clock(),
                keys=keys,
                more=max(0, others),
            )

    def _no_request(self) -> None:
        if self.steering.read_only:
            self.notify(READ_ONLY, severity="warning")
            return
        self.notify("No pending request to answer.", severity="warning")

    def request_hint(self, agent: str, kind: str) -> str:
        """The keys that answer ``agent``'s request of ``kind`` from where the person is now."""
        steps: list[str] = []
        if self.typing:
            steps.append("esc")
        target = self.selected_approval()
        if self.selection != agent and (target is None or target.agent != agent):
            others = teammates(self.host.agents)
            number = next((i for i, a in enumerate(others, 1) if a.name == agent), 0)
            steps.append(f"press {number} ({agent})" if 1 <= number <= 9 else f"select {agent}")
        keys = answer_keys(kind)
        return f"{', then '.join(steps)}, then {keys}" if steps else keys

    #: Below this many columns the footer takes its short form (``fit_footer``).
    NARROW = 100

    @property
    def narrow(self) -> bool:
        return 0 < self.app.size.width < self.NARROW

    def on_resize(self) -> None:
        self.fit_footer()

    def on_screen_resume(self) -> None:
        self.fit_footer()  # the terminal may have been resized under a dialog

    def fit_footer(self) -> None:
        """The footer's short form at a narrow width, so that the steering keys (a, r, v, s,
        K) stay: compact spacing, no ``^p palette`` (on the help screen) and ``a``'s request
        in fewer words ("a approve researcher: Bash")."""
        narrow = self.narrow
        for footer in self.query(Footer):
            footer.compact = narrow
            footer.show_command_palette = not narrow
        self.refresh_bindings()

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The footer's keys; ``a`` names the request it answers ("a approve researcher:
        Bash(wc -l …)"); see ``fit_footer`` for a narrow footer."""
        found = super().active_bindings
        narrow = self.narrow
        for binding_key, lever in (("K", "kill"),):  # still answer: they say why not
            shown = found.get(binding_key)
            if shown is not None and self.steering.unavailable(lever) is not None:
                found[binding_key] = shown._replace(binding=replace(shown.binding, show=False))
        if self.run_over:  # nothing left to answer or stop: the keys still say so if pressed
            for key, active in list(found.items()):
                if active.binding.id in RUN_KEYS:
                    found[key] = active._replace(binding=replace(active.binding, show=False))
        return self._fit(found, narrow)

    @property
    def run_over(self) -> bool:
        """No team to steer (it was deleted, or there is none yet: the first screen, ``--claude``
        before Claude Code made one) and nothing waits for an answer."""
        files = self.host.files
        return (files.removed or files.team is None) and not self.host.approvals

    def _fit(self, found: dict[str, ActiveBinding], narrow: bool) -> dict[str, ActiveBinding]:
        """Hide the keys that do not fit the footer's width, least needed first."""
        rank = {name: i for i, name in enumerate(FOOTER_PRIORITY)}
        fitted = fit_keys(
            self.app,
            found,
            lambda binding: rank.get(binding.id or "", len(rank)),
            compact=narrow,
            palette=not narrow,
        )
        if narrow:  # ``^p palette`` where the keys leave it room (after a run, in a dialog's)
            palette = palette_fits(self.app, fitted)
            for footer in self.query(Footer):
                footer.show_command_palette = palette
        return fitted

    def select(self, name: str) -> None:
        super().select(name)
        if self.is_mounted:
            self.show_needs()  # "3a" typed fast: a answers what 3 made the line name

    _footer_run_over = False

    def tick(self) -> None:
        super().tick()
        self.show_needs()  # how long it has waited
        if self.run_over != self._footer_run_over:  # the footer drops (offers again) a/r/v/s/K
            self._footer_run_over = self.run_over
            self.refresh_bindings()

    # ------------------------------------------------------------------ steering

    def report(self, outcome: Outcome, *, quiet: bool = False) -> Outcome:
        """Show ``outcome`` (a success only unless ``quiet``); returns it. What the steering
        changed is drawn now, not on the views' next beat (``app.dashboard.view_beat``)."""
        self.host.flush_runtime()
        if outcome.failed:
            self.notify(agent_markup(outcome.message), title="Failed", severity="error")
        elif not outcome.ok:
            self.notify(agent_markup(outcome.message), severity="warning")
        elif not quiet:
            self.notify(agent_markup(outcome.message))
        return outcome

    def _teammate(self, verb: str) -> str | None:
        agent = self.host.agent(self.selection)
        if agent is None or agent.is_lead:
            self.notify(f"Select a teammate to {verb} (shift+up/down).", severity="warning")
            return None
        return agent.name

    def action_approve(self) -> None:
        approval = self.named_request()
        if approval is None:
            self._no_request()
            return
        self.answer(approval, "approve")

    def action_review(self) -> None:
        approval = self.named_request()
        if approval is None:
            self._no_request()
            return
        self.open_approval(approval)

    @work(group="ui", exit_on_error=False)
    async def action_reject(self) -> None:
        approval = self.named_request()
        if approval is None:
            self._no_request()
            return
        self.reject_request(approval)

    @work(group="ui", exit_on_error=False)
    async def reject_request(self, approval: Approval) -> None:
        """Reject ``approval``: asks for plan feedback, a shutdown reason, or why a
        permission is denied."""
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
        """Deny a permission request, first asking for an optional reason (enter alone: none;
        esc: not denied after all); the teammate reads it as the person's."""
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
        project = project_folder(self.host.runtime)
        if approval.kind == "permission":
            diff = await edit_diff(approval, self.host.agent(approval.agent), project)
            dialog = PermissionScreen(approval, diff)
            choice = await self.app.push_screen_wait(dialog)
            if choice == "deny":
                self.deny(approval)
            elif choice:  # the rule picked and the command as edited in the dialog
                self.answer(dialog.chosen(), choice)
            return
        touched: list[str] | str | None = None
        agent = self.host.agent(approval.agent)
        if approval.kind == "plan" and agent is not None:
            work = await agent_work(agent, project)
            touched = work if isinstance(work, str) else [f.summary for f in work]
        decision = await self.app.push_screen_wait(PlanReviewScreen(approval, touched))
        if decision is not None:
            self.answer(approval, decision[0], decision[1])

    @work(group="ui", exit_on_error=False)
    async def action_work(self) -> None:
        """``d``: the selected agent's work so far; a / r / v there answer its request."""
        agent = self.host.agent(self.selection)
        if agent is None:
            self.notify("Select an agent first (shift+up/down).", severity="warning")
            return
        files = await agent_work(agent, project_folder(self.host.runtime))
        pending = next((a for a in self.host.approvals if a.agent == agent.name), None)
        request = describe_request(pending) if pending is not None else None
        choice = await self.app.push_screen_wait(WorkReviewScreen(agent.name, files, request))
        if pending is None or choice is None:
            return
        if choice == "approve":
            self.answer(pending, "approve")
        elif choice == "review":
            self.open_approval(pending)
        elif pending.kind == "permission":
            self.deny(pending)
        else:
            self.reject_request(pending)

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
        self.confirm_shutdown(message.name)

    @work(group="ui", exit_on_error=False)
    async def confirm_shutdown(self, name: str) -> None:
        """``s`` asks first; a second request while the first one's answer is on its way is
        refused (the teammate would get two)."""
        asked: dict[str, float] = self.app.__dict__.setdefault("_shutdown_asked", {})
        since = time.monotonic() - asked.get(name, -SHUTDOWN_PENDING)
        if since < SHUTDOWN_PENDING:
            self.notify(
                f"Already asked {name} to shut down {int(since)} s ago: waiting for its answer.",
                severity="warning",
            )
            return
        question = f"Ask {name} to shut down? y/n"
        if not await self.app.push_screen_wait(ConfirmScreen(question, confirm_label="Ask")):
            return
        agent = self.host.agent(name)
        if agent is not None and agent.status in TERMINAL_STATUSES:
            self.notify(f"{name} has already {agent.status}.", severity="warning")
            return
        if self.report(self.steering.shutdown(name)).ok:
            asked[name] = time.monotonic()

    @on(AskInterrupt)
    def _ask_interrupt(self, message: AskInterrupt) -> None:
        message.stop()
        self.report(self.steering.interrupt(message.name))

    def action_kill(self) -> None:
        why = self.steering.unavailable("kill")
        if why is not None:  # said at once: never a question about a kill that cannot happen
            self.notify(agent_markup(why), severity="warning")
            return
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
        why = self.steering.unavailable("kill")
        if why is not None:
            self.notify(agent_markup(why), severity="warning")
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
        why = self.steering.unavailable("spawn")
        if why is not None:  # before the dialog asks anything
            self.notify(agent_markup(why), severity="warning")
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

    def send_to(self, agent: str, text: str) -> Outcome:
        """The person's message: the lead gets it as a prompt, a teammate as injected mail."""
        return self.report(self.steering.send(agent, text), quiet=True)

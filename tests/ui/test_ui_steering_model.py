"""One steering model a newcomer guesses right (issue 19): typed text is never a command, ``r``
asks why in every mode, what ``a``/``r``/``v`` answer is shown before the key is pressed."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from app.dashboard.app import TeamDeckApp
from app.dashboard.messages import OpenAgent
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.permission import PermissionScreen
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for
from widgets.approvals import ApprovalsQueue
from widgets.compose_box import ComposeBox
from widgets.status_bar import StatusBar


async def loaded(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    await pilot.pause()
    return app


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in [*app._notifications, *app.waiting_toasts]]


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


def needs(app: TeamDeckApp) -> str:
    """The "needs you" line, above the footer."""
    return screen_text(app).splitlines()[-2]


def steering_calls(runtime: FakeRuntime) -> list[tuple[object, ...]]:
    return [c for c in runtime.calls if c[0] not in ("stop", "inject_message", "submit")]


# ---------------------------------------------------------------------- item 1


async def test_a_teammate_finishing_while_its_message_is_typed_takes_no_keys(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """The engineer (with a pending plan) completes while the person types to it: the input
    keeps focus and text, the rest of the letters are text (no a/r/v/s/K), and enter says the
    message was not sent, keeping the text."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        deck.post_message(OpenAgent("engineer"))
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        screen = deck.screen
        inject = screen.query_one("#inject", ComposeBox)
        await pilot.press("enter")  # the compose box
        await pilot.pause()
        await type_text(pilot, "plea")
        runtime.set_status("engineer", "completed")
        await wait_for(pilot, lambda: deck.agent("engineer").status == "completed")  # type: ignore[union-attr]
        await pilot.pause()
        await type_text(pilot, "se avrsK")
        await pilot.pause()
        assert deck.focused is inject and not inject.disabled
        assert inject.value == "please avrsK"
        assert steering_calls(runtime) == []
        await pilot.press("enter")
        await pilot.pause()
        assert ("inject_message", "engineer", "please avrsK") not in runtime.calls
        assert "message not sent: engineer has finished" in notes(deck)
        assert inject.value == "please avrsK" and deck.focused is inject


# ---------------------------------------------------------------------- item 2

PERM_ID = "perm-1767225650000@researcher"


async def test_r_on_a_permission_asks_why_and_credits_the_person(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """In teamdeck's own team too, ``r`` on a permission asks for a reason (esc: nothing is
    denied); the denial the teammate reads is the person's ("user"), never team-lead's."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        deck.screen.query_one("#roster").focus()
        await pilot.press("1", "r")
        await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(deck.screen, FeedbackScreen))
        assert steering_calls(runtime) == []
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
        await type_text(pilot, "use grep")
        await pilot.press("enter")
        await wait_for(pilot, lambda: steering_calls(runtime) != [])
        assert steering_calls(runtime) == [("answer_permission", PERM_ID, False, False)]
        assert runtime.feedback[PERM_ID] == "Denied by user: use grep"


async def test_r_with_no_reason_still_credits_the_person(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        deck.screen.query_one("#roster").focus()
        await pilot.press("1", "r")
        await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: steering_calls(runtime) != [])
        assert runtime.feedback[PERM_ID] == "Denied by user"


@pytest.mark.parametrize(("key", "allow"), [("a", True), ("y", True), ("r", False), ("n", False)])
async def test_the_same_keys_answer_in_the_permission_dialog(
    deck: TeamDeckApp, runtime: FakeRuntime, key: str, allow: bool
) -> None:
    """``a`` / ``r`` (the keys outside) and ``y`` / ``n`` (the dialog's own) answer alike in
    the dialog: a and y allow once, r and n ask why, then deny."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        deck.screen.query_one("#roster").focus()
        await pilot.press("1", "v")
        await wait_for(pilot, lambda: isinstance(deck.screen, PermissionScreen))
        await pilot.press(key)
        if not allow:
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            await pilot.press("enter")
        await wait_for(pilot, lambda: steering_calls(runtime) != [])
        assert steering_calls(runtime) == [("answer_permission", PERM_ID, allow, False)]


# ---------------------------------------------------------------------- item 3

PLAN_ID = "plan_approval-1767225630000@engineer"


def footer(app: TeamDeckApp) -> str:
    return screen_text(app).splitlines()[-1]


async def test_what_a_answers_is_highlighted_and_named_before_the_key(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """With the lead selected, ``a`` answers the oldest request (as README promises): the
    engineer's plan, highlighted in the queue and named on the "needs you" line above the
    footer; with the researcher selected, its own permission request."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        deck.screen.query_one("#roster").focus()
        await pilot.pause()
        assert deck.selected == "team-lead"
        queue = deck.screen.query_one(ApprovalsQueue)
        assert queue.selected_id == PLAN_ID
        await wait_for(pilot, lambda: "▶ engineer's plan waiting" in needs(deck))
        assert "a approve · r reject · v review" in needs(deck)
        await pilot.press("1")
        await wait_for(pilot, lambda: queue.selected_id == PERM_ID)
        await wait_for(pilot, lambda: "▶ researcher: Bash(git status" in needs(deck))
        assert "a allow once · r deny · v review" in needs(deck)
        await pilot.press("0", "a")
        await wait_for(pilot, lambda: steering_calls(runtime) != [])
        assert steering_calls(runtime) == [("approve_plan", PLAN_ID)]
        # the plan answered: the oldest left that the person answers is the researcher's
        await wait_for(pilot, lambda: queue.selected_id == PERM_ID)
        await wait_for(pilot, lambda: "▶ researcher: Bash" in needs(deck))


# ---------------------------------------------------------------------- item 5: the header


class _Header(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar()


@pytest.mark.parametrize(
    ("model", "cost", "mode", "kept"),
    [
        ("offline model — set ANTHROPIC_API_KEY for Claude", "$0", "acceptEdits", "offline · $0"),
        ("steering a Claude Code team — answers go through its hooks or inboxes", "", "",
         "steering a Claude Code team"),
    ],
)  # fmt: skip
async def test_at_80_columns_the_team_name_is_what_gets_shortened(
    model: str, cost: str, mode: str, kept: str
) -> None:
    """Issue 19: at 80 columns the cost, "offline", the permission mode (shift+tab's only
    feedback) and a viewer's "steering a Claude Code team" stay; the team's name is shortened;
    the line never ends in a bare cut-off count."""
    app = _Header()
    async with app.run_test(size=(80, 5)) as pilot:
        bar = app.query_one(StatusBar)
        team = "refactor-the-payment-module-and-its-tests"
        bar.show(
            team=team, model=model, teammates=3, open_tasks=2, approvals=1, mode=mode,
            cost=cost,
        )  # fmt: skip
        await pilot.pause()
        line = bar.line.plain
        assert len(line) <= 78
        assert line.endswith(kept) and (not mode or "⏵⏵ accept edits" in line)
        assert "3 teammates · 2 open · 1 approval" in line
        assert "refac" in line and "…" in line and team not in line  # the name, shortened

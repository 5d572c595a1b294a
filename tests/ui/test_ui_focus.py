"""Keys and focus (issue 10, "Approving what the person did not mean", items 6 and 7): typing
never fires a key, a/r/v act only on the selected teammate's own request, the agent view's
keys, and hints that name the key that works from where the person is.

The checks on the test team run as named steps of one app (``Steps``): before each, the
requests a step before answered are pending again (``FakeRuntime.reopen``); the steps that add
requests of their own come last. The footer at 80 columns and the first screen with no team
have an app each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_subtests import SubTests
from textual.pilot import Pilot
from textual.widgets import Footer, Input

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.help import HelpScreen
from app.dashboard.screens.leader import LeaderScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.dashboard.team_source import RuntimeSource
from app.runtime.api import AgentSnapshot, Approval
from tests.ui.data import fixed_clock
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import Steps, screen_text, wait_for
from widgets.approvals import ApprovalsQueue
from widgets.compose_box import ComposeBox

PLAN_ID = "plan_approval-1767225630000@engineer"
PERM_ID = "perm-1767225650000@researcher"
STOP_ID = "shutdown-1767225660000@tester"
NOTHING = "No pending request to answer."


async def loaded(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    await pilot.pause()
    return app


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in [*app._notifications, *app.waiting_toasts]]


def footer_keys(app: TeamDeckApp) -> str:
    """The footer line as shown."""
    return screen_text(app).splitlines()[-1]


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


def steering_calls(runtime: FakeRuntime) -> list[tuple[object, ...]]:
    return [c for c in runtime.calls if c[0] != "stop"]


def pending(deck: TeamDeckApp) -> set[str]:
    return {a.request_id for a in deck.approvals}


def told(deck: TeamDeckApp) -> list[str]:
    """Each toast the app raises from now on (shown or waiting its turn), in order: a step
    empties it, where the toasts of the steps before may still be on screen."""
    said: list[str] = []
    notify = deck.notify

    def recording(message: str, **options: Any) -> None:
        said.append(str(message))
        notify(message, **options)

    deck.notify = recording  # type: ignore[method-assign]
    return said


async def test_footer_shows_only_keys_that_work_from_the_focus(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)  # a team at work: the panels have the focus
        keys = footer_keys(deck)
        assert "a Approve" in keys and "? Help" in keys and "esc" not in keys
        assert "engineer's plan waiting" in screen_text(deck).splitlines()[-2]  # needs you
        assert "i Type" in keys
        await pilot.press("i")
        typing = footer_keys(deck)
        assert "Approve" not in typing and "Kill" not in typing
        assert "esc Keys" in typing and "Help" in typing
        await pilot.press("escape")
        assert footer_keys(deck) == keys
        assert deck.screen.query_one(Footer)


async def test_typing_selecting_and_answering(
    deck: TeamDeckApp, runtime: FakeRuntime, subtests: SubTests
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        focused_at_start = deck.focused  # before any key
        said = told(deck)

        async def all_pending() -> None:
            """The three requests pending, the calls of the step before forgotten."""
            for request_id in (PLAN_ID, PERM_ID):
                runtime.reopen(request_id)
            queue = deck.screen.query_one(ApprovalsQueue)
            ids = {PLAN_ID, PERM_ID, STOP_ID}
            await wait_for(pilot, lambda: ids <= pending(deck))
            await wait_for(pilot, lambda: ids <= {a.request_id for a in queue.approvals})
            runtime.calls.clear()
            said.clear()

        step = Steps(pilot, subtests, all_pending)

        # ---------------------------------------------------------------- typing never acts

        async with step("typing a sentence in the leader view never approves"):
            assert not isinstance(focused_at_start, Input)  # the keys act at start
            await pilot.press("i")  # into the lead's input
            await pilot.press("2")  # typed: the engineer (with a pending plan) is not selected
            await type_text(pilot, "please check as soon as you can K")
            assert steering_calls(runtime) == []
            prompt = deck.screen.query_one("#prompt", ComposeBox)
            assert prompt.value == "2please check as soon as you can K"
            assert deck.selected == "team-lead"
            await pilot.press("enter")
            assert runtime.calls == [("submit", "2please check as soon as you can K")]
            # Sent: the box closes and the keys have the focus (issue 30, M1: "3a" became text).
            assert not prompt.is_open and not isinstance(deck.focused, (Input, ComposeBox))
            await pilot.press("2", "a")
            assert runtime.calls[-1] == ("approve_plan", PLAN_ID)

        # ---------------------------------------------------------------- a / r: the selected one

        async with step("a with the lead selected answers the oldest request"):
            # Issue 19: the lead has no request of its own; ``a`` answers the oldest pending
            # one, highlighted in the queue (and named in the footer) before the key is pressed.
            assert deck.screen.query_one(ApprovalsQueue).selected_id == PLAN_ID
            await pilot.press("a")
            assert steering_calls(runtime) == [("approve_plan", PLAN_ID)]

        async with step("a and r with a teammate without a request answer nothing"):
            await pilot.press("2", "a")  # the engineer's plan is answered...
            await pilot.press("1", "a")  # ...and the researcher's permission
            runtime.calls.clear()
            await pilot.pause()
            assert deck.screen.query_one(ApprovalsQueue).highlighted is None  # only a shutdown
            await pilot.press("a")
            await pilot.press("r")
            await pilot.pause()
            assert steering_calls(runtime) == []  # the tester's shutdown is not touched
            assert not isinstance(deck.screen, FeedbackScreen)
            assert said.count(NOTHING) == 2

        async with step("a answers the selected teammate's permission, not the older plan"):
            # The engineer's plan is the oldest request in the queue; the researcher is
            # selected. ``a`` answers the researcher's permission and then, with the
            # researcher's queue empty, the oldest left (the engineer's plan), highlighted
            # first; never the tester's shutdown.
            assert deck.approvals[0].request_id == PLAN_ID  # the oldest is not the researcher's
            await pilot.press("1")
            queue = deck.screen.query_one(ApprovalsQueue)
            assert queue.selected_id == PERM_ID  # highlighted before the key is pressed
            await pilot.press("a")
            assert steering_calls(runtime) == [("answer_permission", PERM_ID, True, False)]
            await wait_for(pilot, lambda: PERM_ID not in pending(deck))
            await wait_for(pilot, lambda: queue.selected_id == PLAN_ID)
            await pilot.press("a")
            await pilot.pause()
            assert steering_calls(runtime)[1:] == [("approve_plan", PLAN_ID)]
            await wait_for(pilot, lambda: PLAN_ID not in pending(deck))
            assert queue.highlighted is None  # the tester's shutdown is the tester's to answer
            await pilot.press("a")
            await pilot.pause()
            assert len(steering_calls(runtime)) == 2
            assert NOTHING in said

        async with step("a answers the selected teammate's plan, not the other requests"):
            # With the engineer selected ``a`` approves its plan; then the researcher's
            # permission is highlighted (the oldest left) and ``r`` asks why before denying it.
            await pilot.press("2")
            assert deck.screen.query_one(ApprovalsQueue).selected_id == PLAN_ID
            await pilot.press("a")
            assert steering_calls(runtime) == [("approve_plan", PLAN_ID)]
            await wait_for(pilot, lambda: PLAN_ID not in pending(deck))
            queue = deck.screen.query_one(ApprovalsQueue)
            await wait_for(pilot, lambda: queue.selected_id == PERM_ID)
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            assert steering_calls(runtime) == [("approve_plan", PLAN_ID)]
            await pilot.press("escape")  # not denied after all
            await pilot.pause()
            assert steering_calls(runtime) == [("approve_plan", PLAN_ID)]
            assert PERM_ID in pending(deck)

        async with step("r denies the selected teammate's permission"):
            # ``r`` on a permission asks why (issue 19: in every mode), then denies the
            # selected teammate's request only.
            await pilot.press("1", "r")
            await wait_for(pilot, lambda: isinstance(deck.screen, FeedbackScreen))
            assert steering_calls(runtime) == []
            await pilot.press("enter")
            await wait_for(pilot, lambda: steering_calls(runtime) != [])
            assert steering_calls(runtime) == [("answer_permission", PERM_ID, False, False)]
            await wait_for(pilot, lambda: PERM_ID not in pending(deck))
            assert not isinstance(deck.screen, FeedbackScreen)

        async with step("moving in the queue selects its teammate"):
            deck.screen.query_one(ApprovalsQueue).focus()
            await pilot.pause()
            assert deck.selected == "engineer"  # the oldest request is highlighted on arrival
            await pilot.press("down")
            await pilot.pause()
            assert deck.selected == "researcher"
            await pilot.press("a")
            assert steering_calls(runtime) == [("answer_permission", PERM_ID, True, False)]

        async with step("v reviews the selected request"):
            await pilot.press("2", "v")
            await wait_for(pilot, lambda: isinstance(deck.screen, PlanReviewScreen))

        # ---------------------------------------------------------------- the agent view

        async with step("the agent view's keys work once the input is left"):
            await pilot.press("2", "enter")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            assert not isinstance(deck.focused, ComposeBox)  # the view opens with the keys
            await pilot.press("enter")  # the compose box
            assert isinstance(deck.focused, ComposeBox)
            assert "Approve" not in footer_keys(deck)
            assert "engineer's plan waiting" in screen_text(deck)  # the request a would answer
            await type_text(pilot, "a s K")
            assert steering_calls(runtime) == []
            await pilot.press("escape")  # leaves the input, stays in the view
            assert isinstance(deck.screen, AgentScreen)
            assert "a Approve" in footer_keys(deck)
            assert "esc Leader view" in footer_keys(deck)
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(deck.screen, HelpScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            await pilot.press("a")
            assert steering_calls(runtime) == [("approve_plan", PLAN_ID)]
            await pilot.press("s")  # asks first
            await wait_for(pilot, lambda: "Ask engineer to shut down? y/n" in screen_text(deck))
            await pilot.press("y")
            await wait_for(pilot, lambda: runtime.calls[-1][:2] == ("request_shutdown", "engineer"))
            await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))

        # ---------------------------------------------------------------- requests added

        async with step("a answers the oldest of two requests of one teammate"):
            # The researcher has a permission request (T0+50) and, newer, a plan (T0+90).
            # ``a`` answers the older one first, then the newer one, then the oldest left;
            # the queue highlights the one ``a`` would answer each time.
            newer = Approval(
                "plan_approval-1767225690000@researcher", "plan", "researcher",
                "researcher: plan approval requested", body="## Plan", created_at=T0 + 90,
            )  # fmt: skip
            runtime.add_approval(newer)
            await wait_for(pilot, lambda: newer.request_id in pending(deck))
            await pilot.press("1")
            queue = deck.screen.query_one(ApprovalsQueue)
            assert queue.selected_id == PERM_ID
            await pilot.press("a")
            assert steering_calls(runtime) == [("answer_permission", PERM_ID, True, False)]
            await wait_for(pilot, lambda: queue.selected_id == newer.request_id)
            await pilot.press("a")
            assert steering_calls(runtime)[1:] == [("approve_plan", newer.request_id)]
            await wait_for(pilot, lambda: newer.request_id not in pending(deck))
            await wait_for(pilot, lambda: queue.selected_id == PLAN_ID)  # the oldest left
            await pilot.press("a")
            assert steering_calls(runtime)[2:] == [("approve_plan", PLAN_ID)]

        # ---------------------------------------------------------------- hints name the key

        async with step("a plan toast names the keys from where the person is"):
            await pilot.press("i")  # typing in the lead's input, the lead selected
            before = notes(deck)  # the steps before raised toasts of their own requests
            runtime.add_approval(Approval("plan-2@researcher", "plan", "researcher", "plan"))
            # Its own line: the earlier steps' requests may still be told in a summary toast
            # of their own (requests that wait together are one toast).
            plan = "researcher asks you to approve a plan"
            await wait_for(pilot, lambda: plan in new_toast(deck, before, plan))
            (line,) = [t for t in new_toast(deck, before, plan).splitlines() if plan in t]
            assert line.endswith(
                "esc, then press 1 (researcher), then a approve · r reject · v review"
            ), line
            await pilot.press("escape", "3")
            before = notes(deck)
            runtime.add_approval(Approval("perm-9@tester", "permission", "tester", "tester: Bash"))
            await wait_for(pilot, lambda: new_toast(deck, before, "tester asks"))
            (line,) = [
                t for t in new_toast(deck, before, "tester asks").splitlines() if "tester asks" in t
            ]
            # the needs-you line's words for a permission, in the toast too
            assert line.endswith("asks for a permission: a allow once · r deny · v review"), line


def new_toast(deck: TeamDeckApp, before: list[str], words: str) -> str:
    """The toast holding ``words`` raised since ``before`` (the toasts then), or ""."""
    return next((n for n in notes(deck) if words in n and n not in before), "")


async def test_the_first_screen_with_no_team_takes_a_goal(tmp_path: Path) -> None:
    lead = AgentSnapshot(name="team-lead", color="blue", status="idle", is_lead=True, started_at=T0)
    runtime = FakeRuntime(team=None, agents=[lead])
    app = TeamDeckApp(
        Home(tmp_path), RuntimeSource(lambda w, s: runtime), clock=fixed_clock, watch=False
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        assert isinstance(app.focused, ComposeBox)  # the box is open, and says so
        assert "typing — esc to leave" in screen_text(app)
        await type_text(pilot, "summarize this repo")
        assert notes(app) == []  # no "Select a teammate to shut down", no "Nothing to approve"
        await pilot.press("enter")
        assert runtime.calls == [("submit", "summarize this repo")]

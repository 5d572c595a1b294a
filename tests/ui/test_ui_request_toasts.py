"""Issue 30, M4, as the runtime raises them: a request's toast goes once it was answered, and
a toast of the team's goes once another team is shown.

The toasts of new requests (and the other notices of what the team did: a permission timed
out, a hook's warning, a worktree kept) were shown as answers to a key press, which nothing
takes back: by hand, "writer asks you to approve a plan" stayed its five seconds after ``a``
approved it. The tests in ``test_ui_toasts.py`` raise theirs through the toast batch, the
path of completed tasks only.
"""

from __future__ import annotations

from dataclasses import replace

from app.dashboard.app import TeamDeckApp
from app.runtime.api import Approval
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import ready, wait_for
from tests.ui.test_ui_toasts import toasts

PLAN_ID = "plan_approval-1767225630000@engineer"


def new_plan() -> Approval:
    """The tester's plan request, a new object each time (answering one marks it answered)."""
    return Approval(
        "plan_approval-1767225690000@tester", "plan", "tester",
        "tester: plan approval requested", body="1. test it", created_at=T0 + 90,
    )  # fmt: skip


def asks(app: TeamDeckApp) -> bool:
    return any("tester asks you to approve a plan" in t for t in toasts(app))


async def test_a_new_requests_toast_goes_once_it_was_answered(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    deck.NOTIFICATION_TIMEOUT = 600  # it would stay: only the answer takes it off
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        runtime.approve_plan(PLAN_ID)  # the plan waiting from the start: answered
        await wait_for(pilot, lambda: all(a.kind != "plan" for a in app.approvals))
        asking = new_plan()
        runtime.add_approval(asking)  # as the runtime raises a request
        await wait_for(pilot, lambda: asks(app))
        runtime.approve_plan(asking.request_id)
        await wait_for(pilot, lambda: not asks(app))


async def test_a_requests_toast_goes_once_another_team_is_shown(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    deck.NOTIFICATION_TIMEOUT = 600
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        runtime.add_approval(new_plan())
        await wait_for(pilot, lambda: asks(app))
        app.files = replace(app.files, team="beta")  # the next goal's team
        await wait_for(pilot, lambda: not asks(app))

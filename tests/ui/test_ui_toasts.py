"""Toasts never cover a dialog (help, a review) nor the task board, at 80x24 and 120x40; a burst
shows a few at a time (issue 19, item 16)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.help import HelpScreen
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.task_board import TaskBoard

SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])


def toasts(app: TeamDeckApp) -> list[str]:
    return [str(t.render()) for t in app.screen.query("Toast") if t.display]


class FakeClock:
    """The app's ``toast_clock``: time moves only when the test says (a toast waiting past
    ``toast_hold.GIVE_WAY`` or ``LATE`` would be merged or dropped on a slow machine)."""

    def __init__(self, app: TeamDeckApp) -> None:
        self.now = 1000.0
        app.toast_clock = self  # type: ignore[method-assign]

    def __call__(self) -> float:
        return self.now


@SIZES
async def test_a_toast_waits_while_the_help_is_open(
    deck: TeamDeckApp, size: tuple[int, int]
) -> None:
    async with deck.run_test(size=size, notifications=True) as pilot:
        app = await ready(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        app.notify("researcher finished task #4", title="Task completed")
        await pilot.pause(0.3)
        assert "researcher finished" not in screen_text(app)  # the help is not covered
        await pilot.press("escape")
        await wait_for(pilot, lambda: "researcher finished" in screen_text(app))


@SIZES
async def test_toasts_stay_off_the_board(deck: TeamDeckApp, size: tuple[int, int]) -> None:
    async with deck.run_test(size=size, notifications=True) as pilot:
        app = await ready(pilot)
        for n in range(4):
            app.notify(f"toast number {n} with a line long enough to wrap once", title=f"T{n}")
        await wait_for(pilot, lambda: bool(toasts(app)))
        await pilot.pause(0.3)
        board = app.screen.query_one(TaskBoard).region
        shown = [t for t in app.screen.query("Toast") if t.display]
        assert shown and len(shown) <= (1 if size[1] < 32 else 2)  # the rest wait their turn
        for toast in shown:
            assert not toast.region.overlaps(board), (toast.region, board)
        footer_row = screen_text(app).splitlines()[-1]
        assert "K Kill" in footer_row  # nor the footer


@SIZES
async def test_a_keys_answer_is_shown_at_once_however_many_team_toasts_wait(
    deck: TeamDeckApp, size: tuple[int, int]
) -> None:
    """What the team did may wait a moment (``toast_hold.GIVE_WAY``); the answer to a key never
    waits behind it (a finished run left five toasts queued, and ``s`` on a finished teammate
    said nothing for 20 s)."""
    FakeClock(deck)
    async with deck.run_test(size=size, notifications=True) as pilot:
        app = await ready(pilot)
        for title in ("Task completed", "Plan", "Permission", "Run finished", "Worktree kept"):
            app.toasts.add(f"what the team did: {title}", title)
        room = 1 if size[1] < 32 else 2
        await wait_for(pilot, lambda: len(toasts(app)) == room)  # the team's toasts fill it
        assert app.waiting_toasts  # and more wait (the clock stands: none gives way by itself)
        await pilot.press("ctrl+c")
        await pilot.pause(0.3)
        assert any("ctrl+c does not quit" in t for t in toasts(app)), toasts(app)


async def test_a_requests_toast_that_waited_is_dropped_once_it_was_answered(
    deck: TeamDeckApp,
) -> None:
    """A request's toast waits while a dialog is open; answered meanwhile (in that dialog), it
    is not shown afterwards ("writer asks you to approve a plan" after it was approved)."""
    FakeClock(deck)
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        app.toasts.add("engineer asks you to approve a plan", "Plan")
        app.toasts.add("#4 Write expiry tests by tester", "Task completed")
        await wait_for(pilot, lambda: len(app.waiting_toasts) == 2)
        app.approvals = tuple(a for a in app.approvals if a.kind != "plan")  # answered
        await pilot.press("escape")
        await wait_for(pilot, lambda: "Write expiry tests" in screen_text(app))
        await pilot.pause(0.3)
        assert not any("approve a plan" in t for t in toasts(app)), toasts(app)
        assert not app.waiting_toasts


async def test_a_requests_toast_shown_goes_once_it_was_answered(deck: TeamDeckApp) -> None:
    """Issue 30, M4: a request's toast on the screen is taken off when no such request waits
    any more (it stayed for its five seconds, about a request already answered)."""
    deck.NOTIFICATION_TIMEOUT = 600  # it would stay: only the answer takes it off
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        app.toasts.add("engineer asks you to approve a plan", "Plan")
        await wait_for(pilot, lambda: any("approve a plan" in t for t in toasts(app)))
        app.approvals = tuple(a for a in app.approvals if a.kind != "plan")  # answered
        await wait_for(pilot, lambda: not any("approve a plan" in t for t in toasts(app)))


async def test_a_toast_of_the_team_shown_before_never_shows_over_another(
    deck: TeamDeckApp,
) -> None:
    """Issue 30, M4: the previous team's "Task completed #3" (waiting behind a dialog, or on
    the screen) is not shown over the next team, which has its own #3."""
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        app.toasts.add("#3 Implement the refresh by engineer", "Task completed")
        await wait_for(pilot, lambda: any("#3 Implement" in t for t in toasts(app)))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        app.toasts.add("#4 Write expiry tests by tester", "Task completed")
        await wait_for(pilot, lambda: len(app.waiting_toasts) == 1)
        app.files = replace(app.files, team="beta")  # another team is shown
        await pilot.press("escape")
        await pilot.pause(0.3)
        assert not any("#3 Implement" in t or "#4 Write" in t for t in toasts(app)), toasts(app)
        assert not app.waiting_toasts

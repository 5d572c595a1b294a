"""Issue 30, M4: toasts only for news that is still true, shown when it happens or not at all.

By hand (80x24, the demo): "Task completed #1 … by researcher" showed five seconds after the
task was done, behind the toast answering `a`, and "Run finished" five seconds after the last
task's: the team's toasts waited their turn behind each other, each for its whole timeout.
Times here are a fake ``toast_clock``'s; every toast's own timeout is long (only the rules
under test take a toast off).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core import Home
from app.dashboard import toast_hold
from app.dashboard.app import TeamDeckApp
from app.dashboard.claude_bridge import BridgeEventArrived
from app.dashboard.launch import build_dashboard
from app.dashboard.screens.help import HelpScreen
from app.runtime.api import Approval
from app.runtime.bridge.hold import Sender
from app.runtime.bridge.state import HookEvent
from tests import claude_home as ch
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from tests.ui.test_ui_toasts import FakeClock, toasts

RESEARCHER_PERMISSION = "perm-1767225650000@researcher"  # pending from the start (tests/ui/data)


def permission_of_tester(request_id: str = "perm-1767225700000@tester") -> Approval:
    """A new permission request of the tester's (a new object: answering one marks it)."""
    return Approval(
        request_id, "permission", "tester", "tester: Bash", body='{\n  "command": "pytest -q"\n}',
        tool_name="Bash", tool_input={"command": "pytest -q"}, created_at=T0 + 100,
    )  # fmt: skip


@pytest.fixture
def clock(deck: TeamDeckApp) -> FakeClock:
    deck.NOTIFICATION_TIMEOUT = 600  # nothing times out by itself
    return FakeClock(deck)


def shown(app: TeamDeckApp, words: str) -> bool:
    return any(words in t for t in toasts(app))


def team_toast(app: TeamDeckApp, message: str, title: str, **more: object) -> None:
    """A toast of what the team did, as the app raises them."""
    app.notify_background(message, title=title, team=app.files.team, **more)  # type: ignore[arg-type]


async def test_news_after_a_keys_answer_shows_once_the_answer_was_read(
    deck: TeamDeckApp, clock: FakeClock
) -> None:
    """At 80x24 (one toast at a time) the answer to `a` made the next task's toast wait its
    whole timeout: the answer makes room after ``GIVE_WAY`` seconds, not after its timeout."""
    async with deck.run_test(size=(80, 24), notifications=True) as pilot:
        app = await ready(pilot)
        await pilot.press("a")  # the needs-you line's request: the engineer's plan
        await wait_for(pilot, lambda: shown(app, "approved"))
        app.toasts.add("#4 Write expiry tests by tester", "Task completed")  # as the store does
        await wait_for(pilot, lambda: len(app.waiting_toasts) == 1)
        clock.now += toast_hold.GIVE_WAY  # the answer was read
        await wait_for(pilot, lambda: shown(app, "#4 Write expiry tests"))
        assert not shown(app, "approved")  # it made room: one toast at a time at 80x24
        assert len(toasts(app)) == 1


async def test_toasts_of_the_team_that_wait_together_are_one_summary(
    deck: TeamDeckApp, clock: FakeClock
) -> None:
    """A run's end: the last task, the run finished, a worktree kept, one after the other,
    each shown its whole timeout; now what waits together is one toast."""
    async with deck.run_test(size=(80, 24), notifications=True) as pilot:
        app = await ready(pilot)
        team_toast(app, "#2 Map the definitions by analyst", "Task completed")
        await wait_for(pilot, lambda: shown(app, "#2 Map the definitions"))
        clock.now += 0.5
        team_toast(app, "#3 Summarize what each file does by writer", "Task completed")
        team_toast(app, "team alpha is done", "Run finished")
        team_toast(app, "writer: 2 files changed", "Worktree kept")
        await pilot.pause(0.2)
        assert len(app.waiting_toasts) == 3  # the first is read first
        clock.now += toast_hold.GIVE_WAY
        await wait_for(pilot, lambda: shown(app, "3 updates"))
        text = toasts(app)[0]
        assert "Task completed: #3 Summarize" in text and "Run finished: team alpha is done" in text
        assert "Worktree kept: writer: 2 files changed" in text
        assert not app.waiting_toasts and len(toasts(app)) == 1


async def test_news_that_waited_past_LATE_behind_a_dialog_is_dropped_but_an_error_is_not(
    deck: TeamDeckApp, clock: FakeClock
) -> None:
    """A toast held while the help was open showed whenever the help closed, however old; the
    feed and the board have it. An error is shown late rather than never."""
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        team_toast(app, "#4 Write expiry tests by tester", "Task completed")
        team_toast(app, "tester failed: the model refused", "", severity="error")
        await wait_for(pilot, lambda: len(app.waiting_toasts) == 2)
        clock.now += toast_hold.LATE + 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: shown(app, "tester failed"))
        await pilot.pause(0.2)
        assert not shown(app, "#4 Write expiry tests") and not app.waiting_toasts


async def test_news_that_waited_less_than_LATE_behind_a_dialog_is_shown(
    deck: TeamDeckApp, clock: FakeClock
) -> None:
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        team_toast(app, "#4 Write expiry tests by tester", "Task completed")
        clock.now += toast_hold.LATE - 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: shown(app, "#4 Write expiry tests"))


async def test_a_burst_begun_for_one_team_never_shows_over_the_next(
    deck: TeamDeckApp, clock: FakeClock
) -> None:
    """The previous team's "Task completed #3 … by writer" showed over the new team, which has
    its own #3: a burst of completed tasks was tagged with the team shown when it ended."""
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        app.toasts.add("#3 Summarize what each file does by writer", "Task completed")
        app.files = replace(app.files, team="beta")  # the next goal's team, inside the burst
        await pilot.pause(app.toasts.window + 0.3)
        assert not shown(app, "#3 Summarize") and not app.waiting_toasts
        assert "#3 Summarize" not in screen_text(app)


async def test_a_requests_toast_goes_when_that_request_is_answered_not_another(
    deck: TeamDeckApp, runtime: FakeRuntime, clock: FakeClock
) -> None:
    """A request's toast stayed while any request of its kind waited: the tester's permission
    toast stayed after it was answered, because the researcher's was still pending."""
    async with deck.run_test(size=(120, 40), notifications=True) as pilot:
        app = await ready(pilot)
        asking = permission_of_tester()
        runtime.add_approval(asking)
        await wait_for(pilot, lambda: shown(app, "tester asks for a permission"))
        runtime.answer_permission(asking.request_id, True)
        await wait_for(pilot, lambda: not shown(app, "tester asks for a permission"))
        assert any(a.request_id == RESEARCHER_PERMISSION for a in app.approvals)  # still waits


async def test_requests_raised_together_are_one_toast_that_goes_when_one_is_answered(
    deck: TeamDeckApp, runtime: FakeRuntime, clock: FakeClock
) -> None:
    """Several teammates asking at once: one toast names them all (the needs-you line and
    the Approvals box take them one by one); once one is answered it is no longer true."""
    first = permission_of_tester()
    second = replace(permission_of_tester("perm-1767225710000@engineer"), agent="engineer")
    async with deck.run_test(size=(80, 24), notifications=True) as pilot:
        app = await ready(pilot)
        team_toast(app, "#4 Write expiry tests by tester", "Task completed")
        await wait_for(pilot, lambda: shown(app, "#4 Write expiry tests"))
        runtime.add_approval(first)
        runtime.add_approval(second)
        await wait_for(pilot, lambda: len(app.waiting_toasts) == 2)
        clock.now += toast_hold.GIVE_WAY
        await wait_for(pilot, lambda: shown(app, "2 requests"))
        assert shown(app, "tester asks for a permission") and shown(app, "engineer asks")
        runtime.answer_permission(second.request_id, False)
        await wait_for(pilot, lambda: not shown(app, "2 requests"))


async def test_toasts_taken_off_early_leave_nothing_behind(
    deck: TeamDeckApp, runtime: FakeRuntime, clock: FakeClock
) -> None:
    """By hand (80x24, ``teamdeck --claude``): after a few toasts had gone early (a request
    answered, a toast making room), the next ones were cut to one row, then not drawn at all:
    each left an empty holder in Textual's toast rack."""
    async with deck.run_test(size=(80, 24), notifications=True) as pilot:
        app = await ready(pilot)
        for n in range(4):
            asking = permission_of_tester(f"perm-17672257{n}0000@tester")
            runtime.add_approval(asking)  # its toast goes once it is answered
            await wait_for(pilot, lambda: shown(app, "tester asks for a permission"))
            runtime.answer_permission(asking.request_id, True)
            await wait_for(pilot, lambda: not shown(app, "tester asks for a permission"))
            app.notify(f"answer number {n}")  # it makes room for the next news
            await wait_for(pilot, lambda n=n: shown(app, f"answer number {n}"))  # type: ignore[misc]
            clock.now += toast_hold.GIVE_WAY
        team_toast(app, "#9 Write the changelog by writer", "Task completed")
        await wait_for(pilot, lambda: "#9 Write the changelog" in screen_text(app))
        rack = app.screen.query_one("ToastRack")
        assert len(rack.children) == 1, rack.children


async def test_claude_codes_hook_events_at_once_are_one_toast_and_another_teams_none(
    tmp_path: Path,
) -> None:
    """By hand (``teamdeck --claude``, 120x40): "worker finished its turn" and "worker is idle"
    came as two toasts at once, shown as answers to a key (they jumped ahead of the team's
    news and made it give way), and a session of another team had its toast over this one."""
    app = build_dashboard(Home(ch.build(tmp_path / "claude"), lock_style="mkdir"), viewer=True)
    FakeClock(app)
    app.NOTIFICATION_TIMEOUT = 600
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.loaded and app.files.team == ch.TEAM)
        await pilot.press("escape")
        writer = Sender("writer", ch.TEAM, "session-writer", in_process=True)
        other = Sender("team-lead", "session-0ther000", "session-other")
        for event in (
            HookEvent("SubagentStop", {}, writer),
            HookEvent("TeammateIdle", {}, writer),
            HookEvent("SessionStart", {}, other),
        ):
            app.post_message(BridgeEventArrived(event))
        await wait_for(pilot, lambda: shown(app, "2 updates"))
        (toast,) = toasts(app)
        assert "writer finished its turn" in toast and "writer is idle" in toast
        await pilot.pause(toast_hold.BURST + 0.2)
        assert not shown(app, "session started") and not app.waiting_toasts


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_every_line_of_a_toast_is_on_the_screen(
    deck: TeamDeckApp, clock: FakeClock, size: tuple[int, int]
) -> None:
    """By hand (80x24, ``teamdeck --claude``): the summary "worker finished its turn" / "worker
    is idle" showed without its last line. A line as wide as the toast was measured on one row
    and drawn on two (the toast's width was a share of a rack whose scrollbar came and went),
    and the rack cut the toast to the rows it had measured."""
    async with deck.run_test(size=size, notifications=True) as pilot:
        app = await ready(pilot)
        width = app.screen.query_one("ToastRack").size.width or size[0]
        for first in ("Claude Code: worker finished its turn", "x" * (width // 2 - 4)):
            team_toast(app, f"{first}\nClaude Code: worker is idle", "2 updates")
            await wait_for(pilot, lambda: shown(app, "2 updates"))
            await pilot.pause(0.1)
            text = screen_text(app)
            assert "2 updates" in text and "worker is idle" in text, text
            clock.now += toast_hold.GIVE_WAY
            for notification in list(app._notifications):
                app._take_off(notification)
            await pilot.pause(0.1)


async def test_a_long_answer_is_read_before_news_takes_its_place(
    deck: TeamDeckApp, clock: FakeClock
) -> None:
    """By hand (80x24, a Claude Code teammate's plan): `a`'s answer says the lead approves the
    plan by itself, four lines; the teammate's next request replaced it 1.5 s later, unread.
    A toast keeps its place for its reading time; the news still shows (before ``LATE``)."""
    long = (
        "approved worker's plan cc-6016-1: the lead approves worker's plan by itself: Claude"
        " Code 2.1.332 gives no other door"
    )
    async with deck.run_test(size=(80, 24), notifications=True) as pilot:
        app = await ready(pilot)
        app.notify(long)
        await wait_for(pilot, lambda: shown(app, "no other door"))
        team_toast(app, "#4 Write expiry tests by tester", "Task completed")
        await wait_for(pilot, lambda: len(app.waiting_toasts) == 1)
        clock.now += toast_hold.GIVE_WAY
        app.release_toasts()
        await pilot.pause(0.2)
        assert shown(app, "no other door") and not shown(app, "#4 Write expiry tests")
        clock.now += toast_hold.READ_MAX - toast_hold.GIVE_WAY
        await wait_for(pilot, lambda: shown(app, "#4 Write expiry tests"))
        assert toast_hold.READ_MAX < toast_hold.LATE

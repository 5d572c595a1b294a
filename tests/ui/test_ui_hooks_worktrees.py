"""The dashboard shows team hooks and worktrees: a hook that blocked or warned is a line in the
feed (one that passed is not), a failing hook and a kept worktree are notifications, and a
teammate's panel names its worktree (from the member's ``worktreePath``)."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from app.core import InboxChanged
from app.dashboard.app import TeamDeckApp
from app.runtime.events import HookRan, WorktreeReleased
from tests.ui.data import TEAM, build_home, make_app
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for
from widgets.message_feed import MessageFeed

WORKTREE = "/repo/.claude/worktrees/alpha-tester"


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    return app


def notes(app: TeamDeckApp) -> list[tuple[str, str]]:
    return [(str(n.title), str(n.message)) for n in [*app._notifications, *app.waiting_toasts]]


async def test_hooks_in_the_feed_and_worktrees_on_the_panels(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    home.teams.update_member(TEAM, "tester", worktree_path=WORKTREE)
    runtime = FakeRuntime(TEAM)
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=(140, 44)) as pilot:
        await ready(pilot)
        feed = deck.screen.query_one(MessageFeed)
        before = feed.item_count
        assert "⎇ alpha-tester" in screen_text(deck)  # the tester's panel

        runtime.emit(HookRan("tester", "TaskCompleted", "ok", "make test", "", "4", TEAM))
        runtime.emit(
            HookRan("tester", "TaskCompleted", "blocked", "make test", "2 tests fail", "4", TEAM)
        )
        runtime.emit(
            HookRan(
                "team-lead",
                "TaskCreated",
                "warning",
                "lint",
                "hook 'lint' failed (exit 1): no config",
                "9",
                TEAM,
            )
        )
        await wait_for(pilot, lambda: feed.item_count == before + 2)
        assert feed.lines()[-2:] == [
            "tester hook blocked: TaskCompleted #4 — 2 tests fail",
            "team-lead hook warning: TaskCreated #9 — hook 'lint' failed (exit 1): no config",
        ]
        assert ("TaskCreated hook", "hook 'lint' failed (exit 1): no config") in notes(deck)
        # an inbox that shrank (its reader deleted what it read) takes nothing off the feed
        inbox = home.layout.inbox_path(TEAM, "tester")
        inbox.write_text("[]", "utf-8")
        deck.home.emit(InboxChanged(TEAM, "tester"))
        await pilot.pause(0.3)
        assert any("-> tester" in line for line in feed.lines())
        assert feed.item_count == before + 2
        assert "tester hook blocked: TaskCompleted #4 — 2 tests fail" in feed.lines()

        summary = f"kept worktree {WORKTREE} on branch teamdeck/alpha/tester (1 changed file)"
        runtime.emit(
            WorktreeReleased("tester", WORKTREE, "teamdeck/alpha/tester", False, summary, TEAM)
        )
        await wait_for(pilot, lambda: ("Worktree kept", f"tester: {summary}") in notes(deck))

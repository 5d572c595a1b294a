"""Typing is a mode one can see (issue 30): the compose box takes every key and every pasted
line, sends on enter and closes; outside it a key is a command or is ignored with a hint,
single-letter commands wait a moment after the view changed, esc+letter is esc."""

from __future__ import annotations

import pytest
from textual import events

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens import deck_view
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.deck_view import DeckView
from app.dashboard.screens.leader import LeaderScreen
from app.dashboard.screens.task_detail import TaskScreen
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from widgets.compose_box import ComposeBox
from widgets.task_board import TaskBoard

PLAN_ID = "plan_approval-1767225630000@engineer"
PERM_ID = "perm-1767225650000@researcher"


class FrozenClock:
    """``time`` for ``deck_view``: the key guard's clock, moved only by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def guard(monkeypatch: pytest.MonkeyPatch) -> FrozenClock:
    """The key guard on (0.3 s), on a clock that stands still until the test moves it."""
    clock = FrozenClock()
    monkeypatch.setattr(DeckView, "KEY_GUARD", 0.3)
    monkeypatch.setattr(deck_view, "time", clock)
    return clock


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in [*app._notifications, *app.waiting_toasts]]


def answers(runtime: FakeRuntime) -> list[tuple[object, ...]]:
    kinds = ("approve_plan", "answer_permission", "request_shutdown", "kill")
    return [c for c in runtime.calls if c[0] in kinds]


async def test_a_paste_keeps_every_line_and_sends_nothing(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    goal = "\n".join(f"line {n}: {'word ' * 18}end{n}" for n in range(1, 9))
    async with deck.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("i")
        box = deck.screen.query_one("#prompt", ComposeBox)
        assert box.has_focus and "typing — esc to leave" in screen_text(deck)
        deck.post_message(events.Paste(goal))  # as the terminal's driver does
        await wait_for(pilot, lambda: box.value == goal)
        assert runtime.calls == []
        assert f"8 lines · {len(goal)} chars" in str(box.border_subtitle)
        await pilot.press("enter")
        assert runtime.calls == [("submit", goal)]
        assert box.value == "" and not box.is_open and not deck.screen.typing


async def test_ctrl_j_adds_a_line_and_esc_keeps_the_text(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("i", "h", "i", "ctrl+j", "y", "o")
        box = deck.screen.query_one("#prompt", ComposeBox)
        assert box.value == "hi\nyo"
        await pilot.press("escape")  # leaves the box, the text kept
        assert not box.is_open and not deck.screen.typing
        await pilot.press("i")
        assert box.is_open and box.value == "hi\nyo"
        await pilot.press("alt+a")  # esc and a pressed together: esc, the a ignored
        assert not box.is_open and box.value == "hi\nyo"
        assert answers(runtime) == [] and any("came with esc" in n for n in notes(deck))


async def test_a_letter_right_after_the_view_changed_is_ignored_with_a_hint(
    deck: TeamDeckApp, runtime: FakeRuntime, guard: FrozenClock
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        guard.now += 1
        await pilot.press("1")
        guard.now += 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        await pilot.press("a")  # at once: meant for the leader view
        await pilot.pause()
        assert answers(runtime) == []
        assert any("the view had just changed" in n for n in notes(deck))
        guard.now += 0.31  # a moment later the key acts
        await pilot.press("a")
        await wait_for(pilot, lambda: answers(runtime) != [])
        assert answers(runtime) == [("answer_permission", PERM_ID, True, False)]


async def test_letters_typed_into_no_box_are_ignored_with_a_hint(
    deck: TeamDeckApp, runtime: FakeRuntime, guard: FrozenClock
) -> None:
    """A word typed with no box open: its first letter is no command here, and the letters
    that follow it (a, s: commands) are ignored with it."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        guard.now += 1
        await pilot.press("2")
        guard.now += 1
        await pilot.press(*"please")
        await pilot.pause()
        assert answers(runtime) == []
        assert any("p is no key here: i to type a message" in n for n in notes(deck))


async def test_alt_letter_in_an_agent_view_is_esc_and_answers_nothing(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("2", "enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        await pilot.press("alt+a")
        await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))
        assert answers(runtime) == []


async def test_enter_on_the_board_opens_the_task(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        board = deck.screen.query_one(TaskBoard)
        board.focus()
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, TaskScreen))
        task = deck.screen.task_shown  # type: ignore[attr-defined]
        assert f"#{task.id} {task.subject}" in screen_text(deck)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))


async def test_number_keys_select_and_focus_the_roster(deck: TeamDeckApp) -> None:
    """After tabbing into the feed, 3 + enter opens the tester's view, not a message."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        deck.screen.query_one("#feed").focus()
        await pilot.pause()
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        assert deck.screen.agent == "tester"  # type: ignore[attr-defined]

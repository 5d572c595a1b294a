"""Leaving the compose box (issue 30): the keys typed right after it are never commands.

A terminal sends ``esc`` and a digit pressed right after it as one sequence, which must read
as ``alt+<digit>`` (esc, the digit ignored), not as a character typed into the box; and the
letters typed right after a message was sent (the box closes) wait out the key guard.
"""

from __future__ import annotations

from textual._xterm_parser import XTermParser

from app.dashboard.app import TeamDeckApp
from app.dashboard.terminal_keys import read_esc_and_digit_as_alt
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, wait_for
from tests.ui.test_ui_compose import FrozenClock, answers, guard, notes  # noqa: F401
from widgets.compose_box import ComposeBox


def keys_read(data: str) -> list[str]:
    """The keys Textual's parser reads from ``data``, one read followed by nothing."""
    parser = XTermParser()
    events = [*parser.feed(data), *parser.feed("")]  # "": the end, as the read's timeout
    return [key for event in events if (key := getattr(event, "key", None))]


def test_esc_and_a_digit_read_as_alt_digit() -> None:
    read_esc_and_digit_as_alt()
    assert keys_read("\x1b3a\r") == ["alt+3", "a", "enter"]  # was "pound_sign" ("£")
    assert keys_read("\x1b1") == ["alt+1"]
    assert keys_read("£") == ["pound_sign"]  # a "£" typed is still one


async def test_a_letter_right_after_a_message_was_sent_answers_nothing(
    deck: TeamDeckApp,
    runtime: FakeRuntime,
    guard: FrozenClock,  # noqa: F811
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        guard.now += 1
        await pilot.press("i", "h", "i", "enter")  # sent: the box closes
        box = deck.screen.query_one("#prompt", ComposeBox)
        await wait_for(pilot, lambda: not box.is_open)
        assert ("submit", "hi") in runtime.calls
        await pilot.press("a")  # typed on after the enter: meant as text
        await pilot.pause()
        assert answers(runtime) == []
        assert any("a ignored" in n for n in notes(deck))
        guard.now += 0.31  # a moment later the key acts
        await pilot.press("a")
        await wait_for(pilot, lambda: answers(runtime) != [])


def test_esc_and_enter_in_one_read_is_alt_enter() -> None:
    read_esc_and_digit_as_alt()
    assert keys_read("\x1b\rhi") == ["alt+enter", "h", "i"]  # was "enter": the esc dropped
    assert keys_read("\r") == ["enter"]
    assert keys_read("\x1b") == ["escape"]


async def test_esc_and_enter_together_keep_the_text_in_the_box_and_send_nothing(
    deck: TeamDeckApp,
    runtime: FakeRuntime,
    guard: FrozenClock,  # noqa: F811
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        guard.now += 1
        await pilot.press("i", "h", "i")
        box = deck.screen.query_one("#prompt", ComposeBox)
        await wait_for(pilot, lambda: box.text == "hi")
        await pilot.press("alt+enter")  # esc, then enter to type again, read as one
        await pilot.press("space", "a")  # typed on: text
        await pilot.pause()
        assert box.is_open and box.text == "hi a", box.text
        assert not [call for call in runtime.calls if call[0] == "submit"], runtime.calls
        assert answers(runtime) == []

"""``/`` in the live dashboard: the feed (agent view: the transcript) filtered as you type,
``n``/``N`` through the hits, ``esc`` closes; single-letter keys never act while typing."""

from __future__ import annotations

from textual.pilot import Pilot

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.agent import AgentScreen
from app.dashboard.screens.leader import LeaderScreen
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for
from widgets.message_feed import MessageFeed
from widgets.search_bar import SearchBar
from widgets.transcript import Transcript


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    await pilot.press("escape")  # out of the lead's input: keys act
    return app


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


def feed(app: TeamDeckApp) -> MessageFeed:
    return app.screen.query_one(MessageFeed)


async def test_slash_filters_the_feed_as_you_type(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        everything = feed(deck).lines()
        assert len(everything) > 5
        await pilot.press("slash")
        await wait_for(pilot, lambda: deck.screen.query_one(SearchBar).is_open)
        await type_text(pilot, "ENTRY")  # any case; the line or the whole message
        entry = feed(deck).lines()
        assert 2 <= len(entry) < len(everything)
        assert [line for line in everything if "entry" in line.lower()] == [
            line for line in entry if "entry" in line.lower()
        ]
        assert all("entry" in item.search_text for item in feed(deck)._view)
        await type_text(pilot, " found")  # every word must match: narrows as you type
        assert len(feed(deck).lines()) == 1
        assert "entry points found" in feed(deck).lines()[0]
        assert "1 shown" in screen_text(deck)
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        await pilot.press("backspace")  # "entry" again: broader
        assert feed(deck).lines() == entry


async def test_sender_and_frame_type_are_searched(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("slash")
        await wait_for(pilot, lambda: deck.screen.query_one(SearchBar).is_open)
        await type_text(pilot, "plan_approval_request")  # the frame's type, not shown as such
        lines = feed(deck).lines()
        assert len(lines) == 1 and lines[0].startswith("engineer")
        await pilot.press(*["backspace"] * len("plan_approval_request"))
        await type_text(pilot, "tester")  # sent or received by
        assert lines != feed(deck).lines() and all("tester" in x for x in feed(deck).lines())
        await type_text(pilot, " nothing-like-this")
        assert feed(deck).lines() == []
        assert "no match" in screen_text(deck) and "no message matches" in screen_text(deck)


async def test_n_and_shift_n_step_through_hits_and_esc_closes(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        total = len(feed(deck).lines())
        await pilot.press("slash")
        await wait_for(pilot, lambda: deck.screen.query_one(SearchBar).is_open)
        await type_text(pilot, "engineer")
        hits = feed(deck).lines()
        assert 1 < len(hits) < total
        # While typing, n is a letter of the query: the hint says enter first.
        assert "enter, then n/N" in screen_text(deck)
        assert "n/N next/prev" not in screen_text(deck)
        await pilot.press("enter")  # keys act again; the first hit is marked
        assert deck.screen.focused is feed(deck)
        shown = lambda: feed(deck).cursor.line.plain()  # noqa: E731
        assert shown() == hits[0]
        await pilot.press("n")
        assert shown() == hits[1]
        await pilot.press("N", "N")
        assert shown() == hits[-1]  # wraps
        assert "n/N next/prev" in screen_text(deck)  # the box says how
        assert "enter, then n/N" not in screen_text(deck)
        await pilot.press("slash")  # back into the box: n is text again, and the hint says so
        await pilot.pause()
        assert "enter, then n/N" in screen_text(deck)
        await pilot.press("n")  # a letter of the query (the box selected it), not a step
        assert deck.screen.query_one("#search").value.endswith("n")  # type: ignore[attr-defined]
        await pilot.press("escape")
        assert len(feed(deck).lines()) == total
        assert not deck.screen.query_one(SearchBar).is_open
        assert isinstance(deck.screen, LeaderScreen)


async def test_letters_type_in_the_search_box_and_the_prompt(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        app = await ready(pilot)
        await pilot.press("i")  # into the lead's input: / and n are text there
        await type_text(pilot, "a/n")
        assert app.screen.query_one("#prompt").value == "a/n"  # type: ignore[attr-defined]
        assert not app.screen.query(SearchBar)
        await pilot.press("escape", "slash")
        await wait_for(pilot, lambda: app.screen.query_one(SearchBar).is_open)
        await type_text(pilot, "asKrvn")  # approve, shutdown, kill, reject, review, next hit
        assert app.screen.query_one("#search").value == "asKrvn"  # type: ignore[attr-defined]
        assert not [c for c in runtime.calls if c[0] != "start"]
        await pilot.press("escape")  # closes the search from the box
        assert not app.screen.query_one(SearchBar).is_open
        await pilot.press("n")  # no search: n is a new goal for the lead again
        assert app.screen.focused is app.screen.query_one("#prompt")


async def test_the_agent_view_searches_its_transcript(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("1", "enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))  # keys act
        transcript = deck.screen.query_one(Transcript)
        entries = [c for c in transcript.children if c.display]
        await pilot.press("slash")
        await wait_for(pilot, lambda: deck.screen.query_one(SearchBar).is_open)
        await type_text(pilot, "grep")  # the Bash call's input
        shown = [c for c in transcript.children if c.display]
        assert len(shown) == 1 and len(entries) > 1
        assert "1 shown" in screen_text(deck)
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await type_text(pilot, "login")  # the assistant's text
        assert len([c for c in transcript.children if c.display]) == 1
        await pilot.press("enter", "n")
        assert len(transcript.query(".-hit")) == 1
        await pilot.press("escape")  # the search closes; the view stays
        assert isinstance(deck.screen, AgentScreen)
        assert [c for c in transcript.children if c.display] == entries
        await pilot.press("escape")  # now back to the leader view
        await wait_for(pilot, lambda: isinstance(deck.screen, LeaderScreen))

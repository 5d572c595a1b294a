"""The feed and the transcripts follow the newest line, whatever the layout does, unless the
person scrolled up on purpose (issue 10, item 2)."""

from __future__ import annotations

from textual.pilot import Pilot

from app.core import InboxMessage
from app.dashboard.app import TeamDeckApp
from app.runtime.events import TranscriptEntry
from tests.ui.data import TEAM
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for
from widgets.message_feed import MessageFeed
from widgets.transcript import Transcript
from widgets.transcript_tail import TranscriptTail


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    await pilot.press("escape")  # out of the lead's input: keys act
    return app


def send(app: TeamDeckApp, text: str, n: int = 1) -> None:
    box = app.home.mailbox(TEAM)
    for i in range(n):
        body = text if n == 1 else f"{text} {i}"
        box.append("engineer", InboxMessage(sender="researcher", text=body, summary=None))


async def fill_feed(pilot: Pilot[None], app: TeamDeckApp) -> MessageFeed:
    feed = app.screen.query_one(MessageFeed)
    before = feed.item_count
    send(app, "filler", 30)
    await wait_for(pilot, lambda: feed.item_count == before + 30)
    await pilot.pause(0.1)
    assert feed.max_scroll_y > 0 and feed.is_vertical_scroll_end
    return feed


async def test_feed_follows_after_the_board_is_toggled(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        feed = await fill_feed(pilot, deck)
        await pilot.press("ctrl+t")
        await pilot.pause(0.1)
        await pilot.press("ctrl+t")
        await pilot.pause(0.1)
        send(deck, "the newest line after the toggle")
        await wait_for(pilot, lambda: "the newest line after the toggle" in feed.lines()[-1])
        await pilot.pause(0.1)
        assert "the newest line after the toggle" in screen_text(deck)
        assert feed.is_vertical_scroll_end


async def test_feed_follows_after_a_resize(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        feed = await fill_feed(pilot, deck)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        assert feed.is_vertical_scroll_end
        send(deck, "new9")
        await wait_for(pilot, lambda: "new9" in feed.lines()[-1])
        await pilot.pause(0.1)
        assert "new9" in screen_text(deck)


async def test_feed_stays_where_the_person_scrolled(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        feed = await fill_feed(pilot, deck)
        feed.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause(0.1)
        await pilot.press("ctrl+t")
        await pilot.pause(0.1)
        send(deck, "not pulled into view")
        await wait_for(pilot, lambda: "not pulled into view" in feed.lines()[-1])
        await pilot.pause(0.1)
        assert feed.scroll_y == 0
        assert "not pulled into view" not in screen_text(deck)
        feed.scroll_end(animate=False, immediate=True)  # back at the end: following again
        await pilot.pause(0.1)
        send(deck, "followed again")
        await wait_for(pilot, lambda: "followed again" in feed.lines()[-1])
        await pilot.pause(0.1)
        assert "followed again" in screen_text(deck)


async def test_lead_transcript_follows_after_a_resize(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        lead = deck.screen.query_one("#lead", TranscriptTail)
        for i in range(20):
            runtime.emit(TranscriptEntry("team-lead", "notice", f"step {i}"))
        await wait_for(pilot, lambda: "step 19" in screen_text(deck))
        await pilot.press("ctrl+t")
        await pilot.pause(0.1)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        await pilot.press("ctrl+t")
        await pilot.pause(0.1)
        runtime.emit(TranscriptEntry("team-lead", "notice", "the last step"))
        await wait_for(pilot, lambda: "the last step" in screen_text(deck))
        assert lead.lines[-1] == "the last step"  # the newest line, at the bottom


async def test_a_transcript_keeps_following_when_a_widget_inside_scrolls_itself() -> None:
    """Textual scrolls a widget into view on its own (a tool call that folds or unfolds, a
    focused child), which let go of the newest line: the lead's transcript stopped following
    mid-run (a 'run finished' line never came into view). Only the person lets go."""
    from textual.app import App, ComposeResult

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield Transcript(id="t")

    app = One()
    async with app.run_test(size=(60, 12)) as pilot:
        transcript = app.query_one(Transcript)
        for i in range(30):
            transcript.add_entry(TranscriptEntry("team-lead", "assistant", f"line {i}"))
        await pilot.pause(0.1)
        assert transcript.is_vertical_scroll_end
        transcript.children[3].scroll_visible(animate=False)  # not the person
        await pilot.pause(0.1)
        transcript.add_entry(TranscriptEntry("team-lead", "assistant", "the newest line"))
        await pilot.pause(0.2)
        assert transcript.is_vertical_scroll_end
        assert "the newest line" in screen_text(app)

        transcript.focus()
        await pilot.press("pageup")  # the person scrolls up on purpose: it stays there
        await pilot.pause(0.1)
        transcript.add_entry(TranscriptEntry("team-lead", "assistant", "newer still"))
        await pilot.pause(0.2)
        assert not transcript.is_vertical_scroll_end

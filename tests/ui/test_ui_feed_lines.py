"""How a feed line reads: dated when not of today (by the injected clock), cut with "…"."""

from __future__ import annotations

from datetime import UTC, datetime

from textual.app import App, ComposeResult

from app.display.format import short_time
from app.display.values import FeedItem
from tests.ui.helpers import screen_text
from widgets.message_feed import MessageFeed

NOW = datetime(2026, 1, 8, 12, 0, tzinfo=UTC).timestamp()  # tests/ui runs in UTC


def test_short_time_dates_other_days() -> None:
    assert short_time("2026-01-08T09:30:05.000Z", NOW) == "09:30:05"
    assert short_time("2026-01-01T09:30:05.000Z", NOW) == "Jan 1 09:30"
    assert short_time("2025-12-31T23:59:00.000Z", NOW) == "2025-12-31 23:59"
    assert short_time("2026-01-01T09:30:05.000Z") == "09:30:05"  # no clock: as before


class FeedApp(App[None]):
    def compose(self) -> ComposeResult:
        yield MessageFeed(clock=lambda: NOW, id="feed")


async def test_feed_dates_old_lines_and_cuts_long_ones_with_an_ellipsis() -> None:
    app = FeedApp()
    async with app.run_test(size=(60, 10)) as pilot:
        app.query_one(MessageFeed).set_items(
            [
                FeedItem("2026-01-01T09:30:05.000Z", 1, "researcher", ("team-lead",), "old"),
                FeedItem("2026-01-08T11:00:00.000Z", 2, "engineer", ("team-lead",), "new"),
                FeedItem("2026-01-08T11:01:00.000Z", 3, "tester", ("team-lead",), "x" * 200),
            ]
        )
        await pilot.pause()
        rows = screen_text(app).splitlines()
        assert rows[0].startswith("Jan 1 09:30 researcher -> team-lead: old")
        assert rows[1].startswith("11:00:00 engineer -> team-lead: new")
        long = rows[2].rstrip()
        assert long.startswith("11:01:00 tester") and long.endswith("x…"), long

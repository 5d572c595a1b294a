"""Quitting while the team still talks: events that arrive as the views are taken down are
not handed to them (the recorder still gets them from the runtime)."""

from __future__ import annotations

from textual import events
from textual.message import Message

from app.core.paths import LEAD_NAME
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.leader import LeaderScreen
from app.runtime.events import TranscriptEntry
from tests.ui.fake_runtime import FakeRuntime


async def test_runtime_events_during_shutdown_reach_no_torn_down_view(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    flushed: list[str] = []

    def hook(message: Message) -> None:
        # The leader view's widgets are gone, the view itself is next: the team speaks, and a
        # flush is due right now.
        if isinstance(message, events.Unmount) and isinstance(message._sender, LeaderScreen):
            runtime.emit(TranscriptEntry(LEAD_NAME, "assistant", "still talking"))
            deck.flush_runtime()
            deck._tick()
            flushed.append("done")

    async with deck.run_test(size=(120, 40), message_hook=hook) as pilot:
        await pilot.pause()
    assert flushed == ["done"]

"""Opening an agent's view (issue 19, item 13): it opens at its end (the latest entries), filled
at once, and stays there while the older entries load above it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.dashboard.screens.agent import AgentScreen
from app.runtime.events import TranscriptEntry
from tests.ui.data import make_app, make_runtime
from tests.ui.helpers import screen_text, wait_for
from widgets.transcript import Transcript


def long_transcript(agent: str, n: int = 240) -> list[TranscriptEntry]:
    entries: list[TranscriptEntry] = []
    for i in range(n):
        if i % 3 == 0:
            entries.append(TranscriptEntry(agent, "user", f"prompt number {i}", {}))
        else:
            text = f"## Step {i}\n\nSome **markdown** text for step {i}:\n\n- one\n- two\n"
            entries.append(TranscriptEntry(agent, "assistant", text, {}))
    entries.append(TranscriptEntry(agent, "assistant", "THE LAST WORD", {}))
    return entries


@pytest.mark.parametrize("agent", ["researcher", "team-lead"])
async def test_a_view_opens_at_its_end_and_stays_there(tmp_path: Path, agent: str) -> None:
    runtime = make_runtime()
    runtime.transcripts[agent] = long_transcript(agent)
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: deck.loaded)
        await pilot.press("escape", "1" if agent == "researcher" else "0", "enter")
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        transcript = deck.screen.query_one(Transcript)
        seen: list[tuple[bool, float]] = []
        for _ in range(12):  # the first frames: at the end, the last entry shown, no jump
            await pilot.pause(0.05)
            at_end = transcript.scroll_y >= transcript.max_scroll_y - 1
            seen.append((("THE LAST WORD" in screen_text(deck)), at_end))
        assert all(shown and at_end for shown, at_end in seen), seen
        await wait_for(pilot, lambda: len(transcript.children) >= 200)  # the older ones too
        await pilot.pause(0.3)
        assert transcript.scroll_y >= transcript.max_scroll_y - 1
        assert "THE LAST WORD" in screen_text(deck)

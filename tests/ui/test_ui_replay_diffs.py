"""The replay's transcript shows each Edit/Write call's diff under it, at its moment: before
the call, no diff; from it on, the lines it changed."""

from __future__ import annotations

import json

from textual.widgets import Static

from app.archive.query import Event
from app.archive.replay import Replay
from app.dashboard.screens.replay import ReplayApp
from tests.ui.test_ui_replay import T0, synthetic_replay


def with_edits() -> Replay:
    base = synthetic_replay(3)
    events = list(base.events)
    n = len(events)

    def call(at: float, tool: str, data: dict[str, object]) -> None:
        nonlocal n
        n += 1
        raw = json.dumps({"input": data})
        events.append(Event(n, at, "transcript", "worker-1", tool, "tool_call", "", 0, raw))

    call(
        T0 + 10,
        "Edit",
        {"file_path": "/p/auth.py", "old_string": "return 0", "new_string": "return 3600"},
    )
    call(T0 + 11, "Write", {"file_path": "/p/notes.md", "content": "# Notes\nrefresh early\n"})
    agents = [
        {"name": a, "color": "blue"} for a in ("team-lead", "worker-1", "worker-2", "worker-3")
    ]
    return Replay(base.run, events, agents)


def feed(app: ReplayApp) -> str:
    return str(app.screen.query_one("#replay-lines", Static).render())


async def test_the_transcript_shows_each_edit_at_its_moment() -> None:
    replay = with_edits()
    app = ReplayApp(replay)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("down", "enter")  # worker-1's transcript
        await pilot.pause()
        text = feed(app)
        assert "calls Edit(" in text
        assert "-return 0" in text and "+return 3600" in text
        assert "+# Notes" in text and "+refresh early" in text
        await pilot.press("left")  # one event back: before the Write
        await pilot.pause()
        text = feed(app)
        assert "+return 3600" in text and "+refresh early" not in text
        await pilot.press("left")  # before the Edit too
        await pilot.pause()
        assert "+return 3600" not in feed(app)

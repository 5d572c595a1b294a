"""The dashboard on a real TeamRuntime (offline transport, scripted model) when the lead answers
the goal itself: one streamed text turn ending in ``end_turn``, no team created."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import runtime_factory
from app.dashboard.team_source import RuntimeSource
from app.runtime.model.client import make_client
from app.runtime.offline import ScriptedModel, reply, text
from tests.ui.helpers import screen_text, wait_for
from widgets.transcript_tail import TranscriptTail

ANSWER = "2 + 2 = 4, and no team is needed for that."


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


async def test_the_leads_own_answer_is_in_its_transcript(tmp_path: Path) -> None:
    model = ScriptedModel([reply(text(ANSWER))])
    home = Home(tmp_path / "home")
    factory = runtime_factory(
        home,
        cwd=tmp_path,
        decider="person",
        options={"client": make_client(handler=model, pace=0)},
    )
    app = TeamDeckApp(home, RuntimeSource(factory, goal="What is 2 + 2?"), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: ANSWER in screen_text(app), within=20)
        lead = app.screen.query_one("#lead", TranscriptTail)
        assert any(ANSWER in line for line in lead.lines)
        assert app.runtime is not None and app.runtime.status_of("team-lead") == "idle"
        assert home.teams.names() == []  # no team was created
        await pilot.press("ctrl+q")
    model.assert_done()

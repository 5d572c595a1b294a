"""Every change a view shows arrives as an event, and each fact has one owner: an agent's error
reaches its panel through ``ErrorChanged``; the last DM a panel shows is the files' (an idle
teammate shows it instead of its last tool)."""

from __future__ import annotations

from dataclasses import replace

from app.dashboard.app import TeamDeckApp
from app.display.values import TeamFiles, merge_agents
from app.runtime.api import AgentSnapshot
from app.runtime.events import AgentStatus, ErrorChanged
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import screen_text, wait_for


async def test_an_agents_error_reaches_its_panel_as_an_event(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: deck.loaded)
        error = "inbox unreadable: researcher.json"
        runtime.agents = [
            replace(a, error=error) if a.name == "researcher" else a for a in runtime.agents
        ]
        assert error not in screen_text(deck)  # nothing told the app yet
        runtime.emit(ErrorChanged("researcher", error))
        # (whole, over two rows of the panel: the roster's column is about 28 cells)
        await wait_for(
            pilot,
            lambda: (
                "✗ inbox unreadable:" in screen_text(deck)
                and "▌researcher.json" in screen_text(deck)
            ),
        )
        runtime.agents = [replace(a, error=None) for a in runtime.agents]
        runtime.emit(ErrorChanged("researcher", None))
        await wait_for(pilot, lambda: error not in screen_text(deck))


def test_the_last_dm_is_the_files_and_shows_once_the_teammate_is_idle() -> None:
    def snap(status: AgentStatus, activity: str) -> AgentSnapshot:
        return AgentSnapshot(
            "researcher",
            "cyan",
            status,
            started_at=T0,
            last_activity=activity,  # type: ignore[arg-type]
        )

    files = TeamFiles(team="alpha", last_dm={"researcher": "✉ analyst: found 3 files"})
    [idle] = merge_agents([snap("idle", "SendMessage message to analyst")], files)
    assert idle.last_activity == "✉ analyst: found 3 files"
    [running] = merge_agents([snap("running", "Read app.py")], files)
    assert running.last_activity == "Read app.py"  # what it does now
    [quiet] = merge_agents([snap("running", "")], files)
    assert quiet.last_activity == "✉ analyst: found 3 files"
    [none] = merge_agents([snap("idle", "Read app.py")], TeamFiles(team="alpha"))
    assert none.last_activity == "Read app.py"

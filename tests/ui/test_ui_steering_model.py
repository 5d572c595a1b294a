"""One steering model a newcomer guesses right (issue 19): typed text is never a command, ``r``
asks why in every mode, what ``a``/``r``/``v`` answer is shown before the key is pressed."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from app.dashboard.app import TeamDeckApp
from app.dashboard.messages import OpenAgent
from app.dashboard.screens.agent import AgentScreen
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import wait_for


async def loaded(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    await pilot.pause()
    return app


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


def steering_calls(runtime: FakeRuntime) -> list[tuple[object, ...]]:
    return [c for c in runtime.calls if c[0] not in ("stop", "inject_message", "submit")]


# ---------------------------------------------------------------------- item 1


async def test_a_teammate_finishing_while_its_message_is_typed_takes_no_keys(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    """The engineer (with a pending plan) completes while the person types to it: the input
    keeps focus and text, the rest of the letters are text (no a/r/v/s/K), and enter says the
    message was not sent, keeping the text."""
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        deck.post_message(OpenAgent("engineer"))
        await wait_for(pilot, lambda: isinstance(deck.screen, AgentScreen))
        screen = deck.screen
        inject = screen.query_one("#inject", Input)
        inject.focus()
        await pilot.pause()
        await type_text(pilot, "plea")
        runtime.set_status("engineer", "completed")
        await wait_for(pilot, lambda: deck.agent("engineer").status == "completed")  # type: ignore[union-attr]
        await pilot.pause()
        await type_text(pilot, "se avrsK")
        await pilot.pause()
        assert deck.focused is inject and not inject.disabled
        assert inject.value == "please avrsK"
        assert steering_calls(runtime) == []
        await pilot.press("enter")
        await pilot.pause()
        assert ("inject_message", "engineer", "please avrsK") not in runtime.calls
        assert "message not sent: engineer has finished" in notes(deck)
        assert inject.value == "please avrsK" and deck.focused is inject

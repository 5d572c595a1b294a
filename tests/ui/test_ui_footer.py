"""The key footer is rebuilt when the keys it shows change, and only then
(``widgets.footer.KeyFooter``): the views say their keys may have changed after every focus
move, resize and request, and rebuilding the same keys was half the CPU of the dashboard's
start."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.agent import AgentScreen
from tests.ui.helpers import ready, wait_for


def shown_keys(footer: Footer) -> list[FooterKey]:
    return list(footer.query(FooterKey))


async def test_the_footer_is_rebuilt_only_when_its_keys_change(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        app = await ready(pilot)
        footer = app.screen.query_one(Footer)
        keys = shown_keys(footer)
        assert {key.key for key in keys} >= {"a", "i", "question_mark", "ctrl+p"}

        for _ in range(3):  # the same keys: the same widgets stay
            app.screen.refresh_bindings()
            await pilot.pause()
        await pilot.pause()
        assert shown_keys(footer) == keys

        await pilot.press("i")  # typing: other keys
        await wait_for(pilot, lambda: "escape" in {key.key for key in shown_keys(footer)})
        assert "a" not in {key.key for key in shown_keys(footer)}
        await pilot.press("escape")
        await wait_for(pilot, lambda: "a" in {key.key for key in shown_keys(footer)})

        await pilot.resize_terminal(80, 24)  # narrow: compact, no palette key
        await wait_for(pilot, lambda: "ctrl+p" not in {key.key for key in shown_keys(footer)})
        assert footer.compact
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: "ctrl+p" in {key.key for key in shown_keys(footer)})


async def test_each_view_has_a_footer_of_its_own(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        app = await ready(pilot)
        await pilot.press("1", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AgentScreen))
        await wait_for(pilot, lambda: bool(shown_keys(app.screen.query_one(Footer))))
        assert app.screen.query_one(Footer) is not app.screen_stack[0].query_one(Footer)


async def test_a_narrow_footer_shows_the_palette_key_where_the_keys_leave_room(
    deck: TeamDeckApp,
) -> None:
    """At 80x24 ``^p palette`` was never shown, even where two keys left the row empty (the
    compose box's footer; after a run): issue 30, M5 "^p disappears"."""
    async with deck.run_test(size=(80, 24)) as pilot:
        app = await ready(pilot)
        footer = app.screen.query_one(Footer)
        await wait_for(pilot, lambda: "a" in {key.key for key in shown_keys(footer)})
        assert "ctrl+p" not in {key.key for key in shown_keys(footer)}  # a full row: no room
        await pilot.press("i")  # the compose box: f1 and esc only
        await wait_for(pilot, lambda: "ctrl+p" in {key.key for key in shown_keys(footer)})
        assert footer.compact
        await pilot.press("escape")
        await wait_for(pilot, lambda: "ctrl+p" not in {key.key for key in shown_keys(footer)})

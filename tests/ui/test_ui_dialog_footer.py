"""Over a dialog, the help screen or the palette, the footer shows what works there (issue 19:
"every footer key does what it says from where the focus is"). The view's footer under a
dialog named keys the dialog does not take (``a approve writer's plan`` under the quit
dialog, ``s Shutdown`` and ``K Kill`` under a permission request, ``⇧↓ Next`` under the
help): a newcomer pressing them got nothing."""

from __future__ import annotations

import re

import pytest
from textual.pilot import Pilot
from textual.screen import ModalScreen

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.confirm import ConfirmScreen
from app.dashboard.screens.help import HelpScreen
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.dashboard.screens.quit import QuitScreen
from tests.ui.helpers import ready, screen_text, wait_for

#: Words of the views' footer that no dialog binds.
VIEW_KEYS = ("s Shutdown", "K Kill", "v Review", "i Type", "Board", "Next", "Prev", "a approve ")


def footer_line(app: TeamDeckApp) -> str:
    return screen_text(app).rstrip("\n").splitlines()[-1]


async def opened(pilot: Pilot[None], app: TeamDeckApp, kind: type[ModalScreen[object]]) -> str:
    await wait_for(pilot, lambda: isinstance(app.screen, kind))
    await wait_for(pilot, lambda: footer_line(app).strip() != "")
    await pilot.pause(0.1)
    return footer_line(app)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_dialog_footer_shows_the_dialogs_keys(
    deck: TeamDeckApp, size: tuple[int, int]
) -> None:
    async with deck.run_test(size=size) as pilot:
        app = await ready(pilot)
        shown = {}

        await pilot.press("question_mark")
        shown["help"] = await opened(pilot, app, HelpScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModalScreen))

        await pilot.press("v")  # the oldest request: the engineer's plan
        shown["plan"] = await opened(pilot, app, PlanReviewScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModalScreen))

        await pilot.press("1", "v")  # the researcher's permission request
        shown["permission"] = await opened(pilot, app, PermissionScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModalScreen))

        await pilot.press("K")  # kill the researcher? The footer says what y does here
        shown["kill"] = await opened(pilot, app, ConfirmScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModalScreen))

        await pilot.press("ctrl+q")
        shown["quit"] = await opened(pilot, app, QuitScreen)

        for dialog, line in shown.items():
            for word in VIEW_KEYS:
                assert word not in line, f"{dialog}: the footer says {line!r}"
        assert "Close" in shown["help"]
        assert "Approve" in shown["plan"] and "Reject" in shown["plan"]
        assert "Allow once" in shown["permission"] and "Deny" in shown["permission"]
        assert "y Kill" in shown["kill"] and "n Cancel" in shown["kill"]  # as its buttons
        assert "Shut down" in shown["quit"] and "Cancel" in shown["quit"]
        # A gap between keys at every width (issue 30: at 80 columns the narrow style ran
        # them together, "y Allow onceA Always allown Deny").
        for dialog, line in shown.items():
            for glued in ("onceA", "allown", "Denyesc", "Closeesc", "Approver", "Rejectv"):
                assert glued not in line, f"{dialog}: the footer says {line!r}"
            assert re.search(r"[a-z][A-Z]|[a-z]esc", line) is None, f"{dialog}: {line!r}"

        await pilot.press("n")  # cancel: the view's own footer is back
        await wait_for(pilot, lambda: not isinstance(app.screen, ModalScreen))
        await wait_for(pilot, lambda: "Shutdown" in footer_line(app))


async def test_under_the_palette_the_views_keys_are_not_offered(deck: TeamDeckApp) -> None:
    """The palette takes letters as its search: the view's footer is not shown under it."""
    async with deck.run_test(size=(120, 40)) as pilot:
        app = await ready(pilot)
        await wait_for(pilot, lambda: "Shutdown" in footer_line(app))
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, ModalScreen))
        await pilot.pause(0.1)
        line = footer_line(app)
        for word in VIEW_KEYS:
            assert word not in line, f"the footer says {line!r}"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModalScreen))
        await wait_for(pilot, lambda: "Shutdown" in footer_line(app))

"""Helpers for the UI tests: wait for conditions, read the screen as text."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

from app.dashboard.app import TeamDeckApp
from tests.timing import scaled


async def wait_for(
    pilot: Pilot[object], condition: Callable[[], object], within: float = 5.0
) -> None:
    """Let the app run until ``condition()`` is true (AssertionError after ``within`` s)."""
    deadline = time.monotonic() + scaled(within)
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.02)
    await pilot.pause()


def screen_text(app: App[object]) -> str:
    """What the terminal shows, as plain text (one line per row)."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), force_terminal=True,
        color_system="truecolor", record=True, legacy_windows=False, safe_box=False,
    )  # fmt: skip
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    """The dashboard loaded, and out of the lead's input (which has focus at start): keys act."""
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    await pilot.press("escape")
    await pilot.pause()
    return app

"""Helpers for the UI tests: wait for conditions, read the screen as text."""

from __future__ import annotations

import contextlib
import inspect
import io
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from pytest_subtests import SubTests
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.leader import LeaderScreen
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


async def steady(pilot: Pilot[Any], within: float = 10.0, quiet: int = 3) -> None:
    """Let the app run until what it draws stops changing: the same text ``quiet`` looks in a
    row, 0.1 s apart (a snapshot taken on a loaded machine must not catch a frame half way).
    AssertionError if the screen is still changing after ``within`` s."""
    deadline = time.monotonic() + scaled(within)
    last, same = None, 0
    while same < quiet:
        if time.monotonic() > deadline:
            raise AssertionError("the screen kept changing")
        await pilot.pause(0.1)
        text = screen_text(pilot.app)
        same = same + 1 if text == last else 0
        last = text


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


async def at_the_leader(pilot: Pilot[None]) -> None:
    """Back where :func:`ready` leaves the dashboard: every dialog and view closed with esc,
    the lead's view showing, the lead selected, the keys acting (not typing)."""
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    for _ in range(6):
        if isinstance(app.screen, LeaderScreen):
            break
        await pilot.press("escape")
        await pilot.pause()
    await wait_for(pilot, lambda: isinstance(app.screen, LeaderScreen))
    await pilot.press("escape", "0")
    await pilot.pause()


class Steps:
    """The checks of one scenario, run in one app (starting the dashboard is the costly part
    of a UI test): each ``async with steps("name"):`` is a subtest that passes or fails under
    its own name, and a failing one does not stop the next. Each step starts from
    :func:`at_the_leader`, after ``before_each`` (e.g. emptying a FakeRuntime's call record;
    a coroutine function is awaited, e.g. to wait until requests answered before are pending
    again)."""

    def __init__(
        self,
        pilot: Pilot[None],
        subtests: SubTests,
        before_each: Callable[[], object] | None = None,
    ) -> None:
        self.pilot, self.subtests, self.before_each = pilot, subtests, before_each

    @contextlib.asynccontextmanager
    async def __call__(self, name: str) -> AsyncIterator[None]:
        with self.subtests.test(name):
            await at_the_leader(self.pilot)
            if self.before_each is not None:
                done = self.before_each()
                if inspect.isawaitable(done):
                    await done
            yield

"""What the person reads: selection, header, board, timers, plans, feed detail (issue 10)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.help import HelpScreen
from app.dashboard.screens.message import MessageScreen
from tests.ui.data import make_app, make_runtime
from tests.ui.helpers import screen_text, wait_for
from widgets.message_feed import MessageFeed
from widgets.teammate_panel import TeammatePanel

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    await pilot.press("escape")  # out of the lead's input: keys act
    await pilot.pause(0.1)
    return app


def rows(app: TeamDeckApp) -> list[str]:
    return screen_text(app).splitlines()


# ---------------------------------------------------------------------- item 9: selection


@SIZES
async def test_the_selected_teammate_is_marked(deck: TeamDeckApp, size: tuple[int, int]) -> None:
    async with deck.run_test(size=size) as pilot:
        await ready(pilot)
        for key, name in (("2", "engineer"), ("3", "tester")):
            await pilot.press(key)
            # (the needs-you line has its own ▶); the roster redraws in a later frame
            await wait_for(pilot, lambda name=name: any(name in r for r in marked(deck)))
            assert len(marked(deck)) == 1, marked(deck)


def marked(app: TeamDeckApp) -> list[str]:
    """The rows that carry the selection's ▶, the needs-you and footer lines aside."""
    return [r for r in rows(app)[:-2] if "▶" in r]


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light", "nord", "gruvbox"])
async def test_selection_stands_out_in_every_theme(deck: TeamDeckApp, theme: str) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        deck.theme = theme
        await pilot.press("1")
        await pilot.pause(0.1)
        panels = {p.agent.name: p for p in deck.screen.query(TeammatePanel)}
        chosen, other = panels["researcher"], panels["engineer"]
        a, b = chosen.styles.background, other.styles.background
        # Not a one-step grey: a clearly different colour (sum of channel differences).
        assert abs(a.r - b.r) + abs(a.g - b.g) + abs(a.b - b.b) >= 40, (a, b)


# ---------------------------------------------------------------------- item 12: header


@SIZES
async def test_header_fits_and_help_keeps_the_long_hint(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    deck = make_app(tmp_path, make_runtime(), demo=True)  # "demo" makes the line longer
    async with deck.run_test(size=size) as pilot:
        await ready(pilot)
        header = rows(deck)[0].rstrip()
        assert "…" not in header
        assert "3 teammates" in header and "3 " in header and "approvals" in header
        # Not cut: one of the header's whole forms (the cost ends every form but the last).
        assert header.endswith(("for Claude · $0", "offline · $0", "approvals · $0")), header
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(deck.screen, HelpScreen))
        await pilot.pause(0.1)
        assert "set ANTHROPIC_API_KEY for Claude" in screen_text(deck)


@SIZES
@pytest.mark.parametrize("state", ["sandbox", "no sandbox", "sandbox: no bwrap"])
async def test_header_shows_the_sandbox_within_the_width(
    tmp_path: Path, size: tuple[int, int], state: str
) -> None:
    runtime = make_runtime()
    runtime.sandbox_description = state  # what the runtime says of where commands run
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=size) as pilot:
        await ready(pilot)
        header = rows(deck)[0].rstrip()
        # Whole (a long team name may be shortened, as it is first at 80 columns).
        assert header.endswith((f"offline · {state} · $0", f"approvals · {state} · $0")), header


@pytest.mark.parametrize(
    ("state", "warned"), [("sandbox", False), ("no sandbox", True), ("sandbox: no bwrap", True)]
)
async def test_no_sandbox_is_in_the_warning_colour(
    tmp_path: Path, state: str, warned: bool
) -> None:
    from widgets.status_bar import StatusBar

    runtime = make_runtime()
    runtime.sandbox_description = state
    deck = make_app(tmp_path, runtime)
    async with deck.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        line = deck.screen.query_one(StatusBar).line
        start = line.plain.index(state, line.plain.index("offline"))
        styles = {str(span.style) for span in line.spans if span.start <= start < span.end}
        assert ("bold yellow" in styles) is warned, styles


def test_the_runtime_says_where_commands_run(tmp_path: Path) -> None:
    from app.runtime.sandbox import SandboxConfig, bwrap_problem
    from app.runtime.team.runtime import TeamRuntime

    def said(sandbox: SandboxConfig | None) -> str:
        return TeamRuntime(
            Home(tmp_path / "home"), cwd=tmp_path, sandbox=sandbox
        ).sandbox_description

    assert said(None) == "no sandbox"  # a library caller's runtime: unconfined
    assert said(SandboxConfig(enabled=False)) == "no sandbox"
    assert said(SandboxConfig()) == ("sandbox" if bwrap_problem() is None else "sandbox: no bwrap")


# ---------------------------------------------------------------------- item 14: feed detail


async def test_enter_on_a_feed_line_shows_the_whole_message(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        deck.screen.query_one(MessageFeed).focus()
        await pilot.press("enter")  # no cursor yet: the newest message
        await wait_for(pilot, lambda: isinstance(deck.screen, MessageScreen))
        assert "Thanks, starting on refresh now." in screen_text(deck)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(deck.screen, MessageScreen))
        await pilot.press("up", "up", "up", "up", "up", "enter")  # the plan request
        await wait_for(pilot, lambda: isinstance(deck.screen, MessageScreen))
        text = screen_text(deck)
        assert "plan approval requested" in text
        assert "plan content" in text and "# Plan: auth module" in text
        assert "plan_approval-1767225630000@engineer" in text  # the id a person may type
        assert '"type"' not in text and "{" not in text


async def test_clicking_a_feed_line_opens_it(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        feed = deck.screen.query_one(MessageFeed)
        first = feed.lines()[0]
        assert first.endswith("Survey auth/ and report the entry points.")
        await pilot.click(MessageFeed, offset=(3, 1))  # the first line (below the border)
        await wait_for(pilot, lambda: isinstance(deck.screen, MessageScreen))
        assert "Survey auth/ and report the entry points." in screen_text(deck)
        assert "summary: survey auth" in screen_text(deck)


# ---------------------------------------------------------------------- board at 80 columns


async def test_board_cuts_with_an_ellipsis_at_80_columns(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        text = screen_text(deck)
        assert "research…" in text and "Block…" in text
        assert "researche " not in text and "Blocke " not in text


# ---------------------------------------------------------------------- the palette


async def test_palette_lists_theme_once_and_shows_team_switching(tmp_path: Path) -> None:
    app = make_app(tmp_path, make_runtime())
    app.home.teams.create("beta", description="another team")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.5)
        assert "Switch team: beta" in screen_text(app)  # on the first page, no scrolling
        await pilot.press(*"theme")
        await pilot.pause(0.5)
        palette = app.screen
        hits = [str(o.prompt) for o in palette.query_one(OptionList).options]
        assert len([h for h in hits if "theme" in h.lower()]) == 1, hits

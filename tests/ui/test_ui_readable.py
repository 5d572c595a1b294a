"""What the person reads: selection, header, board, timers, plans, feed detail (issue 10).

The checks run as named steps (``Steps``) of one app per size: starting the dashboard is the
costly part of each. The header of the demo, longer, has apps of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_subtests import SubTests
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.help import HelpScreen
from app.dashboard.screens.message import MessageScreen
from tests.ui.data import make_app, make_runtime
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import Steps, ready, screen_text, wait_for
from widgets.message_feed import MessageFeed
from widgets.status_bar import StatusBar
from widgets.teammate_panel import TeammatePanel

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
SANDBOX_STATES = ("sandbox", "no sandbox", "sandbox: no bwrap")
#: Each state, and whether the header draws it in the warning colour.
WARNED = (("sandbox", False), ("no sandbox", True), ("sandbox: no bwrap", True))


def rows(app: TeamDeckApp) -> list[str]:
    return screen_text(app).splitlines()


def marked(app: TeamDeckApp) -> list[str]:
    """The rows that carry the selection's ▶, the needs-you and footer lines aside."""
    return [r for r in rows(app)[:-2] if "▶" in r]


async def the_selected_teammate_is_marked(pilot: Pilot[None], deck: TeamDeckApp) -> None:
    """Item 9: one ▶, on the teammate the digit selected."""
    for key, name in (("2", "engineer"), ("3", "tester")):
        await pilot.press(key)
        # (the needs-you line has its own ▶); the roster redraws in a later frame
        await wait_for(pilot, lambda name=name: any(name in r for r in marked(deck)))
        assert len(marked(deck)) == 1, marked(deck)


def searched(deck: TeamDeckApp, words: str) -> bool:
    """The command palette is open on ``words`` and has gathered every command that matches
    them (its search runs in a worker, the hits added as they come)."""
    palette = deck.screen
    if not isinstance(palette, CommandPalette) or palette.query_one(Input).value != words:
        return False
    group = CommandPalette._GATHER_COMMANDS_GROUP
    gathering = [w for w in deck.workers if w.node is palette and w.group == group]
    hits = palette.query_one(CommandList).option_count
    return hits > 0 and all(w.is_finished for w in gathering)


async def say_sandbox(pilot: Pilot[None], deck: TeamDeckApp, state: str) -> str:
    """The header once the runtime says ``state`` of where commands run (the header is
    computed again every second: done here at once), as its first row shows it."""
    runtime = deck.runtime
    assert isinstance(runtime, FakeRuntime)
    runtime.sandbox_description = state
    deck.header = deck.header_now()
    await wait_for(pilot, lambda: f" {state} · $0" in rows(deck)[0])
    return rows(deck)[0].rstrip()


async def header_shows_the_sandbox_within_the_width(
    pilot: Pilot[None], deck: TeamDeckApp, state: str
) -> None:
    header = await say_sandbox(pilot, deck, state)
    # Whole (a long team name may be shortened, as it is first at 80 columns).
    assert header.endswith((f"offline · {state} · $0", f"approvals · {state} · $0")), header


async def test_what_the_person_reads_at_120x40(tmp_path: Path, subtests: SubTests) -> None:
    runtime = make_runtime()
    deck = make_app(tmp_path, runtime)
    deck.home.teams.create("beta", description="another team")  # for the palette's step
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        step = Steps(pilot, subtests)

        async with step("item 9: the selected teammate is marked"):
            await the_selected_teammate_is_marked(pilot, deck)

        async with step("item 14: clicking a feed line opens it"):
            feed = deck.screen.query_one(MessageFeed)
            first = feed.lines()[0]
            assert first.endswith("Survey auth/ and report the entry points.")
            await pilot.click(MessageFeed, offset=(3, 1))  # the first line (below the border)
            await wait_for(pilot, lambda: isinstance(deck.screen, MessageScreen))
            assert "Survey auth/ and report the entry points." in screen_text(deck)
            assert "summary: survey auth" in screen_text(deck)

        async with step("the palette lists theme once and shows team switching"):
            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: searched(deck, ""))
            assert "Switch team: beta" in screen_text(deck)  # on the first page, no scrolling
            await pilot.press(*"theme")
            await wait_for(pilot, lambda: searched(deck, "theme"))
            palette = deck.screen
            hits = [str(o.prompt) for o in palette.query_one(OptionList).options]
            assert len([h for h in hits if "theme" in h.lower()]) == 1, hits

        for state in SANDBOX_STATES:
            async with step(f"item 12: the header shows {state!r} within the width"):
                await header_shows_the_sandbox_within_the_width(pilot, deck, state)

        for state, warned in WARNED:
            colour = "in the warning colour" if warned else "not in the warning colour"
            async with step(f"item 12: {state!r} is {colour}"):
                await say_sandbox(pilot, deck, state)
                line = deck.screen.query_one(StatusBar).line
                start = line.plain.index(state, line.plain.index("offline"))
                styles = {str(span.style) for span in line.spans if span.start <= start < span.end}
                assert ("bold yellow" in styles) is warned, styles

        # Last: each step leaves its theme.
        for theme in ("textual-dark", "textual-light", "nord", "gruvbox"):
            async with step(f"item 9: the selection stands out in {theme}"):
                deck.theme = theme
                await pilot.press("1")
                await pilot.pause(0.1)
                panels = {p.agent.name: p for p in deck.screen.query(TeammatePanel)}
                chosen, other = panels["researcher"], panels["engineer"]
                a, b = chosen.styles.background, other.styles.background
                # Not a one-step grey: a clearly different colour (sum of channel differences).
                assert abs(a.r - b.r) + abs(a.g - b.g) + abs(a.b - b.b) >= 40, (a, b)


async def test_what_the_person_reads_at_80x24(deck: TeamDeckApp, subtests: SubTests) -> None:
    async with deck.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        step = Steps(pilot, subtests)

        async with step("item 9: the selected teammate is marked"):
            await the_selected_teammate_is_marked(pilot, deck)

        async with step("the board cuts with an ellipsis at 80 columns"):
            text = screen_text(deck)
            assert "research…" in text and "Block…" in text
            assert "researche " not in text and "Blocke " not in text

        async with step("item 14: enter on a feed line shows the whole message"):
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

        for state in SANDBOX_STATES:
            async with step(f"item 12: the header shows {state!r} within the width"):
                await header_shows_the_sandbox_within_the_width(pilot, deck, state)


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

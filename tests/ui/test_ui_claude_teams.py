"""``teamdeck --claude``: which team is shown, and what the files say of it over time.

``--team NAME`` (the dashboard and the CLI), the palette's "Pick a team…", a quiet team shown
as stale (header with its last activity, panel timers stopped there), and a teammate that left
the config without a shutdown shown as gone. The home is the Node-built Claude Code home of
``tests/claude_home.py``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli
from app.core import Home, TeamMember
from app.dashboard.launch import build_dashboard
from app.dashboard.screens.team_picker import TeamPickerScreen
from app.display.format import format_elapsed
from app.runtime.by_files.status import STALE_AFTER, moment_text
from tests import claude_home as ch
from tests.ui.helpers import screen_text, wait_for

DAY = 24 * 3600.0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return ch.build(tmp_path / "claude")


@pytest.fixture
def home(root: Path) -> Home:
    return Home(root, lock_style="mkdir")


def quiet_team(home: Home, name: str, *, joined: float, last: float) -> None:
    """A team of two idle teammates that joined at ``joined`` and whose files last changed at
    ``last`` (epoch seconds)."""
    home.teams.create(name)
    for who in ("alice", "bob"):
        member = TeamMember(
            agent_id=f"{who}@{name}", name=who, joined_at=int(joined * 1000), is_active=False
        )
        home.teams.add_member(name, member)
    for path in [*(home.root / "teams" / name).rglob("*"), *(home.root / "tasks").rglob("*")]:
        os.utime(path, (last, last))


async def test_team_option_shows_that_team_and_asks_nothing(home: Home) -> None:
    quiet_team(home, "old-review", joined=time.time() - DAY, last=time.time() - DAY)
    app = build_dashboard(home, viewer=True, team="old-review")
    assert not app.pick_on_start  # a team was named: no picker
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.loaded and app.files.team == "old-review")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, TeamPickerScreen)
        assert [a.name for a in app.agents if not a.is_lead] == ["alice", "bob"]


def test_cli_team_option_reaches_the_dashboard(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import app.dashboard.launch

    shown: list[dict[str, Any]] = []

    def run_dashboard(home: Home, **options: Any) -> int:
        shown.append({"root": home.root, **options})
        return 0

    monkeypatch.setattr(app.dashboard.launch, "run_dashboard", run_dashboard)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    assert cli.main(["--claude", "tui", "--team", ch.TEAM]) == 0
    assert shown[0]["team"] == ch.TEAM and shown[0]["viewer"] is True
    assert shown[0]["root"] == root
    assert cli.main(["--claude", "tui", "--team", "no-such-team"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'no-such-team' does not exist" in err[0]
    assert len(shown) == 1


async def test_palette_pick_a_team_opens_the_picker(home: Home) -> None:
    quiet_team(home, "old-review", joined=time.time() - DAY, last=time.time() - DAY)
    app = build_dashboard(home, viewer=True, team=ch.TEAM)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.loaded and app.files.team == ch.TEAM)
        await pilot.press("escape", "ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"Pick a team")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TeamPickerScreen), within=10)
        picker = app.screen
        assert isinstance(picker, TeamPickerScreen)
        assert [s.name for s in picker.summaries] == [ch.TEAM, "old-review"]
        assert picker.current == ch.TEAM
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.files.team == "old-review", within=10)


async def test_a_quiet_team_is_stale_and_its_timers_stop(home: Home) -> None:
    # 140 columns: at 120 the header, which also holds the team's cost, says only "(stale)".
    now = time.time()
    joined, last = now - 8 * DAY, now - 7 * DAY  # a week without a change
    quiet_team(home, "weekly", joined=joined, last=last)
    app = build_dashboard(home, viewer=True, team="weekly")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.loaded and app.files.stale)
        assert app.files.last_activity == pytest.approx(last)
        expected = f"stale since {moment_text(last)}"
        await wait_for(pilot, lambda: expected in screen_text(app))
        frozen = format_elapsed(last - joined)  # 1d 0h, not 8d 0h and counting
        text = screen_text(app)
        assert frozen == "1d 0h"
        assert text.count(frozen) == 2 and "8d 0h" not in text
        alice = app.agent("alice")
        assert alice is not None and alice.ended_at == pytest.approx(last)
        await pilot.pause(1.3)  # a tick or more later: the same times
        assert screen_text(app).count(frozen) == 2


async def test_a_team_turns_stale_when_time_passes(home: Home) -> None:
    # 140 columns: at 120 the header, which also holds the team's cost, says only "(stale)".
    now = [time.time()]
    last = now[0] - STALE_AFTER + 60  # quiet, but not for long enough yet
    quiet_team(home, "weekly", joined=last - 600, last=last)
    app = build_dashboard(home, viewer=True, team="weekly")
    app.clock = lambda: now[0]
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.loaded and app.files.team == "weekly")
        await pilot.pause(1.2)
        assert not app.files.stale and "stale since" not in screen_text(app)
        now[0] += 120  # no file changes: the tick notices
        await wait_for(pilot, lambda: "stale since" in screen_text(app), within=5)
        assert app.files.stale


async def test_a_teammate_removed_from_the_config_is_gone(home: Home) -> None:
    home.teams.remove_member(ch.TEAM, name="writer")  # no shutdown: it just left the config
    app = build_dashboard(home, viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.loaded and app.agent("writer") is not None)
        writer = app.agent("writer")
        assert writer is not None and writer.status == "gone"
        assert app.header.teammates == 1  # researcher only
        text = screen_text(app)
        assert "gone" in text and "completed" not in text


async def test_no_claude_code_team_says_what_to_do(tmp_path: Path) -> None:
    """``teamdeck --claude`` with no team in Claude Code's home: one line says what to do, at
    80 columns (issue 30, M8: an empty dashboard, nothing said why)."""
    empty = Home(tmp_path / "claude", lock_style="mkdir")
    (tmp_path / "claude").mkdir()
    app = build_dashboard(empty, viewer=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.loaded)
        line = "No Claude Code team yet: start Claude Code; 2.1.332+: teamdeck claude setup"
        await wait_for(pilot, lambda: line in screen_text(app))

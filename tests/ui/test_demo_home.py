"""``teamdeck demo`` runs in a temporary home: removed when the demo ends (quit at the end,
ctrl+q mid-run, an exception), kept and named with ``--keep``. Driven through the CLI's
``main``, with the dashboard run headless under an auto-pilot (``TMPDIR`` points into the
test's own folder, so the test sees exactly what the demo leaves behind)."""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from app.cli.main import main
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import DEMO_PREFIX
from app.dashboard.screens.quit import QuitScreen
from tests.ui.helpers import wait_for

AutoPilot = Callable[[Pilot[Any]], Awaitable[None]]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary folder the demo's home goes into (``TMPDIR`` for this process)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return folder


def demo_homes(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{DEMO_PREFIX}*"))


def run_headless(monkeypatch: pytest.MonkeyPatch, pilot: AutoPilot) -> list[TeamDeckApp]:
    """Make ``TeamDeckApp.run`` headless, driven by ``pilot``; returns the apps run."""
    original = TeamDeckApp.run
    apps: list[TeamDeckApp] = []

    def run(self: TeamDeckApp, **_: Any) -> Any:
        apps.append(self)
        return original(self, headless=True, size=(120, 40), auto_pilot=pilot)

    monkeypatch.setattr(TeamDeckApp, "run", run)
    return apps


async def team_at_work(pilot: Pilot[Any], scratch: Path) -> None:
    """Wait until the demo's team exists in its temporary home and has teammates."""
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: len(app.agents) >= 3, within=60)
    [home] = demo_homes(scratch)
    assert app.home.root == home
    assert app.runtime is not None and app.runtime.team
    assert (home / "teams" / app.runtime.team / "config.json").exists()


def test_ctrl_q_mid_run_removes_the_demo_home(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def quit_mid_run(pilot: Pilot[Any]) -> None:
        await team_at_work(pilot, scratch)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, QuitScreen))
        await pilot.press("y")  # shut the team down and quit

    apps = run_headless(monkeypatch, quit_mid_run)
    assert main(["--home", str(tmp_path / "home"), "demo"]) == 0
    assert apps and apps[0].home.root.parent == scratch
    assert demo_homes(scratch) == []
    assert list(scratch.iterdir()) == []


def test_leaving_the_team_on_disk_keeps_the_demo_home_and_says_where(
    tmp_path: Path,
    scratch: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ "Leave on disk" is true in a demo too: its home is not deleted as the demo ends. The
    dialog and the exit lines name the command as it was started (after ``make run`` it is
    ``.venv/bin/teamdeck``, not on PATH: the "files are kept" line and the dialog said
    ``teamdeck`` where the resume line said ``.venv/bin/teamdeck``)."""
    monkeypatch.setattr("sys.argv", [".venv/bin/teamdeck", "demo"])
    monkeypatch.setattr("app.display.program.shutil.which", lambda name: None)
    dialog: list[str] = []

    async def leave(pilot: Pilot[Any]) -> None:
        await team_at_work(pilot, scratch)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, QuitScreen))
        question = pilot.app.screen.query_one(".dialog-question", Static).content
        dialog.append(question.plain if isinstance(question, Text) else str(question))
        await pilot.press("l")

    run_headless(monkeypatch, leave)
    assert main(["--home", str(tmp_path / "home"), "demo"]) == 0
    [home] = demo_homes(scratch)
    assert [p.name for p in (home / "teams").iterdir()]  # the team is there
    out = capsys.readouterr().out
    kept = f"the demo's files are kept in {home} (.venv/bin/teamdeck --home {home})"
    assert f"teamdeck: {kept}" in out, out
    assert "resume it with: .venv/bin/teamdeck --home" in out, out
    assert (
        f"kept (not deleted as the demo ends); .venv/bin/teamdeck --home {home} lists"
        in (dialog[0])
    ), dialog


def test_keep_leaves_the_demo_home_and_says_where(
    tmp_path: Path,
    scratch: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def quit_mid_run(pilot: Pilot[Any]) -> None:
        await team_at_work(pilot, scratch)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, QuitScreen))
        await pilot.press("l")  # leave the team on disk: it is there to look at

    run_headless(monkeypatch, quit_mid_run)
    assert main(["--home", str(tmp_path / "home"), "demo", "--keep"]) == 0
    [home] = demo_homes(scratch)
    assert [p.name for p in (home / "teams").iterdir()]  # the team's files are there
    assert f"teamdeck: the demo's files are kept in {home}" in capsys.readouterr().out


def test_an_exception_still_removes_the_demo_home(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Path] = []

    def crash(self: TeamDeckApp, **_: Any) -> Any:
        seen.append(self.home.root)
        assert demo_homes(scratch) == [self.home.root]
        raise RuntimeError("the terminal went away")

    monkeypatch.setattr(TeamDeckApp, "run", crash)
    with pytest.raises(RuntimeError, match="the terminal went away"):
        main(["--home", str(tmp_path / "home"), "demo"])
    assert seen and demo_homes(scratch) == []


def test_the_history_stays_in_the_persons_home(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is worth keeping (the run's record) is not in the temporary home."""

    async def quit_at_once(pilot: Pilot[Any]) -> None:
        await team_at_work(pilot, scratch)
        pilot.app.exit()

    run_headless(monkeypatch, quit_at_once)
    assert main(["--home", str(tmp_path / "home"), "demo"]) == 0
    assert demo_homes(scratch) == []
    assert (tmp_path / "home" / "history.db").exists()

"""Leaving (issue 10, item 15, and item 8): quitting with a live team asks; a team left on
disk is offered for cleanup at the next start; the demo's temporary home goes on exit."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.leaving import resume_line
from app.dashboard.screens.left_teams import LeftTeamsScreen
from app.dashboard.screens.quit import QuitScreen, ShuttingDownScreen
from app.dashboard.team_source import RuntimeSource
from app.runtime.api import AgentSnapshot, Answer
from tests.ui.data import TEAM, build_home, fixed_clock, make_app
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import screen_text, wait_for


async def loaded(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    return app


def question(app: TeamDeckApp) -> str:
    """The quit dialog's question, as one line."""
    return " ".join(str(app.screen.query_one(".dialog-question", Static).render()).split())


class StoppingRuntime(FakeRuntime):
    """Teammates answer a shutdown request at once (as the real ones do when idle)."""

    def request_shutdown(self, agent: str, reason: str | None = None) -> str:
        answer = super().request_shutdown(agent, reason)
        self.set_status(agent, "completed")
        return answer


async def test_quit_with_a_live_team_asks_and_cancel_stays(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(deck.screen, QuitScreen))
        text = screen_text(deck)
        assert "Shut down (y)" in text and "Leave on disk (l)" in text and "Cancel" in text
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(deck.screen, QuitScreen))
        assert deck.is_running
        assert [c for c in runtime.calls if c[0] == "request_shutdown"] == []


async def test_the_quit_question_counts_teammates_by_what_they_are_doing(tmp_path: Path) -> None:
    """Not "2 teammates still working" when one of them is idle: each live one by its state."""
    runtime = FakeRuntime(TEAM, [*_agents()])
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        text = question(app)
        assert "(2 teammates: 1 working, 1 idle)" in text, text
        assert "still working" not in text
        await pilot.press("n")
        runtime.set_status("researcher", "idle")
        await wait_for(pilot, lambda: app.agent("researcher").status == "idle")  # type: ignore[union-attr]
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        assert "(2 teammates idle)" in question(app)


async def test_leaving_a_demo_team_on_disk_says_its_home_is_kept(tmp_path: Path) -> None:
    """A demo's home is temporary: "Leave on disk" keeps it (and says where), so it is true."""
    runtime = FakeRuntime(TEAM, [*_agents()])
    app = make_app(tmp_path, runtime, demo=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        text = question(app)
        assert "the demo's home is kept" in text and f"teamdeck --home {tmp_path}" in text
        assert "listed the next time teamdeck starts" not in text
        await pilot.press("l")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.keep_home


async def test_quit_and_leave_the_team_on_disk(deck: TeamDeckApp, runtime: FakeRuntime) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(deck.screen, QuitScreen))
        await pilot.press("l")
        await wait_for(pilot, lambda: not deck.is_running)
    assert deck.home.teams.get(TEAM) is not None
    assert [c for c in runtime.calls if c[0] == "request_shutdown"] == []
    # The exit line gives the exact command that resumes it (issue 30: it gave none).
    assert deck.left_team == (TEAM, False)
    line = resume_line(deck.home.root, *deck.left_team)
    assert line.endswith(f" --home {deck.home.root} tui --team {TEAM}"), line


def test_the_resume_line_is_the_command_as_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``make run`` teamdeck is ``.venv/bin/teamdeck``, not on PATH: the line says so;
    the default home needs no ``--home``; a team left running is attached."""
    monkeypatch.setenv("TEAMDECK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr("sys.argv", [".venv/bin/teamdeck", "tui"])
    line = resume_line(tmp_path / "home", "alpha", True)
    assert (
        line == "teamdeck: team alpha left running; resume it with: .venv/bin/teamdeck attach alpha"
    )
    monkeypatch.setattr("sys.argv", ["/usr/bin/teamdeck"])
    monkeypatch.setenv("PATH", "/usr/bin")
    line = resume_line(tmp_path / "other", "my team", False)
    assert line.endswith(f"teamdeck --home {tmp_path / 'other'} tui --team 'my team'"), line


async def test_quit_shuts_the_team_down_by_default(tmp_path: Path) -> None:
    runtime = StoppingRuntime(TEAM, [*_agents()])
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("enter")  # the default
        await wait_for(pilot, lambda: not app.is_running, within=15)
    asked = [c[1] for c in runtime.calls if c[0] == "request_shutdown"]
    assert asked == ["researcher", "engineer"]  # the live ones, not the completed tester
    assert [c for c in runtime.calls if c[0] == "kill"] == []  # they all answered
    assert app.home.teams.get(TEAM) is None
    assert not (tmp_path / "tasks" / TEAM).exists()


async def test_quit_kills_teammates_that_do_not_answer(tmp_path: Path) -> None:
    runtime = FakeRuntime(TEAM, [*_agents()])
    app = make_app(tmp_path, runtime)
    app.SHUTDOWN_WAIT = 0.3
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, within=15)
    assert [c[1] for c in runtime.calls if c[0] == "kill"] == ["researcher", "engineer"]
    assert app.home.teams.get(TEAM) is None


async def test_shutting_down_shows_its_progress_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the moment "Shut down" is chosen: how many teammates stopped, who is awaited, and
    one line per teammate force-stopped. A working teammate's turn is interrupted before it
    is asked (so it reads the request now); an idle one is only asked."""

    class OneStops(FakeRuntime):
        def request_shutdown(self, agent: str, reason: str | None = None) -> Answer:
            answer = super().request_shutdown(agent, reason)
            if agent == "researcher":
                self.set_status(agent, "completed")
            return answer

    seen: list[str] = []
    show = ShuttingDownScreen.show

    def shown(screen: ShuttingDownScreen, stopped: set[str], note: str | None = None) -> None:
        show(screen, stopped, note)
        if not seen or seen[-1] != str(screen.text()):
            seen.append(str(screen.text()))

    monkeypatch.setattr(ShuttingDownScreen, "show", shown)
    runtime = OneStops(TEAM, [*_agents()])
    app = make_app(tmp_path, runtime)
    app.SHUTDOWN_WAIT = 0.5
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, within=15)
    assert seen[0].startswith(f"Shutting down {TEAM}: 2 teammates…"), seen
    assert any("1 of 2 stopped; waiting for engineer" in t for t in seen), seen
    assert any("force-stopping engineer (no answer in 0.5 s)" in t for t in seen), seen
    steps = [c[:2] for c in runtime.calls if c[0] in ("interrupt", "request_shutdown", "kill")]
    assert steps == [
        ("interrupt", "researcher"),  # working: its turn ends before it is asked
        ("request_shutdown", "researcher"),
        ("request_shutdown", "engineer"),  # idle: only asked
        ("kill", "engineer"),
    ]


async def test_quit_without_a_team_just_quits(tmp_path: Path) -> None:
    lead = AgentSnapshot(name="team-lead", color="blue", status="idle", is_lead=True, started_at=T0)
    runtime = FakeRuntime(team=None, agents=[lead])
    app = TeamDeckApp(
        Home(tmp_path), RuntimeSource(lambda w, s: runtime), clock=fixed_clock, watch=False
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running)


async def test_a_team_left_on_disk_is_offered_for_cleanup(tmp_path: Path) -> None:
    build_home(tmp_path)  # an earlier run's team, left behind
    lead = AgentSnapshot(name="team-lead", color="blue", status="idle", is_lead=True, started_at=T0)
    runtime = FakeRuntime(team=None, agents=[lead])
    app = TeamDeckApp(
        Home(tmp_path), RuntimeSource(lambda w, s: runtime), clock=fixed_clock, watch=False
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, LeftTeamsScreen))
        assert TEAM in screen_text(app)
        await pilot.press("d")
        # The team's folder goes first, then its task list: wait for both (a loaded worker
        # looked between the two).
        tasks = tmp_path / "tasks" / TEAM
        await wait_for(pilot, lambda: app.home.teams.get(TEAM) is None and not tasks.exists())


async def test_a_left_team_can_be_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept, the dialog's command resumes it as typed: ``teamdeck --team alpha`` looked in the
    default home and named a ``teamdeck`` not on PATH after ``make run``."""
    monkeypatch.setattr("sys.argv", [".venv/bin/teamdeck", "tui"])
    monkeypatch.setattr("app.display.program.shutil.which", lambda name: None)
    build_home(tmp_path)
    lead = AgentSnapshot(name="team-lead", color="blue", status="idle", is_lead=True, started_at=T0)
    runtime = FakeRuntime(team=None, agents=[lead])
    app = TeamDeckApp(
        Home(tmp_path), RuntimeSource(lambda w, s: runtime), clock=fixed_clock, watch=False
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, LeftTeamsScreen))
        shown = app.screen.resume  # type: ignore[attr-defined]
        assert shown == f".venv/bin/teamdeck --home {tmp_path} tui --team {TEAM}", shown
        question = app.screen.query_one(".dialog-question", Static).content
        assert isinstance(question, Text) and shown in question.plain, question
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, LeftTeamsScreen))
        assert app.home.teams.get(TEAM) is not None


def _agents() -> list[AgentSnapshot]:
    def snap(name: str, status: str, lead: bool = False) -> AgentSnapshot:
        return AgentSnapshot(name=name, color="blue", status=status, is_lead=lead, started_at=T0)  # type: ignore[arg-type]

    return [
        snap("team-lead", "running", True),
        snap("researcher", "running"),
        snap("engineer", "idle"),
        snap("tester", "completed"),
    ]

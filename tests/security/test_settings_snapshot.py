"""Hooks and permission rules are read once, when the run starts; a settings file changed
during the run (as a teammate's Write or Bash could) is shown to the person and used only once
they accept it. Headless, one line says so and nothing is applied. A teammate process uses its
lead's snapshot, never the files as they are when it starts."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.agent.team_hooks import hooks_of
from app.runtime.permissions import snapshot
from app.runtime.permissions.settings import load_settings
from app.runtime.team.lead_services import LeadServices
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import until

GUARD = 60.0


@pytest.fixture(autouse=True)
def _quick_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("app.runtime.team.settings_watch.POLL_S", 0.05)


def write_hook(project: Path, marker: Path, name: str = "settings.json") -> Path:
    """What a teammate would write: a TaskCompleted hook that runs a command of its choosing."""
    path = project / ".claude" / name
    path.parent.mkdir(exist_ok=True)
    hook = {"type": "command", "command": f"touch {marker}"}
    path.write_text(json.dumps({"hooks": {"TaskCompleted": [{"hooks": [hook]}]}}))
    return path


def settings_request(runtime: TeamRuntime) -> object:
    return next((a for a in runtime.approvals() if a.tool_name == "Settings"), None)


async def test_a_hook_written_during_the_run_runs_only_once_the_person_accepts_it(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    runtime = TeamRuntime(home, cwd=project, decider="person")
    runtimes.append(runtime)
    await runtime.start()
    hooks = hooks_of(runtime.lead_session)
    marker = project / "hook-ran"
    write_hook(project, marker)

    request = await until(lambda: settings_request(runtime), "the person asked", within=GUARD)
    assert request.agent == "team-lead" and request.kind == "permission"
    assert f"settings changed on disk: adds a TaskCompleted hook: touch {marker}" in request.title
    run = await hooks.fire("TaskCompleted")  # not accepted yet: the snapshot has no hook
    assert run.results == [] and not marker.exists()
    # The lead model cannot answer it for the person.
    services = LeadServices(runtime)
    said = services.answer_permission_from_lead(
        runtime.lead_session.identity, request.request_id, True, None
    )
    assert "The person decides" in said and settings_request(runtime) is not None

    assert runtime.answer_permission(request.request_id, True).ok
    await until(lambda: snapshot.current(project).hooks, "the change applied", within=GUARD)
    run = await hooks.fire("TaskCompleted")
    assert [r.outcome for r in run.results] == ["ok"] and marker.exists()


async def test_a_rejected_change_is_never_used(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    runtime = TeamRuntime(home, cwd=project, decider="person")
    runtimes.append(runtime)
    await runtime.start()
    marker = project / "hook-ran"
    local = project / ".claude" / "settings.local.json"
    write_hook(project, marker, name="settings.local.json")
    local.write_text(json.dumps({**json.loads(local.read_text()),
                                 "permissions": {"allow": ["Bash(*)"]}}))  # fmt: skip

    request = await until(lambda: settings_request(runtime), "the person asked", within=GUARD)
    assert "adds allow rule Bash(*)" in request.title
    assert runtime.answer_permission(request.request_id, False).ok
    assert "Bash(*)" not in [str(r) for r in runtime.rules.allow]
    run = await hooks_of(runtime.lead_session).fire("TaskCompleted")
    assert run.results == [] and not marker.exists()
    assert settings_request(runtime) is None  # asked once, not again for the same change


async def test_headless_says_it_in_one_line_and_applies_nothing(
    home: Home, project: Path, runtimes: list[TeamRuntime], caplog: pytest.LogCaptureFixture
) -> None:
    runtime = TeamRuntime(home, cwd=project, decider="lead", headless=True)
    runtimes.append(runtime)
    await runtime.start()
    marker = project / "hook-ran"
    with caplog.at_level(logging.WARNING):
        path = write_hook(project, marker)
        await until(
            lambda: [r for r in caplog.records if "settings changed on disk" in r.getMessage()],
            "the warning line",
            within=GUARD,
        )
    line = next(r.getMessage() for r in caplog.records if "settings changed" in r.getMessage())
    assert "\n" not in line and str(path) in line and "not applied" in line
    assert settings_request(runtime) is None
    run = await hooks_of(runtime.lead_session).fire("TaskCompleted")
    assert run.results == [] and not marker.exists()


def test_a_teammate_process_follows_its_leads_snapshot(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    kept = tmp_path / "settings.snapshot.json"
    snapshot.write_snapshot(kept, load_settings(project))  # taken at the run's start: no hook
    snapshot.follow(project, kept)
    write_hook(project, tmp_path / "ran")  # written later, e.g. before this teammate started
    assert snapshot.current(project).hooks == {}
    snapshot.write_snapshot(kept, load_settings(project))  # the person accepted it
    assert [h.command for h in snapshot.current(project).hooks["TaskCompleted"]] == [
        f"touch {tmp_path / 'ran'}"
    ]
    snapshot.forget(project)


async def test_the_dashboard_asks_and_a_accepts(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person sees the change in the approvals and answers it with the usual key."""
    from app.dashboard.app import TeamDeckApp
    from app.dashboard.launch import runtime_factory
    from app.dashboard.team_source import RuntimeSource
    from tests.ui.helpers import screen_text, wait_for

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    home = Home(tmp_path / "home")
    factory = runtime_factory(home, cwd=project, decider="person")
    app = TeamDeckApp(home, RuntimeSource(factory), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        runtime = app.runtime
        assert isinstance(runtime, TeamRuntime)
        await wait_for(pilot, lambda: runtime.settings_watch.accepted, within=GUARD)  # started
        write_hook(project, project / "hook-ran")
        await wait_for(pilot, lambda: "settings changed" in screen_text(app), GUARD)
        assert not snapshot.current(project).hooks
        await pilot.press("escape")  # out of the lead's input: keys act
        await pilot.press("a")
        await wait_for(pilot, lambda: bool(snapshot.current(project).hooks), within=GUARD)
        await pilot.press("ctrl+q")

"""Permission modes in the dashboard: shift+tab cycles the lead's, the header shows it, a
teammate's is chosen at spawn, and bypassPermissions needs the person's confirmation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from app.cli.modes import ModeOptions
from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.modes import BypassConfirmScreen, next_mode
from app.dashboard.screens.spawn_mode import SpawnModeScreen
from app.runtime.events import StatusChanged
from tests.ui.data import make_app, make_runtime
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for


class ModeRuntime(FakeRuntime):
    """A fake runtime whose lead mode can be switched (as ``TeamRuntime.set_lead_mode``)."""

    lead_mode = "default"
    teammate_mode = "default"
    allow_bypass = False

    def set_lead_mode(self, mode: str) -> None:
        self.calls.append(("set_lead_mode", mode))
        self.lead_mode = mode
        self.agents = [replace(a, mode=mode) if a.is_lead else a for a in self.agents]
        lead = self.agents[0]
        self.emit(StatusChanged(lead.name, lead.status))  # any agent event: the app re-reads


def mode_runtime() -> ModeRuntime:
    base = make_runtime()
    runtime = ModeRuntime(base.team, base.agents, base.approvals(), base.transcripts)
    return runtime


def test_cycle_order() -> None:
    assert next_mode("default", bypass_allowed=False) == "acceptEdits"
    assert next_mode("acceptEdits", bypass_allowed=False) == "plan"
    assert next_mode("plan", bypass_allowed=False) == "default"
    assert next_mode("plan", bypass_allowed=True) == "bypassPermissions"
    assert next_mode("bypassPermissions", bypass_allowed=True) == "default"
    assert next_mode("delegate", bypass_allowed=False) == "default"


async def test_shift_tab_cycles_and_the_header_shows_it(tmp_path: Path) -> None:
    runtime = mode_runtime()
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert "accept edits" not in screen_text(app)
        await pilot.press("shift+tab")
        await wait_for(pilot, lambda: "accept edits on" in screen_text(app).splitlines()[0])
        await pilot.press("shift+tab")
        await wait_for(pilot, lambda: "plan mode on" in screen_text(app).splitlines()[0])
        await pilot.press("shift+tab")
        await wait_for(pilot, lambda: "plan mode on" not in screen_text(app).splitlines()[0])
    assert [c for c in runtime.calls if c[0] == "set_lead_mode"] == [
        ("set_lead_mode", "acceptEdits"),
        ("set_lead_mode", "plan"),
        ("set_lead_mode", "default"),
    ]


async def test_bypass_is_confirmed_before_it_is_entered(tmp_path: Path) -> None:
    runtime = mode_runtime()
    app = make_app(tmp_path, runtime)
    app.mode_options = ModeOptions(
        confirm_bypass=True,
        requested_lead_mode="bypassPermissions",
        requested_teammate_mode="bypassPermissions",
    )
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BypassConfirmScreen))
        assert ("set_lead_mode", "bypassPermissions") not in runtime.calls
        await pilot.press("y")
        await wait_for(pilot, lambda: "bypass permissions on" in screen_text(app).splitlines()[0])
        assert runtime.teammate_mode == "bypassPermissions"
        assert runtime.allow_bypass  # the runtime accepts it now (spawns in it too)
        # Confirmed once: shift+tab now goes through bypassPermissions too.
        for _ in range(3):
            await pilot.press("shift+tab")
        await pilot.press("shift+tab")
        await wait_for(pilot, lambda: runtime.lead_mode == "bypassPermissions")
    modes = [c[1] for c in runtime.calls if c[0] == "set_lead_mode"]
    assert modes == ["bypassPermissions", "default", "acceptEdits", "plan", "bypassPermissions"]


async def test_declining_bypass_keeps_asking(tmp_path: Path) -> None:
    runtime = mode_runtime()
    app = make_app(tmp_path, runtime)
    app.mode_options = ModeOptions(confirm_bypass=True, requested_lead_mode="bypassPermissions")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BypassConfirmScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, BypassConfirmScreen))
        for _ in range(3):
            await pilot.press("shift+tab")
        await pilot.pause()
    modes = [c[1] for c in runtime.calls if c[0] == "set_lead_mode"]
    assert modes == ["acceptEdits", "plan", "default"]  # bypassPermissions never offered
    assert not runtime.allow_bypass


async def open_spawn_mode(app: TeamDeckApp, pilot: Pilot[None], name: str) -> None:
    """Palette -> Spawn teammate…, name, prompt: the mode picker is shown."""
    await wait_for(pilot, lambda: app.loaded)
    await pilot.press("escape")
    await pilot.press("ctrl+p")
    await pilot.press(*"Spawn teammate")
    await pilot.pause(0.3)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, FeedbackScreen))
    await pilot.press(*name, "enter")
    await wait_for(pilot, lambda: app.screen.query("#feedback") and not app.screen.query_one(
        "#feedback", Input).value)  # fmt: skip
    await pilot.press(*"work", "enter")
    await wait_for(pilot, lambda: isinstance(app.screen, SpawnModeScreen))


def spawns(runtime: FakeRuntime) -> list[tuple[object, ...]]:
    return [c for c in runtime.calls if c[0] == "spawn_teammate"]


async def test_a_teammate_is_spawned_in_the_mode_the_person_picks(tmp_path: Path) -> None:
    """Seed 000 §"Permission modes": "Teammates can run in different permission modes, set at
    spawn time". The picker lists the seeds' teammate modes, the team's highlighted."""
    runtime = mode_runtime()
    runtime.teammate_mode = "acceptEdits"
    app = make_app(tmp_path, runtime)
    app.mode_options = ModeOptions(teammate_mode="acceptEdits")
    async with app.run_test(size=(140, 40)) as pilot:
        await open_spawn_mode(app, pilot, "planner")
        text = screen_text(app)
        for mode in ("default", "acceptEdits (the team's)", "plan", "dontAsk"):
            assert mode in text
        assert "bypassPermissions" in text  # offered; confirmed before use
        picker = app.screen.query_one(OptionList)
        assert picker.highlighted == 1
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: spawns(runtime))
    assert spawns(runtime) == [("spawn_teammate", "planner", "work", False, "plan")]


async def test_spawning_in_bypass_asks_for_the_confirmation_first(tmp_path: Path) -> None:
    """Seed 000: bypassPermissions "requires flag"; in the dashboard the confirmation stands for
    it. Declined: no teammate; confirmed: the teammate and the runtime get it."""
    runtime = mode_runtime()
    app = make_app(tmp_path, runtime)
    app.mode_options = ModeOptions()
    async with app.run_test(size=(140, 40)) as pilot:
        for answer in ("n", "y"):
            await open_spawn_mode(app, pilot, "prober")
            await pilot.press("end", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, BypassConfirmScreen))
            await pilot.press(answer)
            await wait_for(pilot, lambda: not isinstance(app.screen, BypassConfirmScreen))
            await pilot.pause()
            if answer == "n":
                assert spawns(runtime) == [] and not runtime.allow_bypass
        await wait_for(pilot, lambda: spawns(runtime))
    assert spawns(runtime) == [("spawn_teammate", "prober", "work", False, "bypassPermissions")]
    assert runtime.allow_bypass and app.mode_options.bypass_allowed


async def test_bypass_is_not_offered_when_a_settings_file_disabled_it(tmp_path: Path) -> None:
    """Seed 001 §7: bypassPermissions "Can be disabled via ... permissions.
    disableBypassPermissionsMode": the picker does not list it."""
    runtime = mode_runtime()
    app = make_app(tmp_path, runtime)
    app.mode_options = ModeOptions(bypass_disabled=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await open_spawn_mode(app, pilot, "prober")
        assert "bypassPermissions" not in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
    assert spawns(runtime) == []

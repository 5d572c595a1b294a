"""The lead's permission mode in the dashboard: shift+tab cycles it, the header shows it, and
bypassPermissions needs the person's confirmation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.cli_modes import ModeOptions
from app.runtime.events import StatusChanged
from app.screens.modes import BypassConfirmScreen, next_mode
from tests.ui.data import make_app, make_runtime
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for


class ModeRuntime(FakeRuntime):
    """A fake runtime whose lead mode can be switched (as ``TeamRuntime.set_lead_mode``)."""

    lead_mode = "default"
    teammate_mode = "default"
    bypass_allowed = False

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

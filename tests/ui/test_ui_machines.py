"""A team across machines: the dashboard names each agent's machine, on its panel and in its
agent view; a hostile machine name (a joined machine registers its own) reaches the terminal
inert. (A team on one machine shows none: the panels' snapshot tests draw it.)"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.dashboard.screens.agent import AgentScreen
from tests.ui.data import agents, build_home, make_app
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import ready, screen_text, wait_for
from tests.ui.test_ui_agent_text import HOSTILE, assert_inert

MACHINES = {"team-lead": "desk-box", "researcher": "gpu-box", "engineer": "desk-box"}


async def test_each_agents_machine_is_named_on_its_panel_and_in_its_view(tmp_path: Path) -> None:
    build_home(tmp_path)
    team = [replace(a, machine=MACHINES.get(a.name, HOSTILE)) for a in agents()]
    runtime = FakeRuntime("alpha", agents=team)
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(pilot)
        text = assert_inert(app)
        assert "on gpu-box" in text and text.count("on desk-box") == 2
        await pilot.press("1", "enter")  # the researcher, on the joined machine
        await wait_for(pilot, lambda: isinstance(app.screen, AgentScreen))
        await wait_for(pilot, lambda: "researcher · idle · on gpu-box" in screen_text(app))

"""A permission request nobody answers in time (``--permission-timeout``): the dashboard says
so in a toast and the request leaves the Approvals box; in its last minute its row shows the
time left. A real TeamRuntime (offline transport, scripted model) whose lead runs a command."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import runtime_factory
from app.dashboard.team_source import RuntimeSource
from app.runtime.model.client import make_client
from app.runtime.offline import ScriptedModel, reply, text, tool_use
from tests.ui.helpers import screen_text, wait_for
from widgets.approvals import ApprovalsQueue

GOAL = "Make a file."


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def deck(tmp_path: Path, timeout: float, clock: list[float] | None = None) -> TeamDeckApp:
    """The dashboard on a runtime whose lead asks to run ``touch made.txt`` (``clock``: the
    app's time, set by the test; else the real one)."""
    model = ScriptedModel(
        [reply(tool_use("Bash", {"command": "touch made.txt"})), reply(text("ok"))]
    )
    home = Home(tmp_path / "home")
    options = {"client": make_client(handler=model, pace=0), "permission_timeout": timeout}
    factory = runtime_factory(home, cwd=tmp_path, decider="person", options=options)
    extra = {"clock": lambda: clock[0]} if clock is not None else {}
    return TeamDeckApp(home, RuntimeSource(factory, goal=GOAL), watch=False, **extra)


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in [*app._notifications, *app.waiting_toasts]]


def queue_text(app: TeamDeckApp) -> str:
    queue = app.screen.query_one(ApprovalsQueue)
    return "\n".join(str(queue.get_option_at_index(i).prompt) for i in range(queue.option_count))


async def test_a_request_that_times_out_is_told_and_leaves_the_approvals_box(
    tmp_path: Path,
) -> None:
    app = deck(tmp_path, timeout=0.5)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "Bash" in queue_text(app), within=20)
        told = "team-lead's permission request timed out after 0.5s: denied"
        await wait_for(pilot, lambda: told in notes(app), within=20)
        await wait_for(pilot, lambda: "nothing to approve" in queue_text(app))
        assert app.approvals == ()
        assert not (tmp_path / "made.txt").exists()
        await pilot.press("ctrl+q")


async def test_the_last_minute_of_a_request_counts_down_in_its_row(tmp_path: Path) -> None:
    now = [0.0]
    app = deck(tmp_path, timeout=300, clock=now)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.approvals, within=20)
        [asked] = app.approvals
        now[0] = asked.created_at + 200  # 100 s left: no countdown yet
        await pilot.pause(1.2)  # one tick of the once-a-second timer
        assert "left" not in queue_text(app)
        now[0] = asked.created_at + 258
        await wait_for(pilot, lambda: "0:42 left" in queue_text(app))
        now[0] = asked.created_at + 299.5
        await wait_for(pilot, lambda: "0:01 left" in queue_text(app))
        assert "0:01 left" in screen_text(app)
        now[0] = asked.created_at + 301  # the asker stopped waiting (its row goes when told)
        await wait_for(pilot, lambda: "timed out" in queue_text(app))
        await pilot.press("ctrl+q")

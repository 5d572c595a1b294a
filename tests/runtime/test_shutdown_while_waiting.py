"""``s`` on a teammate waiting for an answer (issue 19, item 7): its permission request is
answered "no" at once ("teammate shutting down"), the queue drops it, and the teammate shuts
down instead of staying "stopping" with the request queued -- in every teammate mode."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.core import Home
from app.runtime.api import Approval
from app.runtime.offline.goal_words import COUNT_LINES
from app.runtime.team.answers import SHUTTING_DOWN
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Router, Script, frames_in, until
from tests.runtime.test_runtime_api import create_team

#: Starting a teammate process on a loaded 2-core machine takes a while (a hang guard only).
GUARD = 120.0


async def researcher_asks(runtime: TeamRuntime, home: Home) -> tuple[str, Approval]:
    """Start ``runtime``, create a team and a task, and spawn a researcher whose task asks
    to count lines (``wc -l``): the team's name and the researcher's request once queued."""
    await runtime.start()
    team = await create_team(runtime)
    home.tasks(team).create("Inventory the files")
    await runtime.spawn_teammate(
        "researcher",
        f"Your task is #1: Inventory the files (action: inventory, files: **/*). {COUNT_LINES}",
    )
    [asked] = await until(
        lambda: [a for a in runtime.approvals() if a.agent == "researcher"],
        "the researcher's wc -l request",
        GUARD,
    )
    return team, asked


def status(runtime: TeamRuntime, name: str) -> str | None:
    found = [a for a in runtime.snapshot() if a.name == name]
    return found[0].status if found else None


@pytest.mark.parametrize("backend", ["in-process", "process"])
async def test_shutting_down_a_teammate_that_waits_for_a_permission(
    make_runtime: Callable[..., TeamRuntime], home: Home, backend: str
) -> None:
    runtime = make_runtime(Router(team_lead=Script(then="Noted.")), teammate_backend=backend)
    team, asked = await researcher_asks(runtime, home)
    assert asked.kind == "permission"

    runtime.request_shutdown("researcher")
    assert [a for a in runtime.approvals() if a.agent == "researcher"] == []  # dropped at once
    [answer] = frames_in(home, team, "researcher", "permission_response")
    assert answer["request_id"] == asked.request_id and answer["subtype"] == "error"
    assert answer["error"] == SHUTTING_DOWN
    await until(
        lambda: (
            status(runtime, "researcher") in ("completed", None) or "researcher" in runtime.departed
        ),
        "the researcher shut down",
        GUARD,
    )
    assert frames_in(home, team, "team-lead", "shutdown_approved")

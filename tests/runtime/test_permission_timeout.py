"""A teammate's permission request nobody answers within ``permission_timeout``
(``--permission-timeout``): the teammate is told no, and the lead's runtime closes the request
("timed out"), whether the teammate runs in-process or as a process of its own (whose log
says it stopped waiting)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.core import Home
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Observer, Router, Script, until
from tests.runtime.test_shutdown_while_waiting import researcher_asks

#: Starting a teammate process on a loaded 2-core machine takes a while (a hang guard only).
GUARD = 120.0
#: Short, but long enough for the request to be queued before it times out.
TIMEOUT = 3.0


@pytest.mark.parametrize("backend", ["in-process", "process"])
async def test_an_unanswered_teammate_request_is_closed_as_timed_out(
    make_runtime: Callable[..., TeamRuntime], home: Home, backend: str
) -> None:
    runtime = make_runtime(
        Router(team_lead=Script(then="Noted.")),
        teammate_backend=backend,
        permission_timeout=TIMEOUT,
    )
    observer = Observer(runtime)
    _team, asked = await researcher_asks(runtime, home)
    closed = await until(
        lambda: [e for e in observer.approvals("permission", resolved=True)],
        "the request closed",
        GUARD,
    )
    assert [(e.request_id, e.agent, e.outcome) for e in closed] == [
        (asked.request_id, "researcher", "timed out")
    ]
    assert [a for a in runtime.approvals() if a.agent == "researcher"] == []
    answer = runtime.answer_permission(asked.request_id, True)
    assert answer.text == "already resolved (timed out)"

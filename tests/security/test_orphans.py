"""Teammate processes nobody leads any more, and requests nobody can answer.

- A team left running whose teammate died meanwhile: ``attach`` does not queue that
  teammate's plan request again as if it could still be answered.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from app.core import Home
from app.runtime.api import AnswerStatus
from app.runtime.events import StatusChanged
from app.runtime.runners.process_record import pid_exists
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Observer, until
from tests.runtime.test_teammate_modes import GOAL, GUARD


async def test_attach_does_not_raise_a_dead_teammates_plan_request_again(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    first = TeamRuntime(home, cwd=project, decider="person", teammate_backend="process")
    runtimes.append(first)
    await first.start()
    first.submit(GOAL)
    plan = await until(
        lambda: next((a for a in first.approvals() if a.kind == "plan"), None),
        "a plan request",
        within=GUARD,
    )
    team = first.team
    assert team is not None
    pid = first.runners[plan.agent].pid
    assert pid is not None
    await first.stop()  # quit, leaving the team running
    os.kill(pid, signal.SIGKILL)  # the teammate dies while no dashboard is open
    await until(lambda: not pid_exists(pid), "the teammate's process to end", within=GUARD)

    second = TeamRuntime(
        home, cwd=project, decider="person", teammate_backend="process", attach=team
    )
    runtimes.append(second)
    seen = Observer(second)
    await second.start()
    await until(lambda: plan.agent in second.departed, "the dead teammate reaped", within=GUARD)
    scan = second.lead_inbox._scan  # the lead's inbox as attach read it
    await until(lambda: scan is None or scan.done(), "the lead's inbox read", within=GUARD)
    assert plan.request_id not in [a.request_id for a in second.approvals()]
    # Never shown as pending, not even for a moment, and not answerable as if it were live.
    assert [e for e in seen.approvals(resolved=False) if e.request_id == plan.request_id] == []
    answer = second.approve_plan(plan.request_id)
    assert answer.status != AnswerStatus.DONE
    # The person is told why it went: the teammate's failure names the dropped request.
    await until(lambda: "failed" in seen.statuses(plan.agent), "the reaping shown", within=GUARD)
    why = [e.detail for e in seen.of(StatusChanged) if e.agent == plan.agent][-1]
    assert "plan request" in why and "dropped" in why

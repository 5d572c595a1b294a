"""A team's teammate processes are checked (log, record, ``/proc``) once a ``CHECK_S`` each,
and the checks of teammates spawned together are spread over that second rather than falling
in one turn of the dashboard's loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.runtime.runners import external
from app.runtime.runners.external import CHECK_S, check_phase


def test_a_team_of_fifty_checks_spread_over_the_second() -> None:
    names = [f"mate-{i}" for i in range(1, 51)] + ["researcher", "writer", "tester", "coder"]
    phases = [check_phase(name) for name in names]
    assert all(0 <= p < 1 for p in phases)
    per_tenth = [sum(1 for p in phases if k / 10 <= p < (k + 1) / 10) for k in range(10)]
    assert max(per_tenth) <= len(names) // 5, per_tenth  # all at once before: 54 in one
    assert check_phase("mate-1") == check_phase("mate-1")  # the same each run


async def test_a_monitor_waits_its_phase_before_its_first_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 2:
            runner._finished = True

    class Spec:
        name = "mate-7"

    runner: Any = external.ExternalRunner.__new__(external.ExternalRunner)
    runner.spec = Spec()
    runner._finished = False
    runner._check = lambda: None
    monkeypatch.setattr(external.asyncio, "sleep", sleep)
    await asyncio.wait_for(runner._run_monitor(), 5)
    assert slept == [CHECK_S * check_phase("mate-7"), CHECK_S]

"""``join`` collects the teammate process it started as soon as it ends: a teammate killed
mid-turn from the lead's dashboard (``K``) writes its exit line before its process is gone,
and the process must not stay a zombie in the process table of the process that runs
``join``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.home import Home
from app.core.models import TeamMember
from app.engine.relay import Relay
from app.runtime.runners.process_record import pid_exists
from app.runtime.team.joined import Joined
from tests.engine.pg import Engine, team_home
from tests.timing import scaled


async def _until(check: Callable[[], object], what: str, within: float = 30.0) -> None:
    give_up = time.monotonic() + scaled(within)
    while not check():
        assert time.monotonic() < give_up, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def _in_process_table(pid: int) -> bool:
    """Whether ``pid`` has an entry in the process table, a zombie's included."""
    return Path(f"/proc/{pid}").exists()


async def test_join_collects_a_teammate_killed_mid_turn(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offline model waits ten minutes before its first word: K arrives mid-turn.
    monkeypatch.setenv("TEAMDECK_OFFLINE_TTFT", "600")
    team = engine.team(["gpu"])
    first = team_home(tmp_path / "first", team.name, "gpu")
    member = TeamMember(agent_id=f"gpu@{team.name}", name="gpu", prompt="Profile the kernels")
    desk = Relay(first, team.name, team.desk_url, member="team-lead", desk=True, key=None,
                 machine="desk-box")  # fmt: skip
    (tmp_path / "far").mkdir()
    joined = Joined(Home(tmp_path / "second"), team.urls["gpu"], folder=tmp_path / "far",
                    offline=True, interval=0.05)  # fmt: skip
    job = asyncio.ensure_future(joined.run())

    def turn_started() -> bool:
        assert joined.runner is not None
        joined.runner.on_log()
        return any(e.kind == "user" for e in joined.runner.transcript())

    try:
        desk.place("gpu", member.to_json_dict(), "gpu-box")
        await _until(lambda: job.done() or (joined.runner is not None and joined.runner.pid),
                     "the joined machine to start gpu")  # fmt: skip
        assert not job.done() and joined.runner is not None
        pid = joined.runner.pid
        assert pid is not None and pid_exists(pid)
        await _until(turn_started, "gpu's first turn")

        await asyncio.to_thread(desk.kill, "gpu")  # the lead's K, mid-turn
        assert await asyncio.wait_for(job, scaled(30)) == 0
        assert joined.runner.finished and joined.runner.snapshot().status == "killed"
        # This process ran ``join`` and still holds its runner: nobody else waits for the
        # child. It is gone from the process table, not left a zombie.
        await _until(lambda: not _in_process_table(pid), "gpu's process to be collected",
                     within=15)  # fmt: skip
    finally:
        if not job.done():
            job.cancel()
            with contextlib.suppress(BaseException):
                await job
        desk.close()

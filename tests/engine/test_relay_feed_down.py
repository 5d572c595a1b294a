"""A relay whose engine is down when it starts: its passes fail and its feed cannot start. Once
the engine is back it catches up (what both machines wrote meanwhile crosses once) and its
feed starts, so a later change on the other machine reaches it by the feed's wake, not by the
interval (an hour here)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.core.models import InboxMessage
from app.engine import pace
from app.engine.relay import Relay
from app.engine.watch import EngineFeed
from tests.engine.pg import Engine, desk_and_gpu, until


def _feeds(relay: Relay) -> int:
    return sum(isinstance(source, EngineFeed) for source in relay.pace.watching)


async def test_a_relay_started_with_the_engine_down_catches_up_when_it_is_back(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pace, "WATCH_AGAIN", 0.5)
    team = engine.team(["gpu"])
    first, second, desk, gpu = desk_and_gpu(team, tmp_path)
    task = first.tasks(team.name).create("train")
    engine.server.kill()
    runs: list[asyncio.Task[None]] = []
    try:
        runs = [asyncio.create_task(r.run()) for r in (desk, gpu)]
        # Both machines write while the engine is away; neither relay has its feed.
        second.mailbox(team.name).send("team-lead", InboxMessage(sender="gpu", text="up?"))
        first.mailbox(team.name).send("gpu", InboxMessage(sender="team-lead", text="train"))
        await asyncio.sleep(1.0)
        assert _feeds(desk) == 0 and _feeds(gpu) == 0 and desk.passes == 0 == gpu.passes
        await asyncio.to_thread(engine.server.start)
        await until(lambda: _feeds(desk) == 1 and _feeds(gpu) == 1)
        await until(lambda: len(first.mailbox(team.name).read("team-lead")) == 1)
        await until(lambda: len(second.mailbox(team.name).read("gpu")) == 1)
        await until(lambda: second.tasks(team.name).get(task.id) is not None)
        # From now on the feeds carry the changes: the interval is an hour.
        second.mailbox(team.name).send("team-lead", InboxMessage(sender="gpu", text="done"))
        await until(lambda: len(first.mailbox(team.name).read("team-lead")) == 2)
        first.tasks(team.name).update(task.id, status="completed")
        await until(lambda: second.tasks(team.name).require(task.id).status == "completed")
    finally:
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
        for relay in (desk, gpu):
            relay.close()
        if engine.server.pid() is None:
            engine.server.start()
    assert [m.text for m in first.mailbox(team.name).read("team-lead")] == ["up?", "done"]
    assert [m.text for m in second.mailbox(team.name).read("gpu")] == ["train"]

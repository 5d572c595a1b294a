"""``Sync`` running on two homes at once: a message written into a remote teammate's inbox
file on the lead's machine reaches the teammate's file on the other machine, and its reply
comes back, without anyone calling a pass by hand."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from app.core.models import InboxMessage
from app.engine.link import Link
from app.engine.sync import Sync
from tests.engine.pg import Engine, team_home


async def _until(check: object) -> None:
    assert callable(check)
    give_up = time.monotonic() + 60
    while not check():
        assert time.monotonic() < give_up, "timed out"
        await asyncio.sleep(0.02)


async def test_two_machines_in_sync_deliver_each_way_once(engine: Engine, tmp_path: Path) -> None:
    team = engine.team(["gpu"])
    first, second = (
        team_home(tmp_path / "first", team.name, "gpu"),
        team_home(tmp_path / "second", team.name, "gpu"),
    )
    with Link(team.desk_url) as desk, Link(team.urls["gpu"]) as gpu:
        lead = Sync(
            first,
            team.name,
            team.desk_url,
            local={"team-lead", "user"},
            links={"team-lead": desk},
            desk=True,
        )
        remote = Sync(second, team.name, team.urls["gpu"], local={"gpu"}, links={"gpu": gpu})
        ready = [asyncio.Event(), asyncio.Event()]
        tasks = [asyncio.create_task(lead.run(ready[0])), asyncio.create_task(remote.run(ready[1]))]
        try:
            await asyncio.gather(*(r.wait() for r in ready))
            await asyncio.to_thread(
                first.mailbox(team.name).send,
                "gpu",
                InboxMessage(sender="team-lead", text="train it"),
            )
            await _until(lambda: len(second.mailbox(team.name).read("gpu")) == 1)
            await asyncio.to_thread(
                second.mailbox(team.name).send,
                "team-lead",
                InboxMessage(sender="gpu", text="done"),
            )
            await _until(lambda: len(first.mailbox(team.name).read("team-lead")) == 1)
            for side in (lead, remote):  # another pass changes nothing
                assert await asyncio.to_thread(side.one_pass) == (0, 0)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            lead.close()
            remote.close()
    assert [m.text for m in second.mailbox(team.name).read("gpu")] == ["train it"]
    assert [m.text for m in first.mailbox(team.name).read("team-lead")] == ["done"]

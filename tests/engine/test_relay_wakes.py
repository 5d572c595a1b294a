"""The runtime's relays pass when something changes, not only every ``interval``: a message
a teammate writes on one machine reaches its recipient's file on another through the engine's
wake (``LISTEN``) and the files' watcher, with the interval set to an hour, so the path a
message takes between teammates is the one ``bench/engine.py`` measures (a send, its wake,
one read) plus a pass on each side."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

import pytest

from app.core.models import InboxMessage
from app.engine.relay import Relay
from tests.engine.pg import Engine, desk_and_gpu, team_home, until


async def test_relays_pass_on_a_change_not_on_the_interval(engine: Engine, tmp_path: Path) -> None:
    team = engine.team(["gpu"])
    first, second, desk, gpu = desk_and_gpu(team, tmp_path)
    runs = [asyncio.create_task(r.run()) for r in (desk, gpu)]
    try:
        # Both relays made their first pass and wait, their watches started.
        await until(lambda: desk.passes and gpu.passes and desk.pace.watching and gpu.pace.watching)
        passes = (desk.passes, gpu.passes)
        first.mailbox(team.name).send("gpu", InboxMessage(sender="team-lead", text="train it"))
        await until(lambda: len(second.mailbox(team.name).read("gpu")) == 1)
        second.mailbox(team.name).send("team-lead", InboxMessage(sender="gpu", text="done"))
        await until(lambda: len(first.mailbox(team.name).read("team-lead")) == 1)
        # Counted once they end: the pass that carried a message may not have ended when it
        # reached the other side (its count grows after its commit and its cursors' saves).
        await until(lambda: desk.passes > passes[0] and gpu.passes > passes[1])
        task = first.tasks(team.name).create("ship it")
        await until(lambda: second.tasks(team.name).get(task.id) is not None)
    finally:
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
        watching = [relay.pace.watching for relay in (desk, gpu)]
        for relay in (desk, gpu):
            relay.close()
        assert watching == [[], []]  # the feed and the watcher stopped with the run
    assert [m.text for m in second.mailbox(team.name).read("gpu")] == ["train it"]
    assert [m.text for m in first.mailbox(team.name).read("team-lead")] == ["done"]


async def test_a_relay_cancelled_during_a_pass_returns_once_the_pass_has_ended(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass runs in a thread, which a cancel cannot stop: ``run`` returned at once while the
    pass still used the link, and the caller's last pass and ``close`` raced it (a full suite
    run hung at the end of the test above, in the executor's shutdown)."""
    team = engine.team(["gpu"])
    home = team_home(tmp_path / "second", team.name, "gpu")
    gpu = Relay(home, team.name, team.urls["gpu"], member="gpu", desk=False, key=None,
                machine="gpu-box", interval=3600)  # fmt: skip
    entered, release = threading.Event(), threading.Event()
    ended: list[bool] = []

    def held_pass() -> None:
        entered.set()
        release.wait(30)
        ended.append(True)

    monkeypatch.setattr(gpu, "one_pass", held_pass)
    run = asyncio.create_task(gpu.run())
    assert await asyncio.to_thread(entered.wait, 30)
    run.cancel()
    await asyncio.wait({run}, timeout=0.5)
    try:
        assert not run.done() and ended == []  # waiting for the pass's thread
    finally:
        release.set()
    with contextlib.suppress(asyncio.CancelledError):
        await run
    assert ended == [True] and gpu.pace.watching == []
    gpu.close()

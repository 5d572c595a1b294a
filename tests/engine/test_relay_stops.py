"""A relay's way out never waits without bound: a pass held on a lock in the server, a pass
that never ends, or a feed that does not stop cannot hold ``Relay.run``'s cancel or
``Relay.close`` (a full suite run hung at the end of a relay test, in the cancel of its
relays, with no CPU used). Each bounded wait that gives up says so in the log."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from app.engine import pace
from app.engine.errors import EngineUnavailableError
from app.engine.link import Link
from app.engine.relay import Relay
from app.engine.watch import EngineFeed
from tests.engine.pg import Engine, team_home

GUARD = 120
"""Seconds after which a wait that should end is a hang (a failure, not a measure)."""


def _gpu(engine: Engine, root: Path) -> Relay:
    team = engine.team(["gpu"])
    home = team_home(root, team.name, "gpu")
    return Relay(home, team.name, team.urls["gpu"], member="gpu", desk=False, key=None,
                 machine="gpu-box", interval=3600)  # fmt: skip


@contextlib.contextmanager
def _members_locked(engine: Engine) -> Iterator[psycopg.Connection]:
    """The administrator holds the members table (a pass's first read waits on it) until the
    block ends."""
    with psycopg.connect(engine.admin_url) as admin:
        admin.execute("LOCK TABLE teamdeck.members IN ACCESS EXCLUSIVE MODE")
        try:
            yield admin
        finally:
            admin.rollback()


async def _waiting_on_a_lock(admin_url: str, url: str) -> None:
    """Until a session of ``url``'s role waits on a lock in the server."""
    role = psycopg.conninfo.conninfo_to_dict(url)["user"]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for _ in range(GUARD * 20):
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s"
                " AND wait_event_type = 'Lock'",
                (role,),
            ).fetchone()
            if row and row[0]:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"no session of {role} came to wait on the lock")


async def test_a_pass_held_on_a_lock_has_its_query_cancelled_and_the_relay_stops(
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(pace, "STOP_WAIT", 0.2)
    gpu = _gpu(engine, tmp_path)
    with _members_locked(engine):
        run = asyncio.create_task(gpu.run())
        await _waiting_on_a_lock(engine.admin_url, gpu.link.url)
        run.cancel()
        with caplog.at_level(logging.WARNING, logger="app.engine.pace"):
            finished, _ = await asyncio.wait({run}, timeout=GUARD)
        # Returned while the lock is still held: its pass's query was cancelled.
        assert finished == {run} and run.cancelled()
        assert "1 of its queries cancelled" in caplog.text
        assert gpu.passes == 0 and gpu.pace.watching == []
        gpu.close()
        with pytest.raises(EngineUnavailableError, match="is closed"):
            gpu.one_pass()


async def test_a_pass_that_never_ends_is_left_behind_and_said(
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(pace, "STOP_WAIT", 0.2)
    gpu = _gpu(engine, tmp_path)
    entered, release = threading.Event(), threading.Event()

    def stuck_pass() -> None:  # no query to cancel: a thread that cannot be stopped
        entered.set()
        release.wait(GUARD)

    monkeypatch.setattr(gpu, "one_pass", stuck_pass)
    run = asyncio.create_task(gpu.run())
    try:
        assert await asyncio.to_thread(entered.wait, GUARD)
        run.cancel()
        with caplog.at_level(logging.WARNING, logger="app.engine.pace"):
            finished, _ = await asyncio.wait({run}, timeout=GUARD)
        assert finished == {run} and run.cancelled()
        assert "left behind in its thread" in caplog.text
        gpu.close()
    finally:
        release.set()


async def test_a_feed_that_does_not_stop_does_not_hold_the_relays_stop(
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(pace, "STOP_WAIT", 0.2)
    gpu = _gpu(engine, tmp_path)
    release = asyncio.Event()
    real_stop = EngineFeed.stop

    async def stuck_stop(self: EngineFeed) -> None:
        while not release.is_set():  # deaf to cancels until the test lets it go
            with contextlib.suppress(asyncio.CancelledError):
                await release.wait()
        await real_stop(self)

    monkeypatch.setattr(EngineFeed, "stop", stuck_stop)
    run = asyncio.create_task(gpu.run())
    try:
        for _ in range(GUARD * 20):
            if len(gpu.pace.watching) == 2:
                break
            await asyncio.sleep(0.05)
        assert len(gpu.pace.watching) == 2
        run.cancel()
        with caplog.at_level(logging.WARNING, logger="app.engine.pace"):
            finished, _ = await asyncio.wait({run}, timeout=GUARD)
        assert finished == {run} and run.cancelled()
        assert "its engine feed did not stop" in caplog.text
        gpu.close()
    finally:
        release.set()  # the stop left behind ends now (the loop's other tasks with it)
        others = asyncio.all_tasks() - {asyncio.current_task()}
        if others:
            await asyncio.wait(others, timeout=GUARD)


async def test_closing_a_link_ends_a_call_waiting_on_the_server(engine: Engine) -> None:
    team = engine.team(["gpu"])
    link = Link(team.urls["gpu"], max_size=1)
    failed: list[BaseException] = []

    def call() -> None:
        try:
            link.read(lambda c: c.execute("SELECT count(*) FROM teamdeck.members").fetchall())
        except BaseException as exc:
            failed.append(exc)

    with _members_locked(engine):
        thread = threading.Thread(target=call)
        thread.start()
        await _waiting_on_a_lock(engine.admin_url, team.urls["gpu"])
        await asyncio.to_thread(link.close)
        await asyncio.to_thread(thread.join, GUARD)
        assert not thread.is_alive()  # ended while the lock is still held
    assert len(failed) == 1 and isinstance(failed[0], EngineUnavailableError)


async def test_a_cancel_that_comes_with_a_wake_stops_the_relay(
    engine: Engine, tmp_path: Path
) -> None:
    """The hang of a full suite run: a cancel that came in the event loop's turn a wake ended
    the relay's pause was lost (Python 3.11's ``asyncio.wait_for`` returns the finished wait
    instead of raising), and the relay went on: a pass, then a pause for the whole interval
    (an hour here), its stopper waiting, with no CPU used."""
    gpu = _gpu(engine, tmp_path)
    run = asyncio.create_task(gpu.run())
    try:
        for _ in range(GUARD * 20):
            if gpu.passes and len(gpu.pace.watching) == 2 and gpu.pace.pausing:
                break
            await asyncio.sleep(0.05)
        assert gpu.pace.pausing and gpu.pace._woken is not None
        passes = gpu.passes
        gpu.pace._woken.set()  # a wake, and the cancel, in the same turn of the loop
        run.cancel()
        finished, _ = await asyncio.wait({run}, timeout=GUARD)
        assert finished == {run} and run.cancelled() and gpu.passes == passes
    finally:
        run.cancel()
        gpu.close()

"""A cancel that comes in the same turn as the wake-up it interrupts is kept: Python 3.11's
``asyncio.wait_for`` returned the finished wait instead, and the cancel was lost (a relay went
on for its whole interval after being stopped; an agent stopped by the dashboard as its mail
came would have gone on). The waits of the runtime use ``asyncio.timeout``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.runtime.agent.wakeup import Wakeup
from app.runtime.runners.hold import FileHold


async def test_a_wake_up_and_a_cancel_in_one_turn_cancel_the_wait() -> None:
    wakeup = Wakeup()
    wakeup.bind(asyncio.get_running_loop())
    waiting = asyncio.create_task(wakeup.wait(60))
    await asyncio.sleep(0)
    assert wakeup.waiting == 1
    wakeup.set()
    waiting.cancel()  # the same turn: the wake-up has not been seen yet
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert wakeup.waiting == 0


async def test_a_wake_up_alone_still_ends_the_wait_and_a_timeout_says_so() -> None:
    wakeup = Wakeup()
    wakeup.bind(asyncio.get_running_loop())
    waiting = asyncio.create_task(wakeup.wait(60))
    await asyncio.sleep(0)
    wakeup.set()
    assert await waiting is True
    wakeup.clear()
    assert await wakeup.wait(0.01) is False


async def test_a_held_turn_interrupted_and_cancelled_in_one_turn_is_cancelled(
    tmp_path: Path,
) -> None:
    """The budget hold: the turn's interrupt and the task's cancel together end in the cancel."""
    hold_file = tmp_path / "hold"
    hold_file.write_text("")
    session = SimpleNamespace(
        status="running",
        interrupted=False,
        interrupt_event=asyncio.Event(),
        set_activity=lambda _text: None,
        set_status=lambda _status, _text: None,
    )
    held = asyncio.create_task(FileHold(hold_file)(session))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    session.interrupted = True  # what an interrupt does
    session.interrupt_event.set()
    held.cancel()
    with pytest.raises(asyncio.CancelledError):
        await held

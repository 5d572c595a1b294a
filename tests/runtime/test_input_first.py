"""The person first (``app.runtime.scheduling.input_first``): while a key press waits for its
frame, the team's threads wait at their next step -- a worker's file call, the model calls'
loop's next call, an in-process turn's slot -- and go on when the frame is drawn, or at the
wait's end at the latest; the thread that said the person waits never waits. Orders and counts,
never times: only ``person_served`` ends a wait here, except where the deadline is the point."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from app.runtime.scheduling import input_first
from app.runtime.scheduling.model_loop import on_model_loop
from app.runtime.scheduling.offload import off_loop
from app.runtime.scheduling.turn_slots import TurnGate
from tests.runtime.conftest import until

LONG = 600.0  # a wait only ``person_served`` ends in these tests


@pytest.fixture(autouse=True)
def _served() -> Iterator[None]:
    yield
    input_first.person_served()  # nobody waits after a test


async def _waits_then_served(started: asyncio.Future[object], order: list[str]) -> None:
    """The team's step is waiting for the person: the key's frame, then the person served."""
    before = input_first.yielded
    input_first.person_waits(LONG)
    task = asyncio.ensure_future(started)
    await until(lambda: input_first.yielded > before, "the team's step waits")
    order.append("the key's frame")
    input_first.person_served()
    await task


async def test_a_workers_file_call_waits_for_the_keys_frame() -> None:
    order: list[str] = []
    await _waits_then_served(off_loop(order.append, "the team's file call"), order)
    assert order == ["the key's frame", "the team's file call"]


async def test_a_model_call_starts_after_the_keys_frame() -> None:
    order: list[str] = []

    async def call() -> None:
        order.append("the team's model call")

    await _waits_then_served(on_model_loop(call()), order)
    assert order == ["the key's frame", "the team's model call"]


async def test_an_in_process_turn_takes_its_slot_after_the_keys_frame() -> None:
    order: list[str] = []
    gate = TurnGate(3)

    async def turn() -> None:
        async with gate.turn():
            order.append("the team's turn")

    await _waits_then_served(turn(), order)
    assert order == ["the key's frame", "the team's turn"] and gate.most == 1


async def test_the_wait_ends_at_its_deadline_without_the_frame() -> None:
    input_first.person_waits(0.05)  # a dashboard that never says served holds nothing long
    assert await off_loop(lambda: "done") == "done"
    assert input_first.remaining() == 0


def test_the_thread_that_said_the_person_waits_never_waits() -> None:
    before = input_first.yielded
    input_first.person_waits(LONG)
    input_first.let_the_person_go_first()  # the dashboard's loop: returns at once
    assert input_first.yielded == before
    assert input_first.remaining() > 0
    input_first.person_served()
    assert input_first.remaining() == 0

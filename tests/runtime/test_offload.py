"""Blocking work moved off the event loop (``app.runtime.scheduling.offload``) changes nothing but
where it
runs: order kept, errors surfaced, a started write finished before a cancellation lands, and
the runtime's own blocking calls (task tools, claims, the offline model) really leave the
loop's thread. No wall-clock thresholds: threads are held with events, never timed."""

from __future__ import annotations

import asyncio
import gc
import logging
import platform
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import anthropic
import pytest

from app.core import Home
from app.core.tasks import TaskList
from app.runtime.model.client import make_client
from app.runtime.model.names import MODEL_ALIASES
from app.runtime.offline import ModelRequest, OfflineTransport, ScriptedModel, reply
from app.runtime.scheduling.model_loop import on_model_loop
from app.runtime.scheduling.offload import Lane, off_loop, on_loop
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Router, Script, call_tool, no_spawn, result_json, until

TEAM = "alpha"


# ---------------------------------------------------------------------------------- off_loop


async def test_off_loop_runs_in_a_worker_thread_and_returns_or_raises() -> None:
    loop_thread = threading.get_ident()
    assert await off_loop(threading.get_ident) != loop_thread
    assert await off_loop(lambda a, b=0: a + b, 2, b=3) == 5

    def broken() -> None:
        raise ValueError("disk on fire")

    with pytest.raises(ValueError, match="disk on fire"):
        await off_loop(broken)


async def test_a_started_call_finishes_before_the_cancellation_lands() -> None:
    started, release = threading.Event(), threading.Event()
    done: list[str] = []

    def write() -> None:
        started.set()
        release.wait(10)
        done.append("written")

    task = asyncio.create_task(off_loop(write))
    await asyncio.to_thread(started.wait, 10)
    task.cancel()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not task.done()  # still waiting for the write, as a call on the loop would
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert done == ["written"]


# ---------------------------------------------------------------------------------- Lane


async def test_a_lane_keeps_the_order_of_awaited_and_submitted_calls() -> None:
    lane = Lane("worker")
    gate = threading.Event()
    order: list[int] = []
    lane.submit(gate.wait, 10)  # holds the lane until everything below is queued
    for i in range(5):
        lane.submit(order.append, i)
    waiter = asyncio.create_task(lane.run(order.append, 5))
    await asyncio.sleep(0)  # the task starts: its call is handed over
    lane.submit(order.append, 6)
    gate.set()
    await waiter
    await asyncio.to_thread(lane.flush, 10)
    assert order == [0, 1, 2, 3, 4, 5, 6]
    assert lane.pending == 0


async def test_errors_reach_the_caller_or_the_error_handler_on_the_loop() -> None:
    lane = Lane("worker")
    loop_thread = threading.get_ident()

    def fail(message: str) -> None:
        raise OSError(message)

    with pytest.raises(OSError, match="inbox locked"):
        await lane.run(fail, "inbox locked")

    seen: list[tuple[str, bool]] = []
    lane.submit(
        fail, "no space left", on_error=lambda e: seen.append((str(e), on_the_loop(loop_thread)))
    )
    await until(lambda: seen, "the error handler")
    assert seen == [("no space left", True)]
    assert await lane.run(lambda: "still working") == "still working"


async def test_a_submitted_failure_without_a_handler_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lane = Lane("worker")

    def fail() -> None:
        raise OSError("read-only file system")

    with caplog.at_level(logging.WARNING, logger="app.runtime.scheduling.offload"):
        lane.submit(fail)
        await asyncio.to_thread(lane.flush, 10)
        await until(lambda: "read-only file system" in caplog.text, "the log line")


async def test_a_queued_call_whose_caller_is_cancelled_never_runs() -> None:
    lane = Lane("worker")
    gate = threading.Event()
    ran: list[str] = []
    lane.submit(gate.wait, 10)
    queued = asyncio.create_task(lane.run(ran.append, "queued"))
    await asyncio.sleep(0)
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    gate.set()
    await lane.run(ran.append, "after")
    assert ran == ["after"]


async def test_on_loop_from_a_worker_runs_on_the_loop_before_the_caller_resumes() -> None:
    loop_thread = threading.get_ident()
    told: list[bool] = []

    def write_and_tell() -> str:
        on_loop(lambda: told.append(on_the_loop(loop_thread)))
        return "written"

    assert await Lane().run(write_and_tell) == "written"
    assert told == [True]
    on_loop(told.append, False)  # on the loop already: called at once
    assert told == [True, False]


def test_outside_an_event_loop_a_lane_runs_inline() -> None:
    lane = Lane()
    calls: list[int] = []
    lane.submit(calls.append, 1)
    assert calls == [1]
    errors: list[Exception] = []
    lane.submit(_raise, on_error=errors.append)
    assert [str(e) for e in errors] == ["boom"]


def _raise() -> None:
    raise RuntimeError("boom")


def on_the_loop(loop_thread: int) -> bool:
    return threading.get_ident() == loop_thread


# ---------------------------------------------------------------------------------- model loop


async def where() -> int:
    return threading.get_ident()


async def test_model_calls_run_on_their_own_loop_and_report_back_in_order() -> None:
    loop_thread = threading.get_ident()
    told: list[tuple[int, bool]] = []

    async def stream() -> str:
        for i in range(5):
            on_loop(lambda i=i: told.append((i, on_the_loop(loop_thread))))
            await asyncio.sleep(0)
        return "final"

    assert await on_model_loop(where()) != loop_thread
    assert await on_model_loop(stream()) == "final"
    assert told == [(i, True) for i in range(5)]  # all delivered before the result

    async def broken() -> None:
        raise ValueError("bad stream")

    with pytest.raises(ValueError, match="bad stream"):
        await on_model_loop(broken())


async def test_cancelling_a_model_call_cancels_it_there_and_waits_for_its_end() -> None:
    started, ended = asyncio.Event(), []

    async def hang() -> None:
        on_loop(started.set)
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.01)  # cleanup that takes a moment (closing a response)
            ended.append("cleaned up")

    call = asyncio.create_task(on_model_loop(hang()))
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert ended == ["cleaned up"]  # nothing of it is left running after the caller returns


async def test_with_offloading_off_everything_runs_on_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    me = threading.get_ident()
    monkeypatch.setenv("TEAMDECK_OFFLOAD", "0")
    assert await off_loop(threading.get_ident) == me
    assert await Lane().run(threading.get_ident) == me
    assert await on_model_loop(where()) == me
    ran: list[int] = []
    Lane().submit(lambda: ran.append(threading.get_ident()))
    assert ran == [me]
    monkeypatch.setenv("TEAMDECK_OFFLOAD", "1")
    assert await on_model_loop(where()) != me


# ---------------------------------------------------------------------------------- the runtime


def record_threads(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[int]:
    """Wrap ``owner.name`` so that each call records the thread it ran in."""
    threads: list[int] = []
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return threads


async def started(make_runtime: Callable[..., TeamRuntime], **options: Any) -> TeamRuntime:
    rt = make_runtime(**options)
    await rt.start()
    content, is_error = await call_tool(rt.lead_session, "TeamCreate", {"team_name": TEAM})
    assert not is_error, content
    return rt


async def spawn(rt: TeamRuntime, name: str) -> None:
    spec = {"name": name, "prompt": f"You are {name}."}
    content, is_error = await call_tool(rt.lead_session, "Task", spec)
    assert not is_error, content


async def test_task_tools_run_off_the_loop_and_their_errors_still_reach_the_model(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = await started(make_runtime, spawner=no_spawn)
    await spawn(rt, "researcher")
    session = rt.teammates["researcher"].session
    scans = record_threads(monkeypatch, TaskList, "scan")
    home.tasks(TEAM).create("Write the report")

    content, is_error = await call_tool(session, "TaskList", {})
    assert not is_error
    assert [t["subject"] for t in result_json(content)["tasks"]] == ["Write the report"]
    assert scans and threading.get_ident() not in scans

    content, is_error = await call_tool(session, "TaskUpdate", {"taskId": "1", "status": "x"})
    assert is_error and "unknown task status" in content
    content, is_error = await call_tool(session, "TaskGet", {"taskId": "99"})
    assert (content, is_error) == ("Task #99 not found", True)


async def test_a_teammate_claims_tasks_off_the_loop(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    claims = record_threads(monkeypatch, TaskList, "claim_next")
    rt = await started(make_runtime, handler=Router(team_lead=Script(then="Noted.")))
    home.tasks(TEAM).create("Inventory", "inventory the **/*.py files")
    await spawn(rt, "worker")
    await until(lambda: getattr(home.tasks(TEAM).get("1"), "status", "") == "completed", "done")
    assert claims and threading.get_ident() not in claims


async def test_a_teammate_killed_during_a_claim_returns_the_task_to_the_board(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kill lands while the claim is being written in a worker thread: the write finishes
    first, then the teammate leaves and the task goes back to the board -- never left owned by
    a departed teammate."""
    claiming, release = threading.Event(), threading.Event()
    original = TaskList.claim_next

    def held_claim(self: TaskList, *args: Any, **kwargs: Any) -> Any:
        claiming.set()
        release.wait(10)
        return original(self, *args, **kwargs)

    router = Router(worker=Script(then="ok"), team_lead=Script(then="Noted."))
    rt = await started(make_runtime, handler=router)
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "idle")
    monkeypatch.setattr(TaskList, "claim_next", held_claim)
    home.tasks(TEAM).create("Inventory")
    assert await asyncio.to_thread(claiming.wait, 10)
    lane = rt.teammates["worker"].session.io
    threading.Timer(0.05, release.set).start()  # the kill waits for the write in flight
    rt.kill("worker")
    assert await asyncio.to_thread(lane.flush, 10)  # nothing of the worker's still to land
    task = home.tasks(TEAM).get("1")
    assert task is not None and (task.status, task.owner) == ("pending", None)
    await until(lambda: "worker" in rt.departed, "the teammate gone")


# ---------------------------------------------------------------------------------- the model


async def test_the_offline_server_works_off_the_loop_and_handler_errors_still_surface(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import app.runtime.offline.transport as transport

    threads = record_threads(monkeypatch, transport, "validate_request")
    encodes = record_threads(monkeypatch, OfflineTransport, "encode")

    async def broken(request: ModelRequest) -> Any:
        raise KeyError("policy bug")

    client = make_client(handler=ScriptedModel([reply("hi"), broken]), pace=0)
    messages: Any = [{"role": "user", "content": "hello"}]
    model = MODEL_ALIASES["sonnet"]
    answer = await client.messages.create(model=model, max_tokens=16, messages=messages)
    assert answer.content[0].text == "hi"  # type: ignore[union-attr]
    assert threads and encodes and threading.get_ident() not in threads + encodes
    with pytest.raises(anthropic.InternalServerError, match="offline model failed: KeyError"):
        await client.messages.create(model=model, max_tokens=16, messages=messages)


async def test_a_model_handler_runs_on_the_callers_loop() -> None:
    """The SDK runs on the model loop, but a handler may await the caller's own objects (a
    test's gate, a runtime's event): it is run on the loop that made the call."""
    opened = asyncio.Event()  # this loop's
    threads: list[int] = []

    async def gated(request: ModelRequest) -> Any:
        threads.append(threading.get_ident())
        await opened.wait()
        return reply("through")

    client = make_client(handler=ScriptedModel([gated]), pace=0)
    call = asyncio.create_task(
        on_model_loop(
            client.messages.create(
                model=MODEL_ALIASES["sonnet"],
                max_tokens=16,
                messages=[{"role": "user", "content": "hello"}],
            )
        )
    )
    await until(lambda: threads, "the handler called")
    assert threads == [threading.get_ident()]
    opened.set()
    answer = await call
    assert answer.content[0].text == "through"  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------- GC pauses


async def test_the_long_lived_heap_is_frozen_once_when_a_runtime_starts(
    make_runtime: Callable[..., TeamRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from app.runtime.scheduling import gc_pauses

    calls: list[str] = []
    callbacks: list[object] = []
    monkeypatch.setattr(gc_pauses, "_frozen", False)
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "callbacks", callbacks)
    await make_runtime(spawner=no_spawn).start()
    await make_runtime(spawner=no_spawn).start()
    assert calls == ["collect", "freeze"]  # garbage first, then once per process
    assert callbacks == [gc_pauses._after_collection]  # and survivors of full collections


def test_a_full_collection_freezes_its_survivors_and_a_thaw_lets_cycles_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real collector: survivors of a full collection are frozen (the next one walks only
    what is newer); after ``THAW_SECONDS`` the next full collection thaws them, and a cycle
    that became garbage while frozen is freed by the one after."""
    import gc
    import time
    import weakref

    from app.runtime.scheduling import gc_pauses

    class Node:
        pass

    added = gc_pauses._after_collection not in gc.callbacks
    if added:
        gc.callbacks.append(gc_pauses._after_collection)
    try:
        monkeypatch.setattr(gc_pauses, "_thawed_at", time.monotonic())
        cycle = Node()
        cycle.me = cycle  # type: ignore[attr-defined]
        alive = weakref.ref(cycle)
        kept = [{"n": i} for i in range(1000)]
        gc.collect()
        assert gc.get_freeze_count() >= len(kept)  # the survivors are out of its reach
        del cycle
        gc.collect()
        assert alive() is not None  # frozen: not walked, not freed
        monkeypatch.setattr(gc_pauses, "_thawed_at", time.monotonic() - gc_pauses.THAW_SECONDS)
        gc.collect()  # the thaw
        assert gc.get_freeze_count() == 0
        gc.collect()
        assert alive() is None  # walked again: the cycle is freed
        assert kept
    finally:
        if added:
            gc.callbacks.remove(gc_pauses._after_collection)


def test_a_full_collection_gives_the_heaps_free_pages_back_once_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a burst of work C's heap keeps the pages it freed (2-4 MB at 100 teammates, issue
    33): the full collection after ``TRIM_SECONDS`` hands them back (glibc's ``malloc_trim``),
    the ones in between do not; a young collection never does."""
    from app.runtime.scheduling import gc_pauses

    trims: list[int] = []
    monkeypatch.setattr(gc_pauses, "_trim", lambda pad: trims.append(pad) or 1)
    monkeypatch.setattr(gc, "freeze", lambda: None)
    monkeypatch.setattr(gc_pauses, "_thawed_at", time.monotonic())
    monkeypatch.setattr(gc_pauses, "_trimmed_at", time.monotonic() - gc_pauses.TRIM_SECONDS)
    gc_pauses._after_collection("stop", {"generation": 0})
    assert trims == []
    gc_pauses._after_collection("stop", {"generation": 2})
    gc_pauses._after_collection("stop", {"generation": 2})
    assert trims == [0]  # the first full collection only
    monkeypatch.setattr(gc_pauses, "_trimmed_at", time.monotonic() - gc_pauses.TRIM_SECONDS)
    gc_pauses._after_collection("stop", {"generation": 2})
    assert trims == [0, 0]


def test_the_heap_trim_is_glibcs_on_linux() -> None:
    from app.runtime.scheduling import gc_pauses

    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert gc_pauses._trim is not None
        assert gc_pauses._trim(0) in (0, 1)

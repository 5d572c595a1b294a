"""A team of teammate processes starts without waiting on imports: the fork server starts with
a ``process``-mode runtime (before any teammate), and it has streamed the model SDK's first
response already, so no forked teammate builds the SDK's parsing classes again; the classes
each response is parsed into stay alive between responses instead of being rebuilt by every
one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.runners.forkserver import supported
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import until

ROOT = Path(__file__).resolve().parents[2]
#: Starting a Python process on a loaded 2-core machine takes a while.
GUARD = 120.0

#: Counts the pydantic classes built while one more offline response streams, with a garbage
#: collection before it; first ``warm_up`` (``warm``), or the same without the classes held
#: (``unheld``), or nothing (``cold``). Each mode runs in a child forked after the imports, as
#: the fork server's children are: the SDK is imported once for the three (two seconds of CPU
#: each), and each child starts from the same state a fresh process has after its imports.
COUNT_BUILDS = """
import asyncio, gc, os, sys, threading, traceback
import anthropic
from pydantic._internal import _generics
from app.runtime.model import parsed_classes, warm_up as w

def count(mode):
    if mode != "warm":
        parsed_classes._held.append(object())  # hold_parsed_classes then holds nothing
    if mode != "cold":
        assert w.warm_up()
        assert threading.active_count() == 1, threading.enumerate()  # the server forks next
    built = []
    original = _generics.create_generic_submodel
    def counting(*args, **kwargs):
        built.append(args[0])
        return original(*args, **kwargs)
    _generics.create_generic_submodel = counting
    gc.collect()
    asyncio.run(w._one_response())
    return len(built)

assert threading.active_count() == 1
for mode in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.write(write, str(count(mode)).encode())
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        found = answer.read()
    _, status = os.waitpid(pid, 0)
    print(mode, found if status == 0 and found else "failed")
"""


def builds_after(*modes: str) -> dict[str, int]:
    """How many SDK classes one response builds after each of ``modes``, each in a process
    forked from one that has imported the SDK."""
    done = subprocess.run(
        [sys.executable, "-c", COUNT_BUILDS, *modes],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=GUARD,
        env={**os.environ, "TEAMDECK_OFFLINE_PACE": "0"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = dict(line.split() for line in done.stdout.splitlines())
    assert "failed" not in found.values(), done.stderr[-2000:]
    return {mode: int(count) for mode, count in found.items()}


def test_after_the_warm_up_a_response_builds_no_class_of_the_sdk() -> None:
    builds = builds_after("cold", "unheld", "warm")
    assert builds["cold"] > 0  # what each forked teammate paid at its first response
    assert builds["unheld"] > 0  # ... and, the classes unheld, at every response
    assert builds["warm"] == 0


def test_the_classes_of_a_response_outlive_a_garbage_collection() -> None:
    """A teammate process keeps no response between turns: without the held classes each
    collection freed them and every response built them again."""
    import gc
    import weakref

    from anthropic.lib._parse._response import ResponseFormatT
    from anthropic.types.parsed_message import ParsedMessage

    from app.runtime.model.client import make_client

    make_client()
    generic: object = ParsedMessage
    built = weakref.ref(generic[ResponseFormatT])  # type: ignore[index]
    gc.collect()
    assert built() is not None
    assert generic[ResponseFormatT] is built()  # type: ignore[index]


@pytest.mark.skipif(not supported(), reason="the fork server runs on Linux only")
async def test_the_fork_server_starts_with_a_process_runtime_before_any_teammate(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    runtime = TeamRuntime(home, cwd=project, decider="lead", teammate_backend="process")
    runtimes.append(runtime)
    await runtime.start()
    assert runtime.processes is not None
    server = runtime.processes.forks
    assert server is not None and server.pid is not None
    pid = server.pid
    assert not runtime.runners  # nobody spawned yet
    await runtime.stop()  # no teammate runs: the server ends with the runtime
    try:
        await until(lambda: _ended(pid), "the server to end", within=GUARD)
    finally:
        if not _ended(pid):
            os.kill(pid, signal.SIGKILL)


def _ended(pid: int) -> bool:
    """Whether the server (a child of this process) has exited; reaps it."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped already
        return True
    return done == pid


#: In a fresh process: freeze as the fork server does, fork, and report from the child what
#: it inherited frozen and when its thaw period started.
FORK_FROZEN = """
import gc, os, time
from app.runtime.scheduling import gc_pauses
assert gc_pauses.freeze_long_lived()
gc_pauses._thawed_at -= gc_pauses.THAW_SECONDS  # a server started long before its children
before = time.monotonic()
pid = os.fork()
if pid == 0:
    fresh = gc_pauses._thawed_at >= before
    print(gc.get_freeze_count() > 0, fresh, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_a_forked_teammate_keeps_its_servers_heap_frozen_for_its_own_thaw_period() -> None:
    """The fork server freezes its imported heap before forking (``gc_pauses``): a child's
    collections then neither walk it nor write to it (each write copies a shared page), and
    the first of them does not thaw it just because the server is older than the period."""
    done = subprocess.run(
        [sys.executable, "-c", FORK_FROZEN], cwd=ROOT, capture_output=True, text=True,
        timeout=GUARD, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]

"""Processes started together for the race tests: forked, released at once by one event."""

from __future__ import annotations

import multiprocessing
from typing import Any

FORK = multiprocessing.get_context("fork")


def run_together(jobs: list[tuple[Any, tuple[Any, ...]]], timeout: float = 60) -> None:
    """Start every ``(target, args)`` (each called as ``target(go, *args)``), release them
    together, and require a clean exit from each."""
    go = FORK.Event()
    procs = [FORK.Process(target=target, args=(go, *args)) for target, args in jobs]
    for proc in procs:
        proc.start()
    go.set()
    for proc in procs:
        proc.join(timeout)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
            proc.join()
    assert [proc.exitcode for proc in procs] == [0] * len(procs)

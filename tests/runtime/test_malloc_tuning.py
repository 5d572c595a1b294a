"""C's heap of a process that runs a team (issue 33, the dashboard's memory at 100 teammates):
glibc's arenas are limited and large blocks are mapped alone, once, when the first runtime
starts (``app.runtime.scheduling.gc_pauses``). Counted (heaps, calls), never timed."""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from app.runtime.scheduling import gc_pauses

ROOT = Path(__file__).resolve().parents[2]

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's mallopt and malloc_info",
)

#: Threads that each call malloc once (ctypes lets go of the GIL, as the offloaded file work
#: does), then the number of heaps glibc reports (``malloc_info``), printed.
HEAPS = """
import ctypes, os, sys, tempfile, threading
sys.path.insert(0, {root!r})
from app.runtime.scheduling import gc_pauses
if {tune}:
    gc_pauses.tune_malloc()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.fopen.restype = ctypes.c_void_p
go = threading.Barrier(8)
def work():
    go.wait()
    for _ in range(200):
        libc.free(ctypes.c_void_p(libc.malloc(4000)))
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
path = tempfile.mktemp()
out = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, ctypes.c_void_p(out))
libc.fclose(ctypes.c_void_p(out))
print(open(path).read().count("<heap nr="))
os.unlink(path)
"""


def _heaps(tune: bool) -> int:
    code = textwrap.dedent(HEAPS).format(root=str(ROOT), tune=tune)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@glibc
def test_threads_share_at_most_two_heaps_once_malloc_is_tuned() -> None:
    assert _heaps(tune=False) > gc_pauses.ARENAS  # glibc's own way: a heap per thread
    assert _heaps(tune=True) <= gc_pauses.ARENAS


def _recording(calls: list[tuple[int, int]]) -> Callable[[int, int], int]:
    def mallopt(option: int, value: int) -> int:
        calls.append((option, value))
        return 1

    return mallopt


def test_the_first_runtime_start_tunes_malloc_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(gc_pauses, "_mallopt", _recording(calls))
    monkeypatch.setattr(gc_pauses, "_frozen", False)
    monkeypatch.setattr(gc, "collect", lambda *a: 0)
    monkeypatch.setattr(gc, "freeze", lambda: None)
    monkeypatch.setattr(gc, "callbacks", [])
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    assert gc_pauses.freeze_long_lived()
    assert not gc_pauses.freeze_long_lived()
    assert calls == [
        (gc_pauses.M_ARENA_MAX, gc_pauses.ARENAS),
        (gc_pauses.M_MMAP_THRESHOLD, gc_pauses.MMAP_BYTES),
    ]


def test_what_the_environment_chose_is_left_to_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(gc_pauses, "_mallopt", _recording(calls))
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    assert gc_pauses.tune_malloc() == [gc_pauses.M_MMAP_THRESHOLD]
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    calls.clear()
    assert gc_pauses.tune_malloc() == []
    assert calls == []


def test_another_c_library_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_pauses, "_mallopt", None)
    assert gc_pauses.tune_malloc() == []


@glibc
def test_glibc_accepts_both_options() -> None:
    assert gc_pauses._mallopt is not None
    # the values every runtime of the suite sets in this process anyway
    assert gc_pauses._mallopt(gc_pauses.M_ARENA_MAX, gc_pauses.ARENAS) == 1
    assert gc_pauses._mallopt(gc_pauses.M_MMAP_THRESHOLD, gc_pauses.MMAP_BYTES) == 1

"""Garbage-collection pauses: full collections walk only what is new.

A full (generation 2) collection walks every object the collector tracks, with the GIL held: no
thread runs meanwhile, the dashboard's event loop included. After importing the SDK, pydantic
and Textual that is ~180,000 objects, 100-200 ms per collection -- bench/live.py found these
to be the event loop's longest blocks once the blocking work had left it. What exists when the
first runtime starts (modules, classes, schemas, the app's widgets) lives as long as the
process, so it is moved out of the collector's reach with ``gc.freeze()`` (garbage is collected
first, so nothing that could still be freed is frozen).

A working team keeps growing that heap (conversations, transcripts, the dashboard's widgets),
and CPython runs a full collection each time it grew by a quarter: with 8 teammates at pace 0
that was ~25 full collections of 80-140 ms in 20 s, the dashboard's longest stalls and the
tail of its key presses (bench/live.py's ``keypress`` row). So what survives a full
collection is frozen too: it has proved long-lived, and the next full collection walks only
what was made since (a few ms). Frozen objects that later become garbage in a reference cycle
are not freed until they are thawed: every ``THAW_SECONDS`` the next full collection walks
everything once (one long pause every few minutes instead of several a second) and frees them.
Installed once per process, when the first runtime starts; in the fork server before it forks
(``runners.forkserver``), so that its teammates' collections never walk -- nor write to, and so
copy -- the imported heap they share with it (what ``gc.freeze`` is for).

A full collection that frees a working team's garbage leaves C's heap with free pages the
process keeps: after a burst of a hundred teammates' work, glibc held 2-4 MB more than it used
(bench/live.py ``--sizes 8,100``: none at 8). So the full collection after ``TRIM_SECONDS``
also gives the heap's free pages back (glibc's ``malloc_trim``, ~0.6 ms at 100 teammates; no
other C library has it, and nothing is done there).

A hundred teammates also kept more of C's heap for nothing. glibc gives each thread a heap
("arena") of its own, up to 8 per core: the dashboard's 14-16 threads (the offloaded file work's
among them) had 15, each holding free pages the others cannot use, and the more work went
through them, the more they held (bench/live.py ``--sizes 8,100`` at equal work: the RSS at 100
grew more than the work). And a block of ``MMAP_BYTES`` or more (the lead's request as JSON, ~1
MB at 100 teammates) is no longer carved from a heap: by default, once such a block is freed,
glibc raises its mapping threshold to that size and lets the heaps keep twice as much free at
their top, so every later request body took heap pages and left them there. So when the first
runtime starts, glibc's ``mallopt`` sets both: the threads share at most ``ARENAS`` heaps
(Python's own allocator serves every object of up to 512 bytes from memory of its own, so the
heaps are not its hot path), and large blocks are mapped alone and go back to the system as they
are freed. What the environment sets (``MALLOC_ARENA_MAX``, ``MALLOC_MMAP_THRESHOLD_``) is left
to glibc.
"""

from __future__ import annotations

import ctypes
import gc
import os
import threading
import time
from collections.abc import Callable
from typing import Any

THAW_SECONDS = 300.0
TRIM_SECONDS = 2.0
ARENAS = 2
"""glibc's malloc arenas at most (the main one included)."""
MMAP_BYTES = 256 * 1024
"""Blocks of this size or more are mapped alone (glibc's first threshold is 128 KB)."""
M_MMAP_THRESHOLD = -3  # glibc's malloc.h
M_ARENA_MAX = -8

_frozen = False
_lock = threading.Lock()
_thawed_at = 0.0
_trimmed_at = 0.0


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (``None``: another C library)."""
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


_trim = _malloc_trim()


def _glibc_mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt`` (``None``: another C library, or one without ``malloc_trim``, whose
    option numbers may differ)."""
    if _trim is None:
        return None
    try:
        mallopt: Callable[[int, int], int] = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    return mallopt


_mallopt = _glibc_mallopt()


def tune_malloc() -> list[int]:
    """At most ``ARENAS`` malloc arenas from now on (arenas already made stay) and blocks of
    ``MMAP_BYTES`` or more mapped alone; the options set (none: another C library, or each
    chosen in the environment)."""
    if _mallopt is None:
        return []
    chosen = [
        (M_ARENA_MAX, ARENAS, "MALLOC_ARENA_MAX"),
        (M_MMAP_THRESHOLD, MMAP_BYTES, "MALLOC_MMAP_THRESHOLD_"),
    ]
    return [o for o, value, env in chosen if env not in os.environ and _mallopt(o, value)]


def freeze_long_lived() -> bool:
    """Collect, freeze everything alive and freeze the survivors of each later full
    collection (the first call only); whether it did so now."""
    global _frozen, _thawed_at
    with _lock:
        if _frozen:
            return False
        _frozen = True
    tune_malloc()
    gc.collect()
    gc.freeze()
    _thawed_at = time.monotonic()
    gc.callbacks.append(_after_collection)
    return True


def _forked() -> None:
    """A forked child (a teammate of the fork server) starts its own thaw period: what it
    inherited frozen stays frozen for ``THAW_SECONDS`` from its start, not from its server's."""
    global _thawed_at
    _thawed_at = time.monotonic()


os.register_at_fork(after_in_child=_forked)


def _after_collection(phase: str, info: dict[str, Any]) -> None:
    """``gc.callbacks``: after a full collection, freeze its survivors -- or, once every
    ``THAW_SECONDS``, thaw the frozen heap so that the next one frees its cyclic garbage --
    and, once every ``TRIM_SECONDS``, give C's heap's free pages back."""
    global _thawed_at, _trimmed_at
    if phase != "stop" or info.get("generation") != 2:
        return
    now = time.monotonic()
    if now - _thawed_at >= THAW_SECONDS:
        _thawed_at = now
        gc.unfreeze()
    else:
        gc.freeze()
    if _trim is not None and now - _trimmed_at >= TRIM_SECONDS:
        _trimmed_at = now
        _trim(0)

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


def freeze_long_lived() -> bool:
    """Collect, freeze everything alive and freeze the survivors of each later full
    collection (the first call only); whether it did so now."""
    global _frozen, _thawed_at
    with _lock:
        if _frozen:
            return False
        _frozen = True
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

"""Garbage-collection pauses: the long-lived heap is frozen once, when the first runtime starts.

A full (generation 2) collection walks every object the collector tracks, with the GIL held: no
thread runs meanwhile, the dashboard's event loop included. After importing the SDK, pydantic
and Textual that is ~180,000 objects, 100-200 ms per collection -- bench/live.py found these
to be the event loop's longest blocks once the blocking work had left it. What exists when the
first runtime starts (modules, classes, schemas, the app's widgets) lives as long as the
process, so it is moved out of the collector's reach with ``gc.freeze()``: later collections
walk only what was made since. Done once per process; garbage is collected first, so nothing
that could still be freed is frozen.
"""

from __future__ import annotations

import gc
import threading

_frozen = False
_lock = threading.Lock()


def freeze_long_lived() -> bool:
    """Collect, then freeze everything alive (the first call only); whether it froze now."""
    global _frozen
    with _lock:
        if _frozen:
            return False
        _frozen = True
    gc.collect()
    gc.freeze()
    return True

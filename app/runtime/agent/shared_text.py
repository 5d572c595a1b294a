"""Equal long texts in the conversations, kept once per process.

Every teammate keeps its whole conversation, and most of its size is tool results that many
of them hold alike: a ``TaskList`` of the same board (20 KB of JSON with 200 tasks), the same
``Glob`` or ``Read`` of the project. With 100 in-process teammates the conversations held 233
``TaskList`` results, 4.6 MB, of which 39 distinct texts (0.76 MB). ``share`` hands back the
text already held when an equal one is, so the conversations point at one string: what the
model is sent is the same text, byte for byte, and nothing a transcript shows changes.

The table must not keep a text alive once no conversation holds it (a compacted conversation
drops its old turns): it is pruned of the entries only it references each time it has grown
by half since the last pruning, so it stays proportional to the texts in use.
"""

from __future__ import annotations

import sys
import threading

#: Texts shorter than this are kept as they are (sharing them would save less than it costs).
MIN_CHARS = 512
#: The table is not pruned below this many entries.
MIN_PRUNE = 64

_texts: dict[str, str] = {}
_lock = threading.Lock()
_prune_at = MIN_PRUNE
#: What ``sys.getrefcount`` counts for a text only the table holds, while ``_prune`` looks at
#: it: the table's key and value slots, the loop's variable and the call's argument.
_TABLE_ONLY = 4


def share(text: str) -> str:
    """``text``, or the equal text already held (long texts only)."""
    global _prune_at
    if len(text) < MIN_CHARS:
        return text
    with _lock:
        held = _texts.get(text)
        if held is not None:
            return held
        _texts[text] = text
        if len(_texts) >= _prune_at:
            _prune()
            _prune_at = max(MIN_PRUNE, len(_texts) * 3 // 2)
    return text


def _prune() -> None:
    """Forget the texts nothing but the table holds (``_lock`` held)."""
    unused = [key for key in _texts if sys.getrefcount(key) <= _TABLE_ONLY]
    for key in unused:
        del _texts[key]


def held() -> int:
    """How many texts the table holds (for tests and benchmarks)."""
    with _lock:
        return len(_texts)

"""Numbers a person tunes through the environment (``$TEAMDECK_IO_THREADS``,
``$TEAMDECK_IN_PROCESS_TURNS``, the model's read timeout): a positive number, or the default
when the variable is unset, empty, not a number, or not above zero."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)


def positive_from_env(name: str, default: N, parse: Callable[[str], N]) -> N:
    """``$name`` read by ``parse`` if it is a positive number, else ``default``."""
    raw = os.environ.get(name, "").strip()
    try:
        value = parse(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default

"""The run archive: every run kept in ``history.db`` (SQLite, WAL), and read back for
``teamdeck history`` and replay. No Textual here.

The names below are imported lazily, so ``app.archive.db`` and ``app.archive.writer`` load
without the rest of teamdeck (a writing process starts fast).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.archive.db import HISTORY_FILE, HistoryUnavailable, connect, history_path
    from app.archive.recorder import Recorder
    from app.archive.session import AnyRecorder, NullRecorder, start_run

_WHERE = {
    "HISTORY_FILE": "app.archive.db",
    "HistoryUnavailable": "app.archive.db",
    "connect": "app.archive.db",
    "history_path": "app.archive.db",
    "Recorder": "app.archive.recorder",
    "AnyRecorder": "app.archive.session",
    "NullRecorder": "app.archive.session",
    "start_run": "app.archive.session",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'app.archive' has no attribute {name!r}")


__all__ = [
    "HISTORY_FILE",
    "AnyRecorder",
    "HistoryUnavailable",
    "NullRecorder",
    "Recorder",
    "connect",
    "history_path",
    "start_run",
]

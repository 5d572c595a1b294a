"""The run archive: every run kept in ``history.db`` (SQLite, WAL), and read back for
``teamdeck history`` and replay. No Textual here."""

from app.archive.db import HISTORY_FILE, HistoryUnavailable, connect, history_path
from app.archive.recorder import Recorder
from app.archive.session import AnyRecorder, NullRecorder, start_run

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

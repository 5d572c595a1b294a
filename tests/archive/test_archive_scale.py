"""The archive at scale: closing drains the whole backlog, output streams, replay reads a window."""

from __future__ import annotations

import io
import sqlite3
import time

from app.archive import Recorder, connect, start_run
from app.core import Home
from app.runtime.events import TranscriptEntry


def test_close_writes_every_queued_event_however_slow_the_writer(home: Home) -> None:
    """A backlog that takes longer than the close's ``timeout`` to write is written in full:
    the timeout is for a writer that makes no progress; a line on stderr says what is left."""
    recorder = start_run(home, None, source="headless", goal="slow disk")
    assert isinstance(recorder, Recorder)
    slow = 0.02

    def slow_op(conn: sqlite3.Connection) -> None:
        time.sleep(slow)  # a slow disk: every operation takes a while

    events = 120  # 120 x 20 ms: longer than the close's timeout below, and over a second
    for n in range(events):
        recorder.writer.submit(slow_op)
        recorder.on_event(TranscriptEntry("worker", "assistant", f"event {n}", {}))
    progress = io.StringIO()
    recorder.writer.close(timeout=slow * 20, progress=progress)
    conn = connect(home.root / "history.db")
    try:
        texts = {
            t
            for (t,) in conn.execute("SELECT text FROM events WHERE run_id = ?", (recorder.run_id,))
        }
    finally:
        conn.close()
    assert texts == {f"event {n}" for n in range(events)}
    lines = progress.getvalue().splitlines()
    assert lines and "events left" in lines[0] and "history.db" in lines[0]
    assert "saved" in lines[-1]

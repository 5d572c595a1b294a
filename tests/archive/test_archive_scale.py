"""The archive at scale: closing drains the whole backlog, output streams, replay reads a window."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from typing import Any

from app.archive import Recorder, connect, query, start_run
from app.core import Home
from app.runtime.events import StatusChanged, TranscriptEntry


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


def test_history_show_json_streams_the_same_document(home: Home, capsys: Any) -> None:
    """``history show --json`` writes its events one at a time; the text is what dumping the
    whole document gives, for a run with events and for one without."""
    from app.cli import main as cli
    from app.cli.history import run_document

    recorder = start_run(home, None, source="headless", goal="json")
    assert isinstance(recorder, Recorder)
    recorder.on_event(StatusChanged("worker", "running", "a detail"))
    recorder.on_event(TranscriptEntry("worker", "assistant", 'line one\nline "two" ünï', {}))
    recorder.on_event(
        TranscriptEntry("worker", "tool_call", "", {"tool": "read", "input": {"path": "a"}})
    )
    recorder.close("finished", "done")
    empty = start_run(home, None, source="headless", goal="nothing happened")
    assert isinstance(empty, Recorder)
    empty.close("finished")
    for run_id in (recorder.run_id, empty.run_id):
        assert cli.main(["--home", str(home.root), "history", "show", str(run_id), "--json"]) == 0
        printed = capsys.readouterr().out
        conn = query.open_reader(home.root / "history.db")
        try:
            run = query.resolve_run(conn, str(run_id))
            document = run_document(conn, run)
            document["events"] = [e.to_json() for e in query.events(conn, run.id)]
        finally:
            conn.close()
        assert printed == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        assert len(json.loads(printed)["events"]) == (3 if run_id == recorder.run_id else 0)


def test_history_show_lists_events_in_time_order(home: Home, capsys: Any) -> None:
    """Issue 19, item 19: an event stored after a later one (a task file read once its burst of
    changes is over) is shown where it happened, in the text, ``--json`` and the export; the
    archive walks an index for it, never sorting the run in memory."""
    from app.cli import main as cli

    recorder = start_run(home, None, source="headless", goal="order")
    assert isinstance(recorder, Recorder)
    start = recorder.clock()
    for offset, text in ((5.0, "happened second"), (2.0, "happened first"), (9.0, "third")):
        recorder.clock = lambda offset=offset: start + offset  # type: ignore[misc]
        recorder.on_event(TranscriptEntry("worker", "assistant", text, {}))
    recorder.close("finished", "done")
    root = str(home.root)
    assert cli.main(["--home", root, "history", "show", str(recorder.run_id)]) == 0
    text = capsys.readouterr().out
    order = [text.index(t) for t in ("happened first", "happened second", "third")]
    assert order == sorted(order), text
    assert cli.main(["--home", root, "history", "show", str(recorder.run_id), "--json"]) == 0
    shown = [e["text"] for e in json.loads(capsys.readouterr().out)["events"]]
    assert shown == ["happened first", "happened second", "third"]
    assert cli.main(["--home", root, "history", "export", str(recorder.run_id)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["text"] for e in lines if e["type"] == "event"] == shown
    conn = connect(home.root / "history.db")
    try:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM events WHERE run_id = ? AND id > 0 ORDER BY at, id",
            (recorder.run_id,),
        ).fetchall()
    finally:
        conn.close()
    assert "TEMP B-TREE" not in str(plan).upper(), plan

"""The archive under faults: SIGKILL mid-write, a damaged or locked database, migrations."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from app.archive import HistoryUnavailable, NullRecorder, connect, start_run
from app.archive.recorder import Recorder
from app.archive.schema import MIGRATIONS, SCHEMA_VERSION, version
from app.cli.headless import run_team
from app.core import Home
from app.runtime.events import StatusChanged, TranscriptEntry

ROOT = Path(__file__).resolve().parents[2]
#: Kill points (commits seen before the SIGKILL): spread over a writer's first commits, where a
#: new database's pages and WAL are made, and its steady state. Fixed, so a failure reproduces;
#: bench/history.py kills 40 times at random points for the figure in the README.
KILL_AFTER_COMMITS = (1, 2, 3, 5, 8, 12, 17, 23, 30, 4)

# A process that records numbered events as fast as it can and prints, after each commit,
# the highest number that commit made durable.
WRITER = textwrap.dedent(
    """
    import sys
    import time
    from app.archive import start_run
    from app.core import Home
    from app.runtime.events import TranscriptEntry

    home = Home(sys.argv[1])
    recorder = start_run(home, None, source="headless", goal="sigkill")
    writer = recorder.writer
    pending = []

    def on_commit(count):
        # Runs in the writer thread right after COMMIT returned.
        done = pending[:count]
        del pending[:count]
        if done:
            print(done[-1], flush=True)

    writer.on_commit = on_commit
    n = 0
    while True:
        n += 1
        pending.append(n)
        recorder.on_event(TranscriptEntry("worker", "assistant", f"event {n}", {}))
        if n % 20 == 0:
            time.sleep(0.002)  # a busy team's pace, so commits are frequent and small
    """
)


def test_no_committed_event_is_lost_across_sigkills(tmp_path: Path) -> None:
    home_root = tmp_path / "home"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    lost = 0
    for attempt, commits in enumerate(KILL_AFTER_COMMITS):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home_root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        last = 0
        # Let it commit a few times, then kill it in the middle of its work.
        for _ in range(commits):
            line = proc.stdout.readline()
            if not line:
                break
            last = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        err = proc.stderr.read() if proc.stderr else ""
        assert last > 0, f"attempt {attempt}: the writer never committed ({err})"
        conn = connect(home_root / "history.db")
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", attempt
            run_id = conn.execute("SELECT max(id) FROM runs").fetchone()[0]
            texts = {
                t
                for (t,) in conn.execute(
                    "SELECT text FROM events WHERE run_id = ? AND kind = 'transcript'", (run_id,)
                )
            }
        finally:
            conn.close()
        lost += sum(f"event {n}" not in texts for n in range(1, last + 1))
    assert lost == 0


async def test_a_damaged_database_degrades_to_one_line_and_the_team_works(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.root.mkdir(parents=True)
    path = home.root / "history.db"
    garbage = b"this is not a database\x00" * 200
    path.write_bytes(garbage)

    code, reason = await run_team(home, "Summarize the files", cwd=project, out=io.StringIO())

    assert (code, reason) == (0, "team finished")
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("teamdeck: warning: history unavailable: ")
    assert "damaged" in err and "left as it is" in err
    assert path.read_bytes() == garbage  # never truncated or replaced


def test_a_locked_database_degrades_to_one_line(home: Home) -> None:
    path = home.root / "history.db"
    connect(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    warnings: list[str] = []
    try:
        recorder = start_run(home, None, source="headless", warn=warnings.append, busy_timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert isinstance(recorder, NullRecorder)
    assert len(warnings) == 1 and "locked by another program" in warnings[0]
    recorder.on_event(StatusChanged("team-lead", "running"))  # still harmless
    recorder.close("finished")


def test_a_database_locked_mid_run_stops_recording_once(home: Home) -> None:
    warnings: list[str] = []
    recorder = start_run(home, None, source="headless", warn=warnings.append, busy_timeout=0.2)
    assert isinstance(recorder, Recorder)
    recorder.on_event(TranscriptEntry("worker", "assistant", "before", {}))
    assert recorder.flush()
    holder = sqlite3.connect(home.root / "history.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for n in range(50):
            recorder.on_event(TranscriptEntry("worker", "assistant", f"during {n}", {}))
        recorder.flush()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    recorder.on_event(TranscriptEntry("worker", "assistant", "after", {}))
    recorder.close("finished")
    assert len(warnings) == 1 and "history unavailable" in warnings[0]
    assert not recorder.available
    conn = connect(home.root / "history.db")
    texts = [t for (t,) in conn.execute("SELECT text FROM events")]
    conn.close()
    assert texts == ["before"]  # what was committed stays; nothing half-written


def test_migrations_from_version_1_keep_the_data(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(MIGRATIONS[0])
    old.execute("PRAGMA user_version = 1")
    old.execute(
        "INSERT INTO runs (team, goal, source, started_at, outcome) VALUES"
        " ('t', 'old goal', 'headless', 1.0, 'finished')"
    )
    old.close()

    conn = connect(path)
    assert version(conn) == SCHEMA_VERSION
    row = conn.execute("SELECT goal, outcome, budget_usd FROM runs").fetchone()
    assert row == ("old goal", "finished", None)
    indexes = {r[1] for r in conn.execute("PRAGMA index_list(events)")}
    assert "events_run_kind" in indexes
    conn.close()


def test_a_database_from_a_newer_teamdeck_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    connect(path).close()
    newer = sqlite3.connect(path)
    newer.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    newer.close()
    before = path.read_bytes()
    with pytest.raises(HistoryUnavailable, match="newer teamdeck"):
        connect(path)
    assert path.read_bytes() == before


def test_recording_never_waits_for_the_database(home: Home) -> None:
    """Handlers only queue: with the database locked, on_event still returns at once."""
    recorder = start_run(home, None, source="headless", busy_timeout=5.0)
    assert isinstance(recorder, Recorder)
    holder = sqlite3.connect(home.root / "history.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    returned = threading.Event()
    try:
        recorder.on_event(TranscriptEntry("worker", "assistant", "queued", {}))
        returned.set()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert returned.is_set()
    recorder.close("finished")
    conn = connect(home.root / "history.db")
    assert [t for (t,) in conn.execute("SELECT text FROM events")] == ["queued"]
    conn.close()

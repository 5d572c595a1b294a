"""The writer thread: the only place the archive is written while a team runs.

Callers (the event loop) only append to a queue, so recording never blocks the loop. The
thread takes whatever has piled up (up to ``max_batch`` operations) and applies it in one
transaction, so a burst of events costs one commit. An operation is a function of the
connection, run in the thread (file reads for the archive happen there too, off the loop).

``defer(key, delay, op)`` runs ``op`` once after ``delay`` however often it is asked for
meanwhile (re-reading an inbox after a burst of changes, for instance). In a batch, deferred
operations run after the queued ones: operations are applied in the order things happened,
and a deferred re-read reads the present.

A database error (damaged file, locked for longer than the busy timeout, disk full) stops
the archive: ``failed`` holds one line, ``on_error`` is called once with it, and later
operations are dropped. The team is never affected.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from app.archive.db import describe_error

log = logging.getLogger(__name__)

Op = Callable[[sqlite3.Connection], None]
#: After the first event of a burst, wait this long for more before committing: a team emits
#: events one at a time, and one commit per event would cost more than the events themselves.
LINGER = 0.05
#: Closing with a backlog: the first progress line after this many seconds, then one every
#: ``DRAIN_REPORT_EVERY``.
DRAIN_REPORT = 1.0
DRAIN_REPORT_EVERY = 5.0
#: The writer's page cache, in KiB (SQLite's default is 2 MiB). A long run's indexes (the
#: message keys are hashes, so their inserts land anywhere) outgrow the default and every
#: batch then reads pages back from the file; this is allocated only as pages are used.
CACHE_KIB = 32 * 1024
_STOP = object()


class Writer:
    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        on_error: Callable[[str], None] | None = None,
        on_commit: Callable[[int], None] | None = None,
        max_batch: int = 2000,
        linger: float = LINGER,
        before_commit: Op | None = None,
    ) -> None:
        self.conn = conn
        self.path = path
        self.on_error = on_error
        #: Called in the thread after each commit with the number of operations it held.
        self.on_commit = on_commit
        self.max_batch = max_batch
        self.linger = linger
        #: Run in the thread at the end of each batch, inside its transaction (totals kept in
        #: memory during the batch are written once).
        self.before_commit = before_commit
        self.failed: str | None = None
        self.commits = 0
        #: Operations applied so far (progress while closing).
        self.applied = 0
        with contextlib.suppress(sqlite3.Error):
            conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._deferred: dict[object, tuple[float, Op]] = {}
        self._deferred_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="teamdeck-history", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ callers (any thread)

    def submit(self, op: Op) -> None:
        if self.failed is None:
            self._queue.put(op)

    def defer(self, key: object, delay: float, op: Op) -> None:
        """Run ``op`` after ``delay`` seconds, once per ``key`` until it has run."""
        if self.failed is not None:
            return
        with self._deferred_lock:
            if key in self._deferred:
                return
            self._deferred[key] = (time.monotonic() + delay, op)
        self._queue.put(None)  # wake the thread so it recomputes its timeout

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything submitted so far (deferred work included) is committed."""
        return self._flush_marker().wait(timeout) or self.failed is not None

    def _flush_marker(self) -> threading.Event:
        """Queue the deferred work now and a marker behind everything queued; the marker is
        set once all of it is committed."""
        with self._deferred_lock:
            due = [op for _, op in self._deferred.values()]
            self._deferred.clear()
        for op in due:
            self.submit(op)
        done = threading.Event()
        self._queue.put(done)
        return done

    @property
    def backlog(self) -> int:
        """Operations queued and not yet applied (approximate while the thread works)."""
        return self._queue.qsize()

    def close(self, timeout: float = 10.0, *, progress: IO[str] | None = None) -> None:
        """Commit everything queued, then stop the thread and close the connection.

        However long the backlog (a busy run ends with thousands of events queued), all of it
        is written: the wait gives up only when the thread has applied nothing for ``timeout``
        seconds (a stuck disk), or the archive failed. When it takes over a second, a line on
        ``progress`` (standard error by default) says what is left, every few seconds."""
        if self._thread.is_alive():
            done = self._flush_marker()
            self._drain(done, timeout, sys.stderr if progress is None else progress)
            self._queue.put(_STOP)
            self._thread.join(timeout)
        if not self._thread.is_alive():
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()

    def _drain(self, done: threading.Event, stall: float, progress: IO[str]) -> None:
        start = last_report = time.monotonic()
        applied, moved = self.applied, start
        reported = False
        while not done.wait(0.25):
            now = time.monotonic()
            if self.failed is not None or not self._thread.is_alive():
                return
            if self.applied != applied:
                applied, moved = self.applied, now
            elif now - moved > stall:
                log.warning("history: the writer made no progress for %.0f s; closing", stall)
                return
            if now - start >= DRAIN_REPORT and now - last_report >= (
                DRAIN_REPORT_EVERY if reported else DRAIN_REPORT
            ):
                last_report, reported = now, True
                with contextlib.suppress(Exception):
                    progress.write(
                        f"teamdeck: saving the run's history: {self.backlog:,} events left"
                        f" to write to {self.path}\n"
                    )
                    progress.flush()
        if reported:
            with contextlib.suppress(Exception):
                took = time.monotonic() - start
                progress.write(f"teamdeck: the run's history is saved ({took:.1f} s)\n")
                progress.flush()

    # ------------------------------------------------------------------ the thread

    def _next_timeout(self) -> float | None:
        with self._deferred_lock:
            if not self._deferred:
                return None
            first = min(due for due, _ in self._deferred.values())
        return max(0.0, first - time.monotonic())

    def _due(self) -> list[Op]:
        now = time.monotonic()
        with self._deferred_lock:
            keys = [k for k, (due, _) in self._deferred.items() if due <= now]
            return [self._deferred.pop(k)[1] for k in keys]

    def _run(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=self._next_timeout())
            except queue.Empty:
                item = None
            batch: list[object] = [item]
            deadline = time.monotonic() + self.linger
            while len(batch) < self.max_batch and not _urgent(batch[-1]):
                wait = deadline - time.monotonic()
                try:
                    batch.append(
                        self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
                    )
                except queue.Empty:
                    break
            ops: list[Op] = []
            waiters: list[threading.Event] = []
            stop = False
            for entry in batch:
                if entry is _STOP:
                    stop = True
                elif isinstance(entry, threading.Event):
                    waiters.append(entry)
                elif entry is not None:
                    ops.append(entry)  # type: ignore[arg-type]
            # Deferred work last: a re-read sees the file as it is now, so it must come after
            # everything queued before it (snapshots of earlier states of the same file).
            ops.extend(self._due())
            if ops and self.failed is None:
                self._apply(ops)
            for waiter in waiters:
                waiter.set()
            if stop:
                return

    def _apply(self, ops: list[Op]) -> None:
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            for op in ops:
                try:
                    op(conn)
                except sqlite3.DatabaseError:
                    raise
                except Exception:  # a bug in one recorder step must not stop the archive
                    log.exception("history: an event could not be recorded")
                self.applied += 1
            if self.before_commit is not None:
                self.before_commit(conn)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            self._fail(describe_error(self.path, exc))
            return
        self.commits += 1
        if self.on_commit is not None:
            self.on_commit(len(ops))

    def _fail(self, message: str) -> None:
        self.failed = message
        with self._deferred_lock:
            self._deferred.clear()
        if self.on_error is not None:
            with contextlib.suppress(Exception):
                self.on_error(message)


def _urgent(item: object) -> bool:
    """A flush or a stop: commit what is there now."""
    return item is _STOP or isinstance(item, threading.Event)

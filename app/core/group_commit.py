"""Writes to one file from many threads of a process, made together (a group commit).

An inbox append takes the file's lock, copies the file with the new entry and replaces it
atomically with two fsyncs. The lead's inbox is where a whole team writes (every teammate's
idle notification and completed tasks): with the dashboard's worker threads appending to it at
once, each waited on the others' locks in turn (polling ``flock``) and then paid a rewrite of
its own. Here the threads of one process that write to the same file line up on a plain
thread lock instead; whoever gets it writes what every thread waiting so far handed in, in the
order they handed it in, in one lock, one rewrite, one pair of fsyncs. Each caller returns
once its own items are on disk (never before), with its own outcome: an error of the write is
every caller's of that batch; a refusal of one caller's ``guard`` is that caller's alone.

Other processes are unaffected: they take the file's lock as before, and see whole writes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")

#: ``write(batch)``: make every item of ``batch`` durable; returns, per item, the exception
#: that refused it (``None``: written). Raising means nothing of the batch was written.
BatchWriter = Callable[[Sequence[T]], Sequence[BaseException | None]]


class _Waiting(Generic[T]):
    __slots__ = ("done", "error", "item")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = False
        self.error: BaseException | None = None


class GroupCommit(Generic[T]):
    """Per key (a file's path), the items handed in and not written yet, and its writer lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: dict[str, list[_Waiting[T]]] = {}
        self._writers: dict[str, threading.Lock] = {}
        #: Batches written so far (what the tests count).
        self.batches = 0

    def submit(self, key: str, item: T, write: BatchWriter[T]) -> None:
        """Write ``item`` with whatever other threads handed in for ``key`` meanwhile; returns
        once it is written, or raises what refused it."""
        waiting = _Waiting(item)
        with self._lock:
            self._queued.setdefault(key, []).append(waiting)
            writer = self._writers.setdefault(key, threading.Lock())
        with writer:
            if not waiting.done:  # nobody took it along: this thread writes the batch
                with self._lock:
                    batch = self._queued.pop(key, [])
                    self.batches += 1
                try:
                    errors: Sequence[BaseException | None] = write([w.item for w in batch])
                except BaseException as exc:
                    errors = [exc] * len(batch)
                for one, error in zip(batch, errors, strict=True):
                    one.error = error
                    one.done = True
        if waiting.error is not None:
            raise waiting.error

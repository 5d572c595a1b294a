"""An atomic write whose bytes reach the disk while the file it replaces is still being checked.

A cold append to a large inbox (a process that has not seen the file: it must check that the
file is a valid array before extending it) used to cost the check *then* the write and its
fsync. Both are needed, but only the rename has to wait for the check: the rename is the
moment the new version becomes the file, so an invalid original is still never replaced.
Here the temp file is written (into the page cache: fast), then a helper thread fsyncs it --
one system call, which releases the GIL for its whole duration -- while the calling thread
runs the check. If the check fails, the temp file is removed and the check's error
propagates, exactly as if nothing had been written.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from app.core import files
from app.core.files import (
    Chunks,
    discard_temp,
    naming_full_disk,
    replace_temp,
    write_temp,
)

OVERLAP_MIN = 256 * 1024
"""Below this many bytes a check costs less than starting a thread: check, then write."""


def atomic_write_checked(
    path: Path, data: Chunks, check: Callable[[], None], *, size: int, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` atomically once ``check()`` has returned; if it raises,
    nothing is replaced and its exception propagates. ``size`` (the bytes checked) decides
    whether the write runs alongside the check."""
    if size < OVERLAP_MIN:
        check()
        with naming_full_disk(path):
            replace_temp(write_temp(path, data, durable=durable), path, durable=durable)
        return
    with naming_full_disk(path):
        tmp = write_temp(path, data, durable=False)
    if not durable:
        _checked(tmp, check)
        replace_temp(tmp, path, durable=False)
        return
    ready = threading.Event()
    failed: list[BaseException] = []

    def flush() -> None:
        try:
            fd = os.open(tmp, os.O_RDONLY | os.O_CLOEXEC)
            try:
                ready.set()  # from here on this thread only waits for the disk (GIL released)
                files._datasync(fd)
            finally:
                os.close(fd)
        except BaseException as exc:  # handed to the caller's thread below
            failed.append(exc)
        finally:
            ready.set()

    flusher = threading.Thread(target=flush, name="teamdeck-fsync", daemon=True)
    flusher.start()
    ready.wait()
    try:
        _checked(tmp, check)
    finally:
        flusher.join()
    if failed:
        discard_temp(tmp)
        with naming_full_disk(path):
            raise failed[0]
    with naming_full_disk(path):
        replace_temp(tmp, path, durable=True)


def _checked(tmp: Path, check: Callable[[], None]) -> None:
    try:
        check()
    except BaseException:
        discard_temp(tmp)
        raise

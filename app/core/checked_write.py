"""An atomic write whose bytes reach the disk while the file it replaces is still being checked.

A cold append to a large inbox (a process that has not seen the file: it must check that the
file is a valid array before extending it) used to cost the check *then* the write and its
fsync. Both are needed, but only the rename has to wait for the check: the rename is the
moment the new version becomes the file, so an invalid original is still never replaced.
Here a helper thread runs the check while the calling thread writes the temp file and fsyncs
it (system calls that release the GIL: the copy into the page cache, then the wait for the
disk). If the check fails, the temp file is removed and the check's error
propagates, exactly as if nothing had been written.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable
from pathlib import Path

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
    if not durable:
        with naming_full_disk(path):
            tmp = write_temp(path, data, durable=False)
        _checked(tmp, check)
        replace_temp(tmp, path, durable=False)
        return
    done = _thread.allocate_lock()
    done.acquire()
    failed: list[BaseException] = []

    def run_check() -> None:
        try:
            check()
        except BaseException as exc:  # handed to the caller's thread below
            failed.append(exc)
        finally:
            done.release()

    # A bare thread: ``threading.Thread.start`` waits until the new thread runs, and on a busy
    # machine that wait alone can outlast the check. The caller's thread goes straight on to
    # write and fsync the temp file; the check runs whenever the helper gets a CPU, and the
    # rename waits for both.
    _thread.start_new_thread(run_check, ())
    try:
        with naming_full_disk(path):
            tmp = write_temp(path, data, durable=True)
    finally:
        with done:  # the check is done with the buffers (and has its verdict)
            pass
    if failed:
        discard_temp(tmp)
        raise failed[0]
    with naming_full_disk(path):
        replace_temp(tmp, path, durable=True)


def _checked(tmp: str, check: Callable[[], None]) -> None:
    try:
        check()
    except BaseException:
        discard_temp(tmp)
        raise

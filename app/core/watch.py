"""One watcher per process: file changes under a home -> typed events, subscribers and waiters.

A :class:`Watcher` runs one ``watchfiles.awatch`` over the home's ``teams/`` and ``tasks/`` and
also listens to ``Home.subscribe`` (the writes this process makes). Both sources feed the same
dispatcher, on the event loop's thread, which

* bumps a sequence number per event (``version``, ``inbox_version()``, ``tasks_version()``),
* wakes waiters (``wait_for_inbox``, ``wait_for_tasks``, ``wait_for``) on *every* event, and
* hands deduplicated batches to subscribers (``subscribe``) and ``events()`` iterators.

Raw changes map to events by path and by the state on disk when the batch is handled:
``teams/{t}/config.json`` -> ``TeamChanged(t)``, or ``TeamRemoved(t)`` once the config (or the
team directory) is gone; ``teams/{t}/inboxes/{agent}.json`` -> ``InboxChanged(t, agent)``;
``tasks/{t}/{id}.json`` -> ``TaskChanged(t, id)``. Temp files, lock files and directories,
``.corrupt-`` copies, ``.highwatermark`` and ``.lock`` never get past the filter. A new team,
inbox or task directory is scanned once when it appears, because files created in it before
inotify watches it would otherwise go unreported.

Waiting without lost wakeups -- take the version *before* looking, wait for anything newer::

    while True:
        seq = watcher.inbox_version(team, me)        # 1. remember where we are
        unread = home.mailbox(team).unread(me)       # 2. look
        if unread:
            handle(unread)
            continue
        await watcher.wait_for_inbox(team, me, after=seq)   # 3. sleep until newer than seq

A write that lands after step 1 bumps the version past ``seq`` (the bump always happens after
the write), so step 3 returns at once instead of sleeping through it. Waiters may wake
spuriously (the same write is often reported twice: in-process, then by inotify); a caller
always re-checks the files, so that costs one read and never loses a message.

Duplicate suppression for subscribers: the watcher remembers, per file, the identity
``(inode, size, mtime_ns, ctime_ns)`` the file had when an event for it was last delivered.
An event whose file still has that identity (typically inotify reporting, a few ms later, a
write this process already announced) is not delivered again: a subscriber re-reads the file
on each event, and the read it made after the earlier delivery already saw this state. Atomic
writes give every version of a file a new inode, so equal identities mean the same content in
practice. Waiters are not subject to this (for them a duplicate is harmless; a miss is not).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from watchfiles import Change, awatch

from app.core.events import ChangeEvent, InboxChanged, TaskChanged, TeamChanged, TeamRemoved
from app.core.files import ensure_dir, is_temp_name

if TYPE_CHECKING:
    from app.core.home import Home

log = logging.getLogger(__name__)

DEBOUNCE_MS = 10
"""Longest a burst of changes is held before it is reported (watchfiles' default: 1,600 ms)."""
STEP_MS = 3
"""How often the watch thread looks at what inotify collected; a batch is reported once one
step passes with no new change, so a lone write is reported ~1.5 steps after it lands.
watchfiles wakes the thread (and takes the GIL) every step even when idle, so this trades
latency for idle CPU. Measured with ``bench/watch.py --sweep`` on a busy 2-CPU VM (cross-
process p50 including the ~5 ms fsynced write; idle CPU as % of one core): step 1 ms ->
~4-9 ms, 0.9-1.5%; 2 -> ~5-8 ms, 0.8-1.2%; 3 -> ~7-10 ms, 0.45-0.8%; 5 -> ~12-14 ms,
0.35-0.7%; 10 -> ~18 ms, 0.3-0.5%. 3 ms is the smallest step that stays under the 1% idle
budget when the machine is loaded, with p50 about half the 20 ms target."""
RUST_TIMEOUT_MS = 1_000
"""The watch thread returns to Python this often when idle; bounds how long a *cancelled*
(rather than stopped) watcher task takes to finish."""

Callback = Callable[[list[ChangeEvent]], object]
Predicate = Callable[[ChangeEvent], bool]
FileIdentity = tuple[int, int, int, int] | None
RawChange = tuple[Change, str]


def is_ignored_name(name: str) -> bool:
    """Names the watcher never reports: temp files, dot files (``.lock``, ``.highwatermark``),
    lock files and directories (and proper-lockfile's ``.lock.stale-*`` graves) and
    quarantined ``.corrupt-`` copies."""
    return (
        name.startswith(".")
        or is_temp_name(name)
        or name.endswith(".lock")
        or ".lock." in name
        or ".corrupt-" in name
    )


def dedupe(events: Iterable[ChangeEvent]) -> list[ChangeEvent]:
    """Drop repeated events, keeping each at its *last* position (the latest word wins when a
    team is removed and created again within one batch)."""
    seen: set[ChangeEvent] = set()
    kept: list[ChangeEvent] = []
    for event in reversed(list(events)):
        if event not in seen:
            seen.add(event)
            kept.append(event)
    kept.reverse()
    return kept


def _sort_key(event: ChangeEvent) -> tuple[int, str, int, str]:
    if isinstance(event, TaskChanged):
        tid = event.task_id
        return (1, event.team, int(tid) if tid.isdigit() else -1, tid)
    if isinstance(event, InboxChanged):
        return (2, event.team, 0, event.agent)
    return (0, event.team, 0, "")


def _identity(path: Path) -> FileIdentity:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(eq=False)
class _Waiter:
    predicate: Predicate
    future: asyncio.Future[ChangeEvent | None] = field(repr=False)


class Watcher:
    """Typed change events for one home, from this process and from every other one.

    Use it as ``async with Watcher(home) as w: ...``, or ``await w.start()`` / ``await
    w.stop()``, or just iterate ``w.events()`` (which starts and stops it when needed). All
    methods are called from the event loop's thread; in-process writes may come from any
    thread (they reach the loop through ``call_soon_threadsafe``).

    Args:
        home: the home to watch.
        debounce_ms: longest a burst of changes is held before it is reported.
        step_ms: polling step of the watch thread (see ``STEP_MS``).
        cross_process: ``False`` skips inotify: only this process's writes are seen (for tests
            of code that needs waiters but not other processes).
        force_polling: passed to watchfiles (``None``: its default, inotify except on WSL).
    """

    def __init__(
        self,
        home: Home,
        *,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        cross_process: bool = True,
        force_polling: bool | None = None,
    ) -> None:
        self.home = home
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.cross_process = cross_process
        self.force_polling = force_polling
        self._teams_dir = home.layout.teams_dir
        self._tasks_dir = home.layout.tasks_dir
        self._teams_prefix = str(self._teams_dir) + os.sep
        self._tasks_prefix = str(self._tasks_dir) + os.sep

        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop_event = asyncio.Event()
        self._unsubscribe_home: Callable[[], None] | None = None

        self._pending: list[ChangeEvent] = []
        self._pending_lock = threading.Lock()
        self._flush_scheduled = False

        self._seq = 0
        self._versions: dict[ChangeEvent, int] = {}
        self._tasks_seq: dict[str, int] = {}
        self._delivered: dict[Path, FileIdentity] = {}
        self._waiters: list[_Waiter] = []
        self._subscribers: list[Callback] = []
        self._queues: list[asyncio.Queue[list[ChangeEvent] | None]] = []

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"Watcher({self.home!r}, {state})"

    # ------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self._loop is not None

    async def start(self) -> None:
        """Subscribe to this process's writes and start watching the disk.

        When it returns, the inotify watch is in place: any later write is reported."""
        if self._loop is not None:
            return
        loop = asyncio.get_running_loop()
        ensure_dir(self._teams_dir)
        ensure_dir(self._tasks_dir)
        self._loop = loop
        self._stop_event = asyncio.Event()
        self._unsubscribe_home = self.home.subscribe(self._on_home_event)
        if self.cross_process:
            self._task = loop.create_task(self._run(), name=f"watcher {self.home.root}")
            # The task's first step creates the inotify watch (awatch sets it up before its
            # first await); tasks run in FIFO order, so one yield lets it get that far.
            await asyncio.sleep(0)

    async def stop(self) -> None:
        """Stop watching (within a few ms). Pending waiters return ``False`` / ``None``,
        ``events()`` iterators end. The watcher can be started again."""
        if self._loop is None:
            return
        self._stop_event.set()
        if self._unsubscribe_home is not None:
            self._unsubscribe_home()
            self._unsubscribe_home = None
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(task, timeout=max(5.0, RUST_TIMEOUT_MS / 1000 * 2))
            except TimeoutError:  # pragma: no cover - the thread ignored the stop event
                log.warning("watcher thread did not stop in time")
            except Exception:  # pragma: no cover - already logged by _run
                pass
        self._flush_local()
        self._loop = None
        for waiter in self._waiters:
            if not waiter.future.done():
                waiter.future.set_result(None)
        self._waiters.clear()
        for queue in self._queues:
            queue.put_nowait(None)

    async def __aenter__(self) -> Watcher:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def _run(self) -> None:
        """The inotify loop; restarts (after a growing pause) if the underlying watcher fails."""
        pause = 0.5
        while not self._stop_event.is_set():
            try:
                async for changes in awatch(
                    self._teams_dir,
                    self._tasks_dir,
                    watch_filter=self.watch_filter,
                    debounce=self.debounce_ms,
                    step=self.step_ms,
                    stop_event=self._stop_event,
                    rust_timeout=RUST_TIMEOUT_MS,
                    force_polling=self.force_polling,
                ):
                    events = self.map_changes(changes)
                    if events:
                        self._dispatch(events)
                return
            except Exception:
                log.exception("file watcher failed; restarting it in %.1f s", pause)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop_event.wait(), timeout=pause)
                pause = min(pause * 2, 10.0)
                with contextlib.suppress(OSError):
                    ensure_dir(self._teams_dir)
                    ensure_dir(self._tasks_dir)

    # ------------------------------------------------------------------ consumers

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        """Call ``callback(batch)`` on the loop's thread for every delivered batch (this
        process's writes and other processes'); returns an unsubscriber. See the module
        docstring for how duplicates are suppressed."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    async def events(self) -> AsyncGenerator[list[ChangeEvent], None]:
        """Batches of events as they happen, until the watcher stops.

        Batches that pile up while the consumer is busy are merged (and deduplicated) into
        one. Starts the watcher if it is not running, and then stops it when the iteration
        ends (close the iterator, e.g. with ``contextlib.aclosing``, to make that prompt)."""
        queue: asyncio.Queue[list[ChangeEvent] | None] = asyncio.Queue()
        self._queues.append(queue)
        owned = not self.running
        try:
            if owned:
                await self.start()
            while True:
                batch = await queue.get()
                if batch is None:
                    return
                finished = False
                while not queue.empty():
                    more = queue.get_nowait()
                    if more is None:
                        finished = True
                        break
                    batch.extend(more)
                yield dedupe(batch)
                if finished:
                    return
        finally:
            with contextlib.suppress(ValueError):
                self._queues.remove(queue)
            if owned:
                await self.stop()

    # ------------------------------------------------------------------ versions

    @property
    def version(self) -> int:
        """Sequence number of the last event handled (any key)."""
        return self._seq

    def event_version(self, event: ChangeEvent) -> int:
        """Sequence number of the last occurrence of ``event`` (0 if never seen)."""
        return self._versions.get(event, 0)

    def inbox_version(self, team: str, agent: str) -> int:
        """Sequence number of the last change of that inbox (or removal of its team)."""
        return max(
            self._versions.get(InboxChanged(team, agent), 0),
            self._versions.get(TeamRemoved(team), 0),
        )

    def tasks_version(self, team: str) -> int:
        """Sequence number of the last change of any task of ``team`` (or its removal)."""
        return max(self._tasks_seq.get(team, 0), self._versions.get(TeamRemoved(team), 0))

    # ------------------------------------------------------------------ waiters

    async def wait_for(
        self,
        predicate: Predicate,
        timeout: float | None = None,  # noqa: ASYNC109 - a timeout is an answer, not an error
        *,
        after: int | None = None,
    ) -> ChangeEvent | None:
        """Wait for an event that satisfies ``predicate``; return it, or ``None`` on timeout
        (or when the watcher stops).

        With ``after=seq`` (a version taken earlier), an event already handled since then
        counts too: the latest such event is returned at once."""
        self._require_running()
        if after is not None:
            found = [(s, e) for e, s in self._versions.items() if s > after and predicate(e)]
            if found:
                return max(found, key=lambda item: item[0])[1]
        assert self._loop is not None
        waiter = _Waiter(predicate, self._loop.create_future())
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(timeout):
                return await waiter.future
        except TimeoutError:
            return None
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    async def wait_for_inbox(
        self,
        team: str,
        agent: str,
        timeout: float | None = None,  # noqa: ASYNC109 - see wait_for
        *,
        after: int | None = None,
    ) -> bool:
        """Wait until ``agent``'s inbox in ``team`` changes (or the team is removed).

        ``after``: a value of ``inbox_version()`` (or ``version``) taken before the caller
        last read the inbox; a change since then returns ``True`` at once. Without it, only a
        change after this call counts. ``False`` on timeout or when the watcher stops."""
        self._require_running()
        if after is not None and self.inbox_version(team, agent) > after:
            return True
        target = InboxChanged(team, agent)
        removed = TeamRemoved(team)
        event = await self.wait_for(lambda e: e in (target, removed), timeout)
        return event is not None

    async def wait_for_tasks(
        self,
        team: str,
        timeout: float | None = None,  # noqa: ASYNC109 - see wait_for
        *,
        after: int | None = None,
    ) -> bool:
        """Wait until any task of ``team`` changes (or the team is removed); like
        ``wait_for_inbox``, with ``after`` a value of ``tasks_version()``."""
        self._require_running()
        if after is not None and self.tasks_version(team) > after:
            return True

        def matches(e: ChangeEvent) -> bool:
            return isinstance(e, TaskChanged | TeamRemoved) and e.team == team

        return await self.wait_for(matches, timeout) is not None

    def _require_running(self) -> None:
        if self._loop is None:
            raise RuntimeError("the watcher is not running: start it first")

    # ------------------------------------------------------------------ raw changes -> events

    def _split(self, path: str) -> tuple[str, list[str]] | None:
        if path.startswith(self._teams_prefix):
            return "teams", path[len(self._teams_prefix) :].split(os.sep)
        if path.startswith(self._tasks_prefix):
            return "tasks", path[len(self._tasks_prefix) :].split(os.sep)
        return None

    def watch_filter(self, change: Change, path: str) -> bool:
        """Keep only paths that can map to an event (see the module docstring)."""
        split = self._split(path)
        if split is None:
            return False
        area, parts = split
        if any(is_ignored_name(part) for part in parts):
            return False
        if len(parts) == 1:  # a team directory or task directory appearing / disappearing
            return True
        if area == "teams":
            if len(parts) == 2:
                return parts[1] in ("config.json", "inboxes")
            return len(parts) == 3 and parts[1] == "inboxes" and parts[2].endswith(".json")
        return len(parts) == 2 and parts[1].endswith(".json") and parts[1][:-5].isdigit()

    def map_changes(self, changes: Iterable[RawChange]) -> list[ChangeEvent]:
        """Turn one batch of (filtered) raw changes into sorted, deduplicated events, using
        the state on disk now (a config that exists means changed, else removed)."""
        events: list[ChangeEvent] = []
        for change, path in changes:
            split = self._split(path)
            if split is None:
                continue
            area, parts = split
            team = parts[0]
            if area == "teams":
                if len(parts) == 1:  # the team directory
                    if change == Change.deleted:
                        events.append(self._team_state(team))
                    elif change == Change.added:  # scan: its files may predate the watch
                        if (self._teams_dir / team / "config.json").exists():
                            events.append(TeamChanged(team))
                        events.extend(self._scan_inboxes(team))
                elif parts[1] == "config.json":
                    events.append(self._team_state(team))
                elif len(parts) == 2:  # the inboxes directory
                    if change == Change.added:
                        events.extend(self._scan_inboxes(team))
                else:
                    events.append(InboxChanged(team, parts[2][:-5]))
            elif len(parts) == 1:  # a task directory
                if change == Change.added:
                    events.extend(self._scan_tasks(team))
            else:
                events.append(TaskChanged(team, parts[1][:-5]))
        return sorted(dedupe(events), key=_sort_key)

    def _team_state(self, team: str) -> ChangeEvent:
        if os.path.exists(self._teams_dir / team / "config.json"):
            return TeamChanged(team)
        return TeamRemoved(team)

    def _scan_inboxes(self, team: str) -> list[ChangeEvent]:
        try:
            entries = list(os.scandir(self._teams_dir / team / "inboxes"))
        except OSError:
            return []
        return [
            InboxChanged(team, e.name[:-5])
            for e in entries
            if e.name.endswith(".json") and not is_ignored_name(e.name)
        ]

    def _scan_tasks(self, team: str) -> list[ChangeEvent]:
        try:
            entries = list(os.scandir(self._tasks_dir / team))
        except OSError:
            return []
        return [
            TaskChanged(team, e.name[:-5])
            for e in entries
            if e.name.endswith(".json") and e.name[:-5].isdigit()
        ]

    def _path_of(self, event: ChangeEvent) -> Path:
        if isinstance(event, InboxChanged):
            name = event.agent.replace("@", "-")  # as in the inbox file's name
            return self._teams_dir / event.team / "inboxes" / f"{name}.json"
        if isinstance(event, TaskChanged):
            return self._tasks_dir / event.team / f"{event.task_id}.json"
        return self._teams_dir / event.team / "config.json"

    # ------------------------------------------------------------------ dispatch

    def _on_home_event(self, event: ChangeEvent) -> None:
        """``Home.subscribe`` listener: runs in the writer's thread."""
        loop = self._loop
        if loop is None:
            return
        with self._pending_lock:
            self._pending.append(event)
            if self._flush_scheduled:
                return
            self._flush_scheduled = True
        try:
            loop.call_soon_threadsafe(self._flush_local)
        except RuntimeError:  # the loop is closed
            with self._pending_lock:
                self._flush_scheduled = False
                self._pending.clear()

    def _flush_local(self) -> None:
        with self._pending_lock:
            events, self._pending = self._pending, []
            self._flush_scheduled = False
        if events and self._loop is not None:
            self._dispatch(dedupe(events))

    def _dispatch(self, events: list[ChangeEvent]) -> None:
        """Handle one batch on the loop's thread: versions, waiters, then subscribers."""
        deliver: list[ChangeEvent] = []
        for event in events:
            self._seq += 1
            self._versions[event] = self._seq
            if isinstance(event, TaskChanged):
                self._tasks_seq[event.team] = self._seq
            path = self._path_of(event)
            identity = _identity(path)
            if path not in self._delivered or self._delivered[path] != identity:
                deliver.append(event)
                self._delivered[path] = identity
            if isinstance(event, TeamRemoved):
                self._forget_team(event.team)
        for waiter in list(self._waiters):
            if waiter.future.done():
                continue
            try:
                match = next((e for e in events if waiter.predicate(e)), None)
            except Exception as exc:
                waiter.future.set_exception(exc)
                continue
            if match is not None:
                waiter.future.set_result(match)
        if not deliver:
            return
        for callback in list(self._subscribers):
            try:
                callback(list(deliver))
            except Exception:
                log.exception("watcher subscriber %r failed", callback)
        for queue in self._queues:
            queue.put_nowait(list(deliver))

    def _forget_team(self, team: str) -> None:
        """Drop remembered file identities of a removed team (its files are gone)."""
        inboxes = self._teams_dir / team / "inboxes"
        tasks = self._tasks_dir / team
        for path in [p for p in self._delivered if p.parent in (inboxes, tasks)]:
            del self._delivered[path]

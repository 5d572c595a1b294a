"""One watcher per process: file changes under a home -> typed events for subscribers.

A :class:`Watcher` listens to two sources, and hands both to one dispatcher on the event
loop's thread, which delivers deduplicated batches to subscribers (``subscribe``) and
``events()`` iterators:

* ``Home.subscribe``: the writes this process makes, announced by the writer itself;
* the disk: on Linux an inotify watch of exactly the folders changes live in
  (:class:`~app.core.inotify.HomeTree`, read on the event loop, so an idle watcher costs no
  CPU at all); elsewhere, or with ``force_polling``, watchfiles' watch thread.

Looking creates nothing: folders that do not exist yet (``teams/``, ``tasks/``, even the home)
are watched once they appear, and scanned then.

Raw changes map to events by path and by the state on disk when the batch is handled
(:mod:`app.core.change_map`).

Duplicate suppression: the watcher remembers, per file, the identity ``(inode, size,
mtime_ns, ctime_ns)`` the file had when subscribers were last told about it. A change whose
file still has that identity -- typically the disk reporting, a moment later, a write this
process already announced -- is not delivered again: a subscriber re-reads the file on each
event, and the read it made after the earlier delivery already saw this state. Atomic writes
give every version of a file a new inode, so equal identities mean the same content in
practice. This process's inbox writes carry the identity they wrote (taken under the inbox's
lock), so the echo of a write is recognised even if another write followed it.

Marking messages read is not news for whoever waits for mail: ``Mailbox`` announces it as
``InboxRead`` with the identity the file had just before the rewrite. It reaches subscribers
as ``InboxRead`` only if that earlier identity is the one they were last told about (nothing
else happened to the file in between); otherwise as ``InboxChanged``, because the rewrite may
carry a message another process appended meanwhile. So an agent marking its own mail read
does not wake itself, and no message is ever hidden behind a read flag.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncGenerator, Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from watchfiles import Change, awatch

from app.core import inotify
from app.core.change_map import ChangeMap, RawChange, dedupe
from app.core.events import ChangeEvent, InboxChanged, InboxRead, TeamChanged, TeamRemoved

if TYPE_CHECKING:
    from app.core.home import Home

log = logging.getLogger(__name__)

DEBOUNCE_MS = 10
"""watchfiles fallback: longest a burst of changes is held before it is reported."""
STEP_MS = 3
"""watchfiles fallback: how often its watch thread looks at what the OS collected (it wakes
this often even when idle; the inotify backend has no step and no idle cost)."""
RUST_TIMEOUT_MS = 1_000
"""watchfiles fallback: its thread returns to Python this often when idle, to notice folders
that appeared and to bound how long a cancelled watcher takes to finish."""

Callback = Callable[[list[ChangeEvent]], object]
FileIdentity = tuple[int, int, int, int] | None
_UNKNOWN = (-1, -1, -1, -1)
_REMOVED = (-2, -2, -2, -2)  # what subscribers last heard of a removed team's config


def _identity(path: Path) -> FileIdentity:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Watcher:
    """Typed change events for one home, from this process and from every other one.

    Use it as ``async with Watcher(home) as w: ...``, or ``await w.start()`` / ``await
    w.stop()``, or just iterate ``w.events()`` (which starts and stops it when needed). All
    methods are called from the event loop's thread; in-process writes may come from any
    thread (they reach the loop through ``call_soon_threadsafe``).

    Args:
        home: the home to watch.
        debounce_ms, step_ms: the watchfiles fallback's batching (see ``STEP_MS``).
        cross_process: ``False`` skips the disk: only this process's writes are seen.
        force_polling: use watchfiles (``True``: its polling mode) instead of inotify.
        agent_logs: ``False`` ignores the agents' logs and records on disk (``agents/``):
            a teammate process needs only its inbox, the tasks and the config.
    """

    def __init__(
        self,
        home: Home,
        *,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        cross_process: bool = True,
        force_polling: bool | None = None,
        agent_logs: bool = True,
    ) -> None:
        self.home = home
        self.agent_logs = agent_logs
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.cross_process = cross_process
        self.force_polling = force_polling
        self._teams_dir = home.layout.teams_dir
        self._tasks_dir = home.layout.tasks_dir
        self._map = ChangeMap(self._teams_dir, self._tasks_dir, agent_logs=agent_logs)

        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._tree: inotify.HomeTree | None = None
        self._stop_event = asyncio.Event()
        self._unsubscribe_home: Callable[[], None] | None = None

        self._pending: list[ChangeEvent] = []
        self._pending_lock = threading.Lock()
        self._flush_scheduled = False

        self._delivered: dict[Path, FileIdentity] = {}
        self._subscribers: list[Callback] = []
        self._queues: list[asyncio.Queue[list[ChangeEvent] | None]] = []

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"Watcher({self.home!r}, {state})"

    # ------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self._loop is not None

    @property
    def backend(self) -> str:
        """``"inotify"``, ``"watchfiles"`` or ``"none"`` (not watching the disk)."""
        if not self.cross_process:
            return "none"
        if self.force_polling is None and inotify.available():
            return "inotify"
        return "watchfiles"

    async def start(self) -> None:
        """Subscribe to this process's writes and start watching the disk (creating nothing).

        When it returns, the watch of every folder that exists is in place: any later write
        there is reported."""
        if self._loop is not None:
            return
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._stop_event = asyncio.Event()
        self._unsubscribe_home = self.home.subscribe(self._on_home_event)
        if self.backend == "inotify":
            self._tree = inotify.HomeTree(
                self.home.root, self._on_raw_changes, agent_logs=self.agent_logs
            )
            self._tree.start(loop)
        elif self.backend == "watchfiles":
            self._task = loop.create_task(self._run(), name=f"watcher {self.home.root}")
            # The task's first step creates the OS watch (awatch sets it up before its first
            # await); tasks run in FIFO order, so one yield lets it get that far.
            await asyncio.sleep(0)

    async def stop(self) -> None:
        """Stop watching (within a few ms); ``events()`` iterators end. The watcher can be
        started again."""
        if self._loop is None:
            return
        self._stop_event.set()
        if self._unsubscribe_home is not None:
            self._unsubscribe_home()
            self._unsubscribe_home = None
        if self._tree is not None:
            self._tree.stop()
            self._tree = None
        task, self._task = self._task, None
        if task is not None:
            try:
                async with asyncio.timeout(max(5.0, RUST_TIMEOUT_MS / 1000 * 2)):
                    await task
            except TimeoutError:  # pragma: no cover - the thread ignored the stop event
                log.warning("watcher thread did not stop in time")
            except Exception:  # pragma: no cover - already logged by _run
                pass
        self._flush_local()
        self._loop = None
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

    @property
    def watched(self) -> list[str]:
        """The folders watched on disk now (inotify backend; for tests and diagnostics)."""
        return self._tree.watched if self._tree is not None else []

    def _on_raw_changes(self, changes: list[RawChange]) -> None:
        events = self.map_changes(c for c in changes if self.watch_filter(*c))
        if events:
            self._dispatch(events)

    async def _run(self) -> None:
        """The watchfiles loop over the folders that exist; restarts when that set changes
        (checked once a second) and, after a growing pause, if the watcher fails."""
        pause = 0.5
        watched: list[Path] | None = None
        while not self._stop_event.is_set():
            roots = [p for p in (self._teams_dir, self._tasks_dir) if p.is_dir()]
            appeared = [p for p in roots if watched is not None and p not in watched]
            watched = roots
            self._scan_folders(appeared)
            if not roots:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RUST_TIMEOUT_MS / 1000):  # not wait_for (3.11
                        await self._stop_event.wait()  # loses a cancel met by the stop)
                continue
            try:
                async for changes in awatch(
                    *roots,
                    watch_filter=self.watch_filter,
                    debounce=self.debounce_ms,
                    step=self.step_ms,
                    stop_event=self._stop_event,
                    rust_timeout=RUST_TIMEOUT_MS,
                    yield_on_timeout=True,
                    force_polling=self.force_polling,
                ):
                    self._scan_folders(appeared)  # again, now that the watch is in place
                    appeared = []
                    if changes:
                        self._on_raw_changes(list(changes))
                    if [p for p in (self._teams_dir, self._tasks_dir) if p.is_dir()] != roots:
                        break
                else:
                    return
            except Exception:
                log.exception("file watcher failed; restarting it in %.1f s", pause)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(pause):
                        await self._stop_event.wait()
                pause = min(pause * 2, 10.0)

    def _scan_folders(self, folders: list[Path]) -> None:
        """Report what ``teams/`` or ``tasks/`` held when it appeared."""
        changes: list[RawChange] = []
        for folder in folders:
            with contextlib.suppress(OSError):
                changes.extend((Change.added, entry.path) for entry in os.scandir(folder))
        if changes:
            self._on_raw_changes(changes)

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

    # ------------------------------------------------------------------ raw changes -> events

    def watch_filter(self, change: Change, path: str) -> bool:
        """Keep only paths that can map to an event (``ChangeMap.watch_filter``)."""
        return self._map.watch_filter(change, path)

    def map_changes(self, changes: Iterable[RawChange]) -> list[ChangeEvent]:
        """One batch of raw changes as events (``ChangeMap.map_changes``)."""
        return self._map.map_changes(changes)

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
            self._dispatch(events)

    def _dispatch(self, events: list[ChangeEvent]) -> None:
        """Handle one batch on the loop's thread: drop what subscribers already know (see the
        module docstring), then deliver the rest, deduplicated, in order."""
        deliver: list[ChangeEvent] = []
        for event in events:
            path = self._map.path_of(event)
            known = self._delivered.get(path, _UNKNOWN)
            written = getattr(event, "written", None)
            if isinstance(event, InboxRead) and (event.prior is None or event.prior != known):
                # Something else changed the file since subscribers last heard of it.
                event = InboxChanged(event.team, event.agent, written=event.written)
            identity = written if written is not None else _identity(path)
            if isinstance(event, TeamChanged) and identity is None:
                event = TeamRemoved(event.team)  # a late config write's news: it is gone since
            if isinstance(event, TeamRemoved):
                identity = _REMOVED  # unlike "no file", which a late change may have reported
            if identity == known:
                continue
            deliver.append(event)
            self._delivered[path] = identity
            if isinstance(event, TeamRemoved):
                self._forget_team(event.team)
        if not deliver:
            return
        deliver = dedupe(deliver)
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
        agents = self._teams_dir / team / "agents"
        tasks = self._tasks_dir / team
        for path in [p for p in self._delivered if p.parent in (inboxes, agents, tasks)]:
            del self._delivered[path]

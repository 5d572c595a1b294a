"""The real watcher on ``tmp_path``: inotify events from other processes, in-process events
from ``Home.subscribe``, waiters and subscribers.

Timeouts here are hang guards only; no assert depends on how fast anything is. "Another
process" is a real subprocess where the test is about processes, and otherwise a second
``Home`` object on the same root: the watcher only subscribes to the ``Home`` it was given, so
writes through the other one reach it through inotify alone, exactly like another process's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from watchfiles import Change

from app.core import Home, InboxMessage, TeamMember
from app.core.change_map import dedupe, is_ignored_name
from app.core.events import (
    AgentLogChanged,
    ChangeEvent,
    InboxChanged,
    InboxRead,
    TaskChanged,
    TeamChanged,
    TeamRemoved,
)
from app.core.watch import Watcher

GUARD = 5.0  # seconds; only ever reached if something hangs
REPO = Path(__file__).resolve().parents[2]


def make_home(root: Path) -> Home:
    home = Home(root)
    home.teams.create("t")
    home.teams.add_member("t", TeamMember(agent_id="", name="researcher"))
    return home


def msg(text: str = "hi") -> InboxMessage:
    return InboxMessage(sender="team-lead", text=text)


async def run_child(root: Path, code: str) -> None:
    """Run ``code`` in a separate Python process with ``root`` as ``ROOT``."""
    script = f"from pathlib import Path\nROOT = Path({str(root)!r})\n" + textwrap.dedent(code)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", script, env=env)
    async with asyncio.timeout(30):
        assert await proc.wait() == 0


class Collector:
    """A subscriber that keeps every delivered event, and can wait for one."""

    def __init__(self, watcher: Watcher) -> None:
        self.events: list[ChangeEvent] = []
        self.batches: list[list[ChangeEvent]] = []
        self._arrived = asyncio.Event()
        watcher.subscribe(self._on_batch)

    def _on_batch(self, batch: list[ChangeEvent]) -> None:
        self.batches.append(batch)
        self.events.extend(batch)
        self._arrived.set()

    async def until(self, event: ChangeEvent) -> None:
        async with asyncio.timeout(GUARD):
            while event not in self.events:
                self._arrived.clear()
                await self._arrived.wait()


def marker_write(home: Home) -> TaskChanged:
    """A change made behind the watcher's back (no ``Home`` event): once it is delivered,
    every earlier change's disk report has been handled too (the kernel reports in order)."""
    task_dir = home.layout.task_dir("t")
    task_dir.mkdir(parents=True, exist_ok=True)
    number = 1000 + len(list(task_dir.glob("*.json")))
    (task_dir / f"{number}.json").write_text("{}")
    return TaskChanged("t", str(number))


@pytest.mark.parametrize("force_polling", [None, False], ids=["inotify", "watchfiles"])
async def test_a_watcher_without_agent_logs_ignores_them(
    tmp_path: Path, force_polling: bool | None
) -> None:
    """What a teammate process watches: the others' logs (written at every step they take)
    neither wake it nor reach its subscribers; its inbox and the tasks still do."""
    home = make_home(tmp_path)
    agents = home.layout.agents_dir("t")
    agents.mkdir(parents=True)
    log = home.layout.agent_log_path("t", "other")
    async with (
        Watcher(home, agent_logs=False, force_polling=force_polling) as narrow,
        Watcher(home, force_polling=force_polling) as wide,
    ):
        if force_polling is None:
            assert str(agents) not in narrow.watched and str(agents) in wide.watched
        quiet, full = Collector(narrow), Collector(wide)
        log.write_text('{"event": "start"}\n')
        await full.until(AgentLogChanged("t", "other"))
        marker = marker_write(home)
        await quiet.until(marker)
        await full.until(marker)
        assert not any(isinstance(e, AgentLogChanged) for e in quiet.events)


# ----------------------------------------------------------------------------- other processes


async def test_inbox_written_by_another_process_is_delivered_and_yielded(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path)
    batches: list[list[ChangeEvent]] = []
    target = InboxChanged("t", "researcher")
    async with Watcher(home) as watcher:
        seen = Collector(watcher)

        async def consume() -> None:
            async with contextlib.aclosing(watcher.events()) as events:
                async for batch in events:
                    batches.append(batch)
                    if target in batch:
                        return

        consumer = asyncio.create_task(consume())
        assert home.mailbox("t").read("researcher") == []
        await run_child(
            tmp_path,
            """
            from app.core import Home, InboxMessage
            Home(ROOT).mailbox("t").send("researcher", InboxMessage(sender="team-lead", text="x"))
            """,
        )
        await seen.until(target)
        async with asyncio.timeout(GUARD):
            await consumer
    assert any(target in batch for batch in batches)
    assert [m.text for m in home.mailbox("t").read("researcher")] == ["x"]


async def test_team_created_in_another_process_is_seen_with_its_first_inbox(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path)
    home.teams.create("before")  # teams/ exists; see below for a home without it
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        await run_child(
            tmp_path,
            """
            from app.core import Home, InboxMessage, TeamMember
            home = Home(ROOT)
            home.teams.create("fresh")
            home.teams.add_member("fresh", TeamMember(agent_id="", name="a"))
            home.mailbox("fresh").send("a", InboxMessage(sender="team-lead", text="x"))
            """,
        )
        await seen.until(TeamChanged("fresh"))
        await seen.until(InboxChanged("fresh", "a"))


@pytest.mark.parametrize("backend", ["inotify", "watchfiles"])
async def test_looking_creates_nothing_and_folders_are_picked_up_when_they_appear(
    tmp_path: Path, backend: str
) -> None:
    root = tmp_path / "home"
    root.mkdir()
    home = Home(root)
    force = None if backend == "inotify" else False
    if backend == "inotify" and Watcher(home).backend != "inotify":
        pytest.skip("no inotify here")
    async with Watcher(home, force_polling=force) as watcher:
        assert watcher.backend == backend
        seen = Collector(watcher)
        await asyncio.sleep(0.05)
        assert sorted(p.name for p in root.iterdir()) == []  # no teams/, no tasks/
        await run_child(
            root,
            """
            from app.core import Home, InboxMessage, TeamMember
            home = Home(ROOT)
            home.teams.create("t")
            home.teams.add_member("t", TeamMember(agent_id="", name="a"))
            home.mailbox("t").send("a", InboxMessage(sender="team-lead", text="x"))
            home.tasks("t").create("first")
            """,
        )
        await seen.until(TeamChanged("t"))
        await seen.until(InboxChanged("t", "a"))
        await seen.until(TaskChanged("t", "1"))
        # Now watched: a later write in the new folders is reported.
        Home(root).tasks("t").create("second")
        await seen.until(TaskChanged("t", "2"))


async def test_watching_a_home_that_does_not_exist_yet(tmp_path: Path) -> None:
    root = tmp_path / "later"
    home = Home(root)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        await asyncio.sleep(0.05)
        assert not root.exists()
        other = make_home(root)
        other.mailbox("t").send("researcher", msg())
        await seen.until(InboxChanged("t", "researcher"))


async def test_task_create_and_delete_give_task_changed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        task = other.tasks("t").create("Research auth")
        await seen.until(TaskChanged("t", task.id))
        count = len(seen.events)
        other.tasks("t").delete(task.id)
        await seen.until(marker_write(home))
    assert TaskChanged("t", task.id) in seen.events[count:]
    assert all(isinstance(e, TaskChanged) for e in seen.events)  # no .highwatermark, no .lock


async def test_team_delete_gives_team_removed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    other.tasks("t").create("x")
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        other.teams.delete("t", force=True)
        await seen.until(TeamRemoved("t"))
    assert TeamChanged("t") not in seen.events


async def test_team_config_change_gives_team_changed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        other.teams.add_member("t", TeamMember(agent_id="", name="tester"))
        await seen.until(TeamChanged("t"))


async def test_temp_lock_and_corrupt_files_produce_no_events(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    team_dir = home.layout.team_dir("t")
    inboxes = home.layout.inboxes_dir("t")
    tasks = home.layout.task_dir("t")
    tasks.mkdir(parents=True, exist_ok=True)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        (inboxes / f".researcher.json.tmp-{os.getpid()}-00ff00ff").write_text("[")
        (inboxes / "researcher.json.lock").write_text("")
        (inboxes / "team-lead.json.lock").mkdir()  # proper-lockfile's lock directory
        (inboxes / "team-lead.json.lock").rmdir()
        (inboxes / "x.json.lock.stale-1234abcd").mkdir()
        (inboxes / "researcher.json.corrupt-20250101T000000000000Z").write_text("{")
        (team_dir / "config.json.lock").write_text("")
        (team_dir / "notes.txt").write_text("not ours")
        (tasks / ".highwatermark").write_text("7")
        (tasks / ".lock").write_text("")
        (tasks / "3.json.lock").write_text("")
        (tasks / ".3.json.tmp-1-abcdef01").write_text("{")
        (tasks / "3.json.corrupt-20250101T000000000000Z").write_text("{")
        for junk in list(tasks.iterdir()):
            if junk.name.startswith(".3.json.tmp-"):
                junk.unlink()
        # A real change after the junk: once it is reported, the junk would have been too.
        marker = other.tasks("t").create("marker")
        await seen.until(TaskChanged("t", marker.id))
    assert seen.events == [TaskChanged("t", marker.id)]


# ----------------------------------------------------------------------------- this process


async def test_in_process_send_is_delivered_without_the_disk(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:  # only Home.subscribe
        seen = Collector(watcher)
        home.mailbox("t").send("researcher", msg())
        # The notification is one call_soon_threadsafe away: a few loop turns, no waiting.
        for _ in range(5):
            if seen.events:
                break
            await asyncio.sleep(0)
        assert seen.events == [InboxChanged("t", "researcher")]


async def test_in_process_send_from_worker_thread_is_delivered(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:
        seen = Collector(watcher)
        thread = threading.Thread(target=lambda: home.mailbox("t").send("researcher", msg()))
        thread.start()
        await seen.until(InboxChanged("t", "researcher"))
        thread.join()


async def test_many_writer_threads_are_all_announced(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    for i in range(4):
        home.teams.add_member("t", TeamMember(agent_id="", name=f"w{i}"))
    async with Watcher(home, cross_process=False) as watcher:
        seen = Collector(watcher)

        def write(i: int) -> None:
            for n in range(10):
                home.mailbox("t").send(f"w{i}", msg(str(n)))

        await asyncio.gather(*(asyncio.to_thread(write, i) for i in range(4)))
        for i in range(4):
            await seen.until(InboxChanged("t", f"w{i}"))


async def test_in_process_write_is_delivered_once_to_subscribers(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        home.mailbox("t").send("researcher", msg())
        # The disk reports the send too; it is behind a later marker write at the latest.
        await seen.until(marker_write(home))
    assert seen.events.count(InboxChanged("t", "researcher")) == 1


async def test_cross_process_write_after_in_process_write_is_not_suppressed(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        home.mailbox("t").send("researcher", msg("mine"))
        await asyncio.sleep(0)
        assert seen.events == [InboxChanged("t", "researcher")]
        other.mailbox("t").send("researcher", msg("theirs"))
        await seen.until(marker_write(home))
    # The second write changed the file again, so subscribers hear about it again.
    assert seen.events.count(InboxChanged("t", "researcher")) == 2


# ----------------------------------------------------------------------------- marking read


async def test_marking_mail_read_is_not_news_for_the_reader(tmp_path: Path) -> None:
    """A teammate marking its own mail read must not wake itself: the rewrite arrives as
    ``InboxRead`` (never as ``InboxChanged``), and the disk's echo of it is swallowed."""
    home = make_home(tmp_path)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        box = home.mailbox("t")
        box.send("researcher", msg())
        await seen.until(InboxChanged("t", "researcher"))
        await seen.until(marker_write(home))  # the send's echo has come and gone
        count = len(seen.events)
        assert box.mark_read("researcher", 0) == 1
        await seen.until(marker_write(home))  # ... and so has the mark-read's
        after = seen.events[count:]
    assert InboxRead("t", "researcher") in after
    assert InboxChanged("t", "researcher") not in after


async def test_a_message_appended_before_a_mark_read_is_never_hidden(tmp_path: Path) -> None:
    """Another process appends; this process marks an older message read before the watcher
    heard of the append. The rewrite carries the new message, so it is news."""
    home = make_home(tmp_path)
    other = Home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:  # the disk is not looked at
        seen = Collector(watcher)
        home.mailbox("t").send("researcher", msg("first"))
        await seen.until(InboxChanged("t", "researcher"))
        other.mailbox("t").send("researcher", msg("theirs"))  # unseen by the watcher
        count = len(seen.events)
        home.mailbox("t").mark_read("researcher", 0)
        after_it = home.tasks("t").create("delivered after the mark-read's event")
        await seen.until(TaskChanged("t", after_it.id))
        after = seen.events[count:]
    assert InboxChanged("t", "researcher") in after
    assert InboxRead("t", "researcher") not in after


async def test_runtime_teammate_does_not_wake_itself_by_reading_its_mail(
    tmp_path: Path,
) -> None:
    """What the runtime does with the events: an ``InboxRead`` wakes nobody."""
    from app.runtime.agent.wakeup import Wakeup

    home = make_home(tmp_path)
    wake = Wakeup()
    wake.bind(asyncio.get_running_loop())

    def on_batch(batch: list[ChangeEvent]) -> None:
        if InboxChanged("t", "researcher") in batch:
            wake.set()

    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        watcher.subscribe(on_batch)
        home.mailbox("t").send("researcher", msg())
        assert await wake.wait(GUARD)
        await seen.until(marker_write(home))
        wake.clear()
        home.mailbox("t").mark_read("researcher", 0, durable=False)
        await seen.until(marker_write(home))
        assert not await wake.wait(0)


# ----------------------------------------------------------------------------- lifecycle


async def test_stop_returns_promptly_and_can_start_again(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    watcher = Watcher(home)
    await watcher.start()
    assert watcher.running
    async with asyncio.timeout(GUARD):
        await watcher.stop()
    assert not watcher.running
    assert watcher.watched == []
    # It can be started again, and it sees writes again.
    async with watcher:
        seen = Collector(watcher)
        Home(tmp_path).tasks("t").create("again")
        await seen.until(TaskChanged("t", "1"))


async def test_write_right_after_start_is_seen(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    watcher = Watcher(home)
    seen = Collector(watcher)
    await watcher.start()
    try:
        task = other.tasks("t").create("first")  # no pause between start and write
        await seen.until(TaskChanged("t", task.id))
    finally:
        await watcher.stop()


async def test_events_iterator_starts_and_stops_the_watcher(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    watcher = Watcher(home)
    got: list[ChangeEvent] = []

    async def consume() -> None:
        async with contextlib.aclosing(watcher.events()) as events:
            async for batch in events:
                got.extend(batch)
                return

    consumer = asyncio.create_task(consume())
    async with asyncio.timeout(GUARD):
        # The iterator's first step starts the watcher (nothing to wait on but the flag).
        while not watcher.running:  # noqa: ASYNC110
            await asyncio.sleep(0)
    home.mailbox("t").send("researcher", msg())
    async with asyncio.timeout(GUARD):
        await consumer
    assert got == [InboxChanged("t", "researcher")]
    assert not watcher.running  # closing the iterator stopped it


async def test_events_iterator_ends_when_watcher_stops(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:
        batches: list[list[ChangeEvent]] = []

        async def consume() -> None:
            async for batch in watcher.events():
                batches.append(batch)

        consumer = asyncio.create_task(consume())
        await asyncio.sleep(0)
        home.tasks("t").create("a")
        home.tasks("t").create("b")
        await asyncio.sleep(0)
    async with asyncio.timeout(GUARD):
        await consumer
    assert [e for batch in batches for e in batch] == [TaskChanged("t", "1"), TaskChanged("t", "2")]


async def test_subscriber_errors_do_not_stop_delivery(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:

        def broken(batch: list[ChangeEvent]) -> None:
            raise RuntimeError("boom")

        watcher.subscribe(broken)
        seen = Collector(watcher)
        unsubscribe = watcher.subscribe(broken)
        unsubscribe()
        home.tasks("t").create("a")
        await asyncio.sleep(0)
        assert seen.events == [TaskChanged("t", "1")]


# ----------------------------------------------------------------------------- the mapping


def test_watch_filter(tmp_path: Path) -> None:
    watcher = Watcher(Home(tmp_path))
    teams, tasks = str(tmp_path / "teams"), str(tmp_path / "tasks")
    keep = [
        f"{teams}/t",
        f"{teams}/t/config.json",
        f"{teams}/t/inboxes",
        f"{teams}/t/inboxes/researcher.json",
        f"{tasks}/t",
        f"{tasks}/t/12.json",
    ]
    drop = [
        f"{teams}/t/.config.json.tmp-12-abcdef01",
        f"{teams}/t/config.json.lock",
        f"{teams}/t/config.json.corrupt-20250101T000000000000Z",
        f"{teams}/t/inboxes/researcher.json.lock",
        f"{teams}/t/inboxes/researcher.json.lock.stale-0a0b0c0d",
        f"{teams}/t/inboxes/researcher.json.lock/inner",
        f"{teams}/t/inboxes/.researcher.json.tmp-1-00000000",
        f"{teams}/.create.lock",
        f"{teams}/t/notes.txt",
        f"{tasks}/t/.highwatermark",
        f"{tasks}/t/..highwatermark.tmp-1-00000000",
        f"{tasks}/t/.lock",
        f"{tasks}/t/3.json.lock",
        f"{tasks}/t/notes.json",
        str(tmp_path / "elsewhere" / "x.json"),
        teams,
    ]
    for path in keep:
        assert watcher.watch_filter(Change.modified, path), path
    for path in drop:
        assert not watcher.watch_filter(Change.modified, path), path


def test_map_changes_uses_the_state_on_disk(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    home.tasks("t").create("a")
    watcher = Watcher(home)
    teams, tasks = tmp_path / "teams", tmp_path / "tasks"
    changes = {
        (Change.added, str(teams / "t" / "inboxes" / "researcher.json")),
        (Change.deleted, str(tasks / "t" / "9.json")),
        (Change.added, str(teams / "t" / "config.json")),
        (Change.deleted, str(teams / "gone" / "config.json")),
        (Change.deleted, str(teams / "gone")),
        (Change.added, str(tasks / "t" / "1.json")),
    }
    assert watcher.map_changes(changes) == [
        TeamRemoved("gone"),
        TeamChanged("t"),
        TaskChanged("t", "1"),
        TaskChanged("t", "9"),
        InboxChanged("t", "researcher"),
    ]
    # A config deleted and written again within one batch: it exists, so it changed.
    both = {(Change.deleted, str(teams / "t" / "config.json")), (Change.added, str(teams / "t"))}
    assert TeamChanged("t") in watcher.map_changes(both)
    assert TeamRemoved("t") not in watcher.map_changes(both)


def test_new_directories_are_scanned(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    home.mailbox("t").send("researcher", msg())
    home.tasks("t").create("a")
    watcher = Watcher(home)
    teams, tasks = tmp_path / "teams", tmp_path / "tasks"
    assert watcher.map_changes({(Change.added, str(teams / "t"))}) == [
        TeamChanged("t"),
        InboxChanged("t", "researcher"),
    ]
    assert watcher.map_changes({(Change.added, str(teams / "t" / "inboxes"))}) == [
        InboxChanged("t", "researcher")
    ]
    assert watcher.map_changes({(Change.added, str(tasks / "t"))}) == [TaskChanged("t", "1")]
    # A team directory that appears before its config is not a team yet (and not removed).
    (teams / "half").mkdir()
    assert watcher.map_changes({(Change.added, str(teams / "half"))}) == []


def test_dedupe_keeps_the_last_word() -> None:
    events: list[ChangeEvent] = [TeamChanged("t"), TeamRemoved("t"), TeamChanged("t")]
    assert dedupe(events) == [TeamRemoved("t"), TeamChanged("t")]


@pytest.mark.parametrize(
    ("name", "ignored"),
    [
        (".x.json.tmp-1-abcd", True),
        (".lock", True),
        (".highwatermark", True),
        ("x.json.lock", True),
        ("x.json.lock.stale-00ff", True),
        ("x.json.corrupt-20250101T000000Z", True),
        ("researcher.json", False),
        ("config.json", False),
        ("12.json", False),
    ],
)
def test_is_ignored_name(name: str, ignored: bool) -> None:
    assert is_ignored_name(name) is ignored


async def test_a_teams_removal_is_news_whatever_was_heard_of_its_config_before(
    tmp_path: Path,
) -> None:
    """A config write's event handled after the team was deleted (the write ran in another
    thread just before the deletion) finds the config gone. It must not hide the removal
    (its "no file" identity is the same), nor arrive after it as a change: a dashboard would
    keep showing the deleted team as live. Both orders, each in its own batch."""
    for order in ("change first", "removal first"):
        home = make_home(tmp_path / order)
        async with Watcher(home, cross_process=False) as watcher:
            seen = Collector(watcher)
            shutil.rmtree(home.root / "teams" / "t")  # deleted; the events are still to come
            first, second = TeamChanged("t"), TeamRemoved("t")
            if order == "removal first":
                first, second = second, first
            home.emit(first)
            await seen.until(first if order == "removal first" else TeamRemoved("t"))
            home.emit(second)
            marker = home.tasks("u").create("after both")
            await seen.until(TaskChanged("u", marker.id))
        assert seen.events.count(TeamRemoved("t")) == 1, (order, seen.events)
        heard = [e for e in seen.events if isinstance(e, TeamChanged | TeamRemoved)]
        assert heard[-1] == TeamRemoved("t"), (order, heard)

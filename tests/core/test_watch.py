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
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from watchfiles import Change

from app.core import Home, InboxMessage, TeamMember
from app.core.events import ChangeEvent, InboxChanged, TaskChanged, TeamChanged, TeamRemoved
from app.core.watch import Watcher, dedupe, is_ignored_name

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
    """A subscriber that keeps every delivered event."""

    def __init__(self, watcher: Watcher) -> None:
        self.events: list[ChangeEvent] = []
        watcher.subscribe(self.events.extend)


async def wait_event(watcher: Watcher, event: ChangeEvent, after: int) -> None:
    found = await watcher.wait_for(lambda e: e == event, GUARD, after=after)
    assert found == event, f"no {event} within {GUARD} s"


# ----------------------------------------------------------------------------- other processes


async def test_inbox_written_by_another_process_wakes_waiter_and_is_yielded(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path)
    batches: list[list[ChangeEvent]] = []
    target = InboxChanged("t", "researcher")
    async with Watcher(home) as watcher:

        async def consume() -> None:
            async with contextlib.aclosing(watcher.events()) as events:
                async for batch in events:
                    batches.append(batch)
                    if target in batch:
                        return

        consumer = asyncio.create_task(consume())
        seq = watcher.inbox_version("t", "researcher")
        assert home.mailbox("t").read("researcher") == []
        await run_child(
            tmp_path,
            """
            from app.core import Home, InboxMessage
            Home(ROOT).mailbox("t").send("researcher", InboxMessage(sender="team-lead", text="x"))
            """,
        )
        assert await watcher.wait_for_inbox("t", "researcher", GUARD, after=seq)
        async with asyncio.timeout(GUARD):
            await consumer
    assert any(target in batch for batch in batches)
    assert [m.text for m in home.mailbox("t").read("researcher")] == ["x"]


async def test_team_created_in_another_process_is_seen_with_its_first_inbox(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path)
    async with Watcher(home) as watcher:
        seq = watcher.version
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
        await wait_event(watcher, TeamChanged("fresh"), seq)
        await wait_event(watcher, InboxChanged("fresh", "a"), seq)


async def test_task_create_and_delete_give_task_changed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        seq = watcher.tasks_version("t")
        task = other.tasks("t").create("Research auth")
        assert await watcher.wait_for_tasks("t", GUARD, after=seq)
        await wait_event(watcher, TaskChanged("t", task.id), seq)
        seq = watcher.version
        other.tasks("t").delete(task.id)
        await wait_event(watcher, TaskChanged("t", task.id), seq)
    assert TaskChanged("t", task.id) in seen.events
    assert all(isinstance(e, TaskChanged) for e in seen.events)  # no .highwatermark, no .lock


async def test_team_delete_gives_team_removed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    other.tasks("t").create("x")
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        seq = watcher.inbox_version("t", "researcher")
        other.teams.delete("t", force=True)
        await wait_event(watcher, TeamRemoved("t"), seq)
        # A teammate waiting on its inbox hears that its team is gone.
        assert await watcher.wait_for_inbox("t", "researcher", GUARD, after=seq)
    assert TeamRemoved("t") in seen.events
    assert TeamChanged("t") not in seen.events


async def test_team_config_change_gives_team_changed(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    async with Watcher(home) as watcher:
        seq = watcher.version
        other.teams.add_member("t", TeamMember(agent_id="", name="tester"))
        await wait_event(watcher, TeamChanged("t"), seq)


async def test_temp_lock_and_corrupt_files_produce_no_events(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    team_dir = home.layout.team_dir("t")
    inboxes = home.layout.inboxes_dir("t")
    tasks = home.layout.task_dir("t")
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        seq = watcher.version
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
        await wait_event(watcher, TaskChanged("t", marker.id), seq)
    assert seen.events == [TaskChanged("t", marker.id)]


# ----------------------------------------------------------------------------- this process


async def test_in_process_send_wakes_waiter_without_inotify(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:  # only Home.subscribe
        waiter = asyncio.create_task(watcher.wait_for_inbox("t", "researcher", GUARD))
        await asyncio.sleep(0)  # let it register
        home.mailbox("t").send("researcher", msg())
        # The notification is one call_soon_threadsafe away: a few loop turns, no waiting.
        for _ in range(5):
            if waiter.done():
                break
            await asyncio.sleep(0)
        assert waiter.done()
        assert waiter.result() is True


async def test_in_process_send_from_worker_thread_wakes_waiter(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:
        seq = watcher.inbox_version("t", "researcher")
        thread = threading.Thread(target=lambda: home.mailbox("t").send("researcher", msg()))
        thread.start()
        assert await watcher.wait_for_inbox("t", "researcher", GUARD, after=seq)
        thread.join()


async def test_many_writer_threads_are_all_announced(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    for i in range(4):
        home.teams.add_member("t", TeamMember(agent_id="", name=f"w{i}"))
    async with Watcher(home, cross_process=False) as watcher:
        seen = Collector(watcher)
        seq = watcher.version

        def write(i: int) -> None:
            for n in range(10):
                home.mailbox("t").send(f"w{i}", msg(str(n)))

        await asyncio.gather(*(asyncio.to_thread(write, i) for i in range(4)))
        for i in range(4):
            assert await watcher.wait_for_inbox("t", f"w{i}", GUARD, after=seq)
    assert {InboxChanged("t", f"w{i}") for i in range(4)} <= set(seen.events)


async def test_in_process_write_is_delivered_once_to_subscribers(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    async with Watcher(home) as watcher:
        seen = Collector(watcher)
        seq = watcher.version
        home.mailbox("t").send("researcher", msg())
        # inotify reports the send too; it is behind a later marker write at the latest.
        marker = other.tasks("t").create("marker")
        await wait_event(watcher, TaskChanged("t", marker.id), seq)
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
        seq = watcher.version
        other.mailbox("t").send("researcher", msg("theirs"))
        marker = other.tasks("t").create("marker")
        await wait_event(watcher, TaskChanged("t", marker.id), seq)
    # The second write changed the file again, so subscribers hear about it again.
    assert seen.events.count(InboxChanged("t", "researcher")) == 2


# ----------------------------------------------------------------------------- the wait pattern


async def test_after_seq_catches_a_change_made_before_waiting(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:
        seq = watcher.inbox_version("t", "researcher")  # 1. version
        assert home.mailbox("t").unread("researcher") == []  # 2. look: nothing yet
        home.mailbox("t").send("researcher", msg())  # a write lands right here
        await asyncio.sleep(0)  # ... and is handled before the caller gets to wait
        assert watcher.inbox_version("t", "researcher") > seq
        # 3. wait for anything newer than seq: returns at once, no lost wakeup ...
        assert await watcher.wait_for_inbox("t", "researcher", GUARD, after=seq)
        # ... whereas waiting for "the next change" would sleep through it.
        assert not await watcher.wait_for_inbox("t", "researcher", 0.05)


async def test_after_seq_across_processes(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home) as watcher:
        seq = watcher.inbox_version("t", "researcher")
        await run_child(
            tmp_path,
            """
            from app.core import Home, InboxMessage
            Home(ROOT).mailbox("t").send("researcher", InboxMessage(sender="team-lead", text="x"))
            """,
        )
        # Wait for the change through another route first, so it is handled before we wait.
        await wait_event(watcher, InboxChanged("t", "researcher"), seq)
        assert await watcher.wait_for_inbox("t", "researcher", GUARD, after=seq)


async def test_versions_are_per_key(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    home.teams.add_member("t", TeamMember(agent_id="", name="tester"))
    async with Watcher(home, cross_process=False) as watcher:
        seq = watcher.version
        home.mailbox("t").send("tester", msg())
        home.tasks("t").create("x")
        await asyncio.sleep(0)
        assert watcher.inbox_version("t", "tester") > seq
        assert watcher.tasks_version("t") > seq
        assert watcher.inbox_version("t", "researcher") <= seq
        assert watcher.event_version(TaskChanged("t", "1")) > seq


async def test_wait_for_generic_predicate(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:
        seq = watcher.version
        home.tasks("t").create("a")
        home.tasks("t").create("b")
        await asyncio.sleep(0)

        def second_task(e: ChangeEvent) -> bool:
            return isinstance(e, TaskChanged) and e.task_id == "2"

        assert await watcher.wait_for(second_task, GUARD, after=seq) == TaskChanged("t", "2")
        waiter = asyncio.create_task(watcher.wait_for(second_task, GUARD))
        await asyncio.sleep(0)
        home.tasks("t").update("2", status="in_progress")
        assert await waiter == TaskChanged("t", "2")
        assert await watcher.wait_for(lambda e: False, 0.01) is None


async def test_predicate_error_reaches_the_waiter(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    async with Watcher(home, cross_process=False) as watcher:

        def broken(e: ChangeEvent) -> bool:
            raise ValueError("bad predicate")

        waiter = asyncio.create_task(watcher.wait_for(broken, GUARD))
        await asyncio.sleep(0)
        home.tasks("t").create("a")
        with pytest.raises(ValueError, match="bad predicate"):
            await waiter


# ----------------------------------------------------------------------------- lifecycle


async def test_stop_returns_promptly_and_releases_waiters(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    watcher = Watcher(home)
    await watcher.start()
    assert watcher.running
    waiter = asyncio.create_task(watcher.wait_for_inbox("t", "researcher"))  # no timeout
    await asyncio.sleep(0)
    async with asyncio.timeout(GUARD):
        await watcher.stop()
        assert await waiter is False
    assert not watcher.running
    with pytest.raises(RuntimeError, match="not running"):
        await watcher.wait_for_inbox("t", "researcher", 0.01)
    # It can be started again, and it sees writes again.
    async with watcher:
        seq = watcher.version
        Home(tmp_path).tasks("t").create("again")
        await wait_event(watcher, TaskChanged("t", "1"), seq)


async def test_write_right_after_start_is_seen(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    other = Home(tmp_path)
    watcher = Watcher(home)
    await watcher.start()
    try:
        seq = watcher.version
        task = other.tasks("t").create("first")  # no pause between start and write
        await wait_event(watcher, TaskChanged("t", task.id), seq)
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

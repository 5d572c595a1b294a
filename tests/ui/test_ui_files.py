"""The dashboard follows the files: in-process writes, another process's writes (through the
real watcher), corrupt files shown as badges, and the read-only viewer."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

from textual.pilot import Pilot

from app.core import Home, InboxChanged, InboxMessage, TaskChanged, TeamChanged
from app.dashboard.app import TeamDeckApp
from app.dashboard.messages import SwitchTeam
from tests.ui.data import TEAM, build_home, fixed_clock, make_app, ts
from tests.ui.fake_runtime import FakeRuntime
from tests.ui.helpers import screen_text, wait_for
from widgets.approvals import ApprovalsQueue
from widgets.message_feed import MessageFeed
from widgets.task_board import TaskBoard


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded)
    return app


def notes(app: TeamDeckApp) -> list[str]:
    return [str(n.message) for n in [*app._notifications, *app.waiting_toasts]]


async def test_in_process_writes_reach_board_feed_and_panels(
    deck: TeamDeckApp, runtime: FakeRuntime
) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        home = deck.home
        feed = deck.screen.query_one(MessageFeed)
        board = deck.screen.query_one(TaskBoard)
        home.mailbox(TEAM).send(
            "tester", InboxMessage(sender="engineer", text="can you rerun?", timestamp=ts(100))
        )
        await wait_for(pilot, lambda: feed.item_count == 10)
        assert feed.lines()[-1] == "engineer -> tester: can you rerun?"
        home.tasks(TEAM).update("2", status="completed")
        await wait_for(pilot, lambda: "#2 Design token refresh by researcher" in notes(deck))
        status_cell = board.get_cell("2", "status")
        assert status_cell.plain == "completed" and "dim" in str(status_cell.style)
        new = home.tasks(TEAM).create("Document refresh")
        await wait_for(pilot, lambda: new.id in board.task_ids)
        home.tasks(TEAM).update(new.id, status="in_progress", owner="tester")
        await wait_for(
            pilot, lambda: deck.files.current_tasks.get("tester") == "#8 Document refresh"
        )
        assert "#8 Document refresh" in screen_text(deck)  # the tester's panel
        home.tasks(TEAM).delete("5")
        await wait_for(pilot, lambda: "5" not in board.task_ids)
        assert board.task_ids == ["1", "2", "3", "4", "7", "8"]


async def test_rows_out_of_view_are_written_when_they_scroll_in(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    for n in range(60):
        home.tasks(TEAM).create(f"filler {n}")
    app = make_app(tmp_path, FakeRuntime())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        board = app.screen.query_one(TaskBoard)
        await wait_for(pilot, lambda: not board.filling and board.row_count == 66)
        tasks = app.home.tasks(TEAM)  # the app's Home: it hears of its writes
        tasks.update("60", subject="renamed far below")
        tasks.update("2", subject="renamed in view")
        await wait_for(pilot, lambda: board.cells("60")[1] == "renamed far below")
        assert board.get_cell("2", "subject").plain == "renamed in view"
        assert board.get_cell("60", "subject").plain == "filler 52"  # not drawn yet
        board.move_cursor(row=board.get_row_index("60"))
        await wait_for(pilot, lambda: board.get_cell("60", "subject").plain == "renamed far below")


async def test_corrupt_files_show_badges_and_nothing_crashes(deck: TeamDeckApp) -> None:
    async with deck.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        home = deck.home
        home.mailbox(TEAM).path("researcher").write_text('[{"from": "x", ')
        (home.layout.task_dir(TEAM) / "4.json").write_text("not json")
        # written behind the core's back (no event, no watcher here): announce them
        deck.queue_changes([InboxChanged(TEAM, "researcher"), TaskChanged(TEAM, "4")])
        await wait_for(pilot, lambda: "researcher" in deck.files.inbox_errors)
        text = screen_text(deck)
        assert "⚠ researcher.json is corrupt" in text  # the researcher's panel
        assert "⚠ 4.json is corrupt" in text  # the task board
        home.layout.config_path(TEAM).write_text("{")
        deck.queue_changes([TeamChanged(TEAM)])
        await wait_for(pilot, lambda: deck.files.config_error is not None)
        assert "⚠ config.json is corrupt" in screen_text(deck)
        told = "\n".join(notes(deck))  # toasts raised together may be one summary toast
        assert all(f"{f} is corrupt" in told for f in ("researcher.json", "4.json", "config.json"))
        home.mailbox(TEAM).path("researcher").write_text("[]")
        deck.queue_changes([InboxChanged(TEAM, "researcher")])
        await wait_for(pilot, lambda: "researcher" not in deck.files.inbox_errors)
        assert deck.is_running


async def test_read_only_viewer(tmp_path: Path) -> None:
    app = make_app(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert app.files.team == TEAM
        queue = app.screen.query_one(ApprovalsQueue)
        assert [a.kind for a in queue.approvals] == ["plan", "permission"]
        assert [a.name for a in app.agents] == [
            "team-lead",
            "researcher",
            "engineer",
            "tester",
        ]
        await pilot.press("a")
        assert any("Read-only viewer" in n for n in notes(app))
        text = screen_text(app)
        assert "read-only viewer" in text and "#2 Design token refresh" in text
        app.home.mailbox(TEAM).append(
            "team-lead",
            InboxMessage(
                sender="engineer",
                timestamp=ts(120),
                text='{"type":"plan_approval_response","requestId":'
                '"plan_approval-1767225630000@engineer","approved":true}',
            ),
        )
        await wait_for(pilot, lambda: [a.kind for a in queue.approvals] == ["permission"])


async def test_an_empty_home_waits_for_a_team(tmp_path: Path) -> None:
    runtime = FakeRuntime(team=None)
    app = TeamDeckApp(Home(tmp_path), runtime.source(), clock=fixed_clock, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert "no team yet" in screen_text(app)
        build_home(tmp_path)
        app.post_message(SwitchTeam(TEAM))  # what the runtime's TeamLifecycle("created") does
        await wait_for(pilot, lambda: app.files.team == TEAM and app.files.open_tasks == 5)


WRITER = """
import sys
from app.core import Home, InboxChanged, InboxMessage, TaskChanged, TeamChanged
Home(sys.argv[1]).mailbox(sys.argv[2]).send(
    "researcher", InboxMessage(sender="engineer", text=sys.argv[3], summary="from afar")
)
"""


async def test_another_process_write_appears_through_the_real_watcher(tmp_path: Path) -> None:
    build_home(tmp_path)
    app = TeamDeckApp(Home(tmp_path), FakeRuntime().source(), clock=fixed_clock)  # watch=True
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        feed = app.screen.query_one(MessageFeed)
        await pilot.pause(0.2)  # the watcher's inotify watch is in place
        writer = await asyncio.create_subprocess_exec(
            sys.executable, "-c", textwrap.dedent(WRITER), str(tmp_path), TEAM, "hello there"
        )
        assert await asyncio.wait_for(writer.wait(), timeout=30) == 0
        await wait_for(pilot, lambda: "hello there" in " ".join(feed.lines()), within=5)
        assert feed.lines()[-1] == "engineer -> researcher: from afar — hello there"


async def test_blocked_by_shows_only_open_blockers(tmp_path: Path) -> None:
    home = build_home(tmp_path)
    tasks = home.tasks(TEAM)
    first = tasks.create("blocker")
    second = tasks.create("blocked")
    tasks.add_dependency(first.id, second.id)
    app = make_app(tmp_path, FakeRuntime())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        board = app.screen.query_one(TaskBoard)
        await wait_for(pilot, lambda: second.id in board.task_ids)
        assert board.cells(second.id)[4] == f"#{first.id}"
        app.home.tasks(TEAM).update(first.id, status="completed")
        await wait_for(pilot, lambda: board.cells(second.id)[4] == "")

"""The replay view: timeline controls, search, an agent's transcript, the run list; a snapshot."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static

from app.archive.query import Event, RunSummary
from app.archive.replay import Replay
from app.archive.timeline import event_line
from app.dashboard.screens.replay import ReplayApp, ReplayScreen
from app.display.agent_text import shown
from tests.ui.helpers import screen_text, wait_for

T0 = 1_795_000_000.0  # fixed times: the picture never changes


def synthetic_replay(steps: int = 150) -> Replay:
    """A run of ``steps`` rounds, 1 s apart: status, a message, a task change, usage."""
    events: list[Event] = []
    n = 0

    def add(
        at: float,
        kind: str,
        agent: str | None,
        target: str | None,
        frame: str | None,
        text: str,
        data: dict[str, Any] | None = None,
    ) -> None:
        nonlocal n
        n += 1
        raw = json.dumps(data) if data else None
        events.append(Event(n, at, kind, agent, target, frame, text, len(text), raw))

    add(T0, "status", "team-lead", None, "running", "")
    for i in range(1, steps + 1):
        at = T0 + i
        worker = f"worker-{i % 3 + 1}"
        add(at, "status", worker, None, "running", "")
        add(at, "transcript", worker, None, "assistant", f"Working on task {i}.")
        add(
            at,
            "message",
            worker,
            "team-lead",
            "message",
            f"Task #{i} done by {worker}",
            {"summary": f"task {i} done"},
        )
        add(
            at,
            "task",
            worker,
            str(i),
            "completed",
            f"Task number {i}",
            {"old": "in_progress", "new": "completed", "owner": worker},
        )
        add(
            at,
            "usage",
            worker,
            None,
            "claude-sonnet-5-5",
            "",
            {"input": 1000, "output": 100, "cost_usd": 0.003},
        )
    run = RunSummary(
        7,
        "replay-team",
        "a goal",
        "headless",
        "claude-sonnet-5-5",
        False,
        T0,
        T0 + steps + 1,
        "finished",
        "team finished",
        4,
        steps,
        steps,
        len(events),
        0,
        0,
        0,
        0,
        0.45,
        None,
    )
    agents = [
        {"name": name, "color": "blue", "agent_type": "worker"}
        for name in ("team-lead", "worker-1", "worker-2", "worker-3")
    ]
    return Replay(run, events, agents)


def header(app: ReplayApp) -> str:
    return str(app.screen.query_one("#replay-header", Static).render())


def feed(app: ReplayApp) -> str:
    return str(app.screen.query_one("#replay-lines", Static).render())


async def test_timeline_controls() -> None:
    replay = synthetic_replay()
    app = ReplayApp(replay)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        assert screen.position == len(replay) and "event 751/751" in header(app)
        # The point and the length in one time format, history's (issue 30: "12:30 / 12m30s").
        assert re.search(r" \d+m\d\ds / \d+m\d\ds ", header(app)), header(app)
        await pilot.press("home")
        assert screen.position == 0 and screen.query_one("#replay-tasks", DataTable).row_count == 0
        await pilot.press("right", "right", "right")
        assert screen.position == 3
        await pilot.press("left")
        assert screen.position == 2
        # A minute later: every event up to 60 s after the current point.
        await pilot.press("right_square_bracket")
        assert screen.position == replay.position_at(replay.time_at(2) + 60)
        assert "1m0" in header(app)
        tasks = screen.query_one("#replay-tasks", DataTable)
        assert tasks.row_count == 60 or tasks.row_count == 61
        await pilot.press("left_square_bracket")
        assert screen.position == replay.position_at(replay.time_at(screen.position) - 0) or True
        # Speed and play/pause.
        await pilot.press("plus", "plus")
        assert screen.speed == 4.0 and "4x" in header(app)
        await pilot.press("minus")
        assert screen.speed == 2.0
        before = screen.position
        await pilot.press("space")
        assert screen.playing and "playing" in header(app)
        await wait_for(pilot, lambda: screen.position > before)  # the clock runs: it moves on
        await pilot.press("space")
        assert not screen.playing
        stopped = screen.position
        await pilot.pause(0.3)
        assert screen.position == stopped
        await pilot.press("end")
        assert screen.position == len(replay)


def marked(app: ReplayApp) -> str | None:
    """The feed's line marked as the hit the point is on (``None``: none is)."""
    lines = [line for line in feed(app).splitlines() if line.startswith("▶ ")]
    assert len(lines) <= 1
    return lines[0].split("  ", 1)[1] if lines else None


def shown_line(replay: Replay, index: int) -> str:
    return shown(event_line(replay.events[index]))


async def test_search_filters_the_feed_and_moves_between_hits() -> None:
    replay = synthetic_replay()
    app = ReplayApp(replay)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("home")
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        for key in "task #12":
            await pilot.press(key if key != " " else "space")
        # "task #12" matches tasks 12 and 120-129: messages and task events, any sender.
        assert screen.hits and all(
            "task #12" in replay.events[i].text.lower()
            or "task number 12" in replay.events[i].text.lower()
            for i in screen.hits
        )
        assert "enter, then n/N" in feed(app)  # n is still a letter of the query
        await pilot.press("enter")  # to the first hit
        first = screen.hits[0]
        assert screen.position == first + 1
        assert "matching 'task #12'" in feed(app) and "n/N next/prev" in feed(app)
        total = len(screen.hits)
        assert f"(hit 1/{total})" in feed(app)  # issue 30, M9: which hit, of how many
        assert marked(app) == shown_line(replay, first)  # the hit n moved to, marked
        await pilot.press("n")
        assert screen.position == screen.hits[1] + 1
        assert f"(hit 2/{total})" in feed(app)
        assert marked(app) == shown_line(replay, screen.hits[1])  # the mark moved with n
        await pilot.press("N")
        assert screen.position == first + 1
        assert f"(hit 1/{total})" in feed(app)
        await pilot.press("N")  # from the first hit: round to the last
        assert f"(hit {total}/{total})" in feed(app)
        await pilot.press("right")  # off a hit: the count again
        assert f"({total} in the run)" in feed(app) and marked(app) is None
        await pilot.press("escape")
        assert screen.query_text == "" or not screen.has_class("-searching")


async def test_an_agents_transcript() -> None:
    app = ReplayApp(synthetic_replay())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("down")  # worker-1
        await pilot.press("enter")
        assert "worker-1's transcript" in feed(app) and "Working on task" in feed(app)
        await pilot.press("escape")
        assert "messages" in feed(app)


def test_replay_snapshot(snap_compare: Any) -> None:
    replay = synthetic_replay()

    async def scrub(pilot: Any) -> None:
        await pilot.press("home")
        for _ in range(40):
            await pilot.press("right")
        await pilot.pause()

    assert snap_compare(ReplayApp(replay), terminal_size=(120, 40), run_before=scrub)


def test_replay_command_on_a_damaged_history_is_one_line(tmp_path: Path, capsys: Any) -> None:
    from app.cli import main as cli

    home = tmp_path / "home"
    home.mkdir()
    (home / "history.db").write_bytes(b"garbage" * 10)
    assert cli.main(["--home", str(home), "replay", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("teamdeck: error: ") and err.count("\n") == 1 and "damaged" in err


def long_named_replay() -> Replay:
    """The synthetic run with a long team name and a teammate whose status has a long detail."""
    replay = synthetic_replay(30)
    run = replay.run
    run.team = "a-team-with-a-rather-long-name-for-the-header"
    detail = "waiting for a permission to run a very long shell command " * 2
    n = len(replay.events) + 1
    events = [
        *replay.events,
        Event(n, T0 + 30.5, "status", "worker-2", None, "idle", detail, 0, None),
    ]
    agents = [{"name": name, "color": "blue"} for name in ("team-lead", "worker-1", "worker-2")]
    return Replay(run, events, agents)


@pytest.mark.parametrize(
    "size", [(80, 24), (100, 30), (120, 40)], ids=["80x24", "100x30", "120x40"]
)
async def test_replay_lays_out_cleanly(size: tuple[int, int]) -> None:
    """No table scrolls sideways or runs into the other; the agents' cost, the tasks' owner and
    the run's cost stay; the footer keeps q Quit and drops whole keys (at 100 columns it
    ended "- Slowe"); a long status ends in "…"."""
    app = ReplayApp(long_named_replay())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        rows = screen_text(app).splitlines()
        head = rows[0]
        assert "$0.0" in head and "⏸ paused" in head and "run 7" in head
        assert "/ 31.0s" in head  # the run's length, as teamdeck history lists it
        columns = rows[1]
        assert "agent" in columns and "cost" in columns and "owner" in columns
        agents = app.screen.query_one("#replay-agents", DataTable)
        tasks = app.screen.query_one("#replay-tasks", DataTable)
        for table in (agents, tasks):
            assert table.virtual_size.width <= table.scrollable_content_region.width, table.id
        worker_2 = next(r for r in rows[2:8] if " idle" in r)  # its row in the agents table
        assert worker_2.lstrip().startswith("worker-2 "), rows  # the name whole (not "worke…")
        assert "…" in worker_2 and "$0.0" in worker_2  # the status shrank, the cost stayed
        assert rows[-1].lstrip().startswith("q Quit")
        footer = rows[-1].split("▏")[0].rstrip()
        keys = [b for b in ReplayScreen.BINDINGS if isinstance(b, Binding) and b.show]
        assert any(footer.endswith(f"{b.key_display or b.key} {b.description}") for b in keys), (
            footer
        )
        assert all(len(r) <= size[0] for r in rows)


def test_replay_snapshot_80x24(snap_compare: Any) -> None:
    assert snap_compare(ReplayApp(long_named_replay()), terminal_size=(80, 24))

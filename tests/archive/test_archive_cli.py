"""``teamdeck history`` (list, show, export, prune), ``--no-history`` and ``--budget`` parsing."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.archive import connect, start_run
from app.cli import main as cli
from app.core import Home
from app.runtime.events import MessageSent, StatusChanged, UsageChanged


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def home_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "teamdeck-home"
    monkeypatch.setenv("TEAMDECK_HOME", str(root))
    return root


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], home_dir: Path, project: Path, monkeypatch: Any) -> Any:
    monkeypatch.chdir(project)

    def invoke(*argv: str) -> Result:
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def one_line_error(result: Result, *fragments: str) -> None:
    assert result.code == 1, result
    assert result.err.startswith("teamdeck: error: ") and result.err.count("\n") == 1, result.err
    for fragment in fragments:
        assert fragment in result.err, result.err


def record_fake_run(home: Home, goal: str, *, started: float | None = None) -> int:
    recorder = start_run(home, None, source="headless", goal=goal)
    recorder.model = "claude-sonnet-5-5"
    recorder.set_team("fake")
    recorder.on_event(StatusChanged("team-lead", "running"))
    recorder.on_event(MessageSent("fake", "team-lead", "worker", "hi", "greeting", None, "t"))
    recorder.on_event(UsageChanged("team-lead", 1000, 100, 0, 0, 0, 1))
    recorder.close("finished", "done")
    run_id = recorder.run_id
    assert run_id is not None
    if started is not None:
        conn = connect(home.root / "history.db")
        conn.execute(
            "UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?",
            (started, started + 5, run_id),
        )
        conn.close()
    return run_id


def test_history_of_an_empty_home(run: Any) -> None:
    assert run("history").out == "no runs recorded yet\n"
    assert run("history", "--json").out.strip() == "[]"


def test_a_headless_run_is_listed_shown_and_exported(
    run: Any, home_dir: Path, tmp_path: Path
) -> None:
    result = run("run", "Summarize the files", "--headless")
    assert result.code == 0, result.err

    listing = run("history")
    assert listing.code == 0
    header, row = listing.out.splitlines()
    for column in ("RUN", "TEAM", "GOAL", "STARTED", "TIME", "OUTCOME", "AGENTS", "DONE", "COST"):
        assert column in header
    assert row.split()[0] == "1" and "finished" in row and "offline · $0" in row

    [data] = json.loads(run("history", "--json").out)
    assert data["goal"] == "Summarize the files" and data["outcome"] == "finished"
    assert data["agents"] == 4 and data["tasks_done"] == 3 and data["messages"] > 5
    assert data["tokens"] > 0 and data["cost_usd"] == 0 and data["source"] == "headless"

    shown = run("history", "show", "1")
    assert shown.code == 0
    assert "run 1 · headless" in shown.out and "agents:" in shown.out and "approvals:" in shown.out
    assert "timeline (" in shown.out and "plan approval requested" in shown.out
    assert "task #1" in shown.out and "-> completed" in shown.out
    details = json.loads(run("history", "show", "last", "--json").out)
    assert {e["kind"] for e in details["events"]} >= {"status", "message", "task", "usage"}
    assert [a["name"] for a in details["agents_detail"]][0] == "team-lead"

    target = tmp_path / "run.jsonl"
    exported = run("history", "export", "1", "-o", str(target))
    assert exported.code == 0 and "exported run 1" in exported.err
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert lines[0]["type"] == "run" and lines[0]["id"] == 1
    assert [line["type"] for line in lines[1:]] == ["event"] * (len(lines) - 1)
    assert len(lines) - 1 == len(details["events"])
    ids = [line["id"] for line in lines[1:]]
    assert len(set(ids)) == len(ids)
    times = [line["at"] for line in lines[1:]]
    assert times == sorted(times)  # in the order things happened
    assert run("history", "export", "1").out.splitlines()[0] == target.read_text().splitlines()[0]


def test_no_history_records_nothing(run: Any, home_dir: Path) -> None:
    assert run("run", "Summarize the files", "--headless", "--no-history").code == 0
    assert not (home_dir / "history.db").exists()
    assert run("history").out == "no runs recorded yet\n"


def test_unknown_runs_and_bad_arguments_are_one_line_errors(run: Any, home_dir: Path) -> None:
    record_fake_run(Home(home_dir), "a goal")
    one_line_error(run("history", "show", "99"), "run 99 is not in the history")
    one_line_error(run("history", "show", "abc"), "'abc' is not a run id")
    one_line_error(run("history", "export", "7"), "run 7")
    one_line_error(run("history", "prune", "--older-than", "soon"), "--older-than 'soon'")
    bad = run("run", "goal", "--headless", "--budget", "-3")
    assert bad.code == 2 and "budget must be more than $0" in bad.err
    bad = run("run", "goal", "--headless", "--budget", "lots")
    assert bad.code == 2 and "not an amount" in bad.err


def test_a_damaged_history_is_a_one_line_error_and_kept(run: Any, home_dir: Path) -> None:
    home_dir.mkdir(parents=True)
    path = home_dir / "history.db"
    path.write_bytes(b"garbage" * 100)
    one_line_error(run("history"), "damaged")
    one_line_error(run("history", "show", "1"), "damaged")
    assert path.read_bytes() == b"garbage" * 100


def test_prune_keeps_recent_and_running_runs(run: Any, home_dir: Path) -> None:
    home = Home(home_dir)
    now = time.time()
    old = record_fake_run(home, "old one", started=now - 40 * 86400)
    recent = record_fake_run(home, "recent one", started=now - 2 * 86400)
    running = start_run(home, None, source="headless", goal="still running")
    conn = connect(home_dir / "history.db")
    conn.execute("UPDATE runs SET started_at = ? WHERE id = ?", (now - 90 * 86400, running.run_id))
    conn.close()

    result = run("history", "prune", "--older-than", "30d")
    assert result.code == 0 and result.out == "pruned 1 run(s) older than 30d\n"
    ids = [r["id"] for r in json.loads(run("history", "--json").out)]
    assert old not in ids and recent in ids and running.run_id in ids
    conn = sqlite3.connect(home_dir / "history.db")
    assert conn.execute("SELECT count(*) FROM events WHERE run_id = ?", (old,)).fetchone() == (0,)
    conn.close()
    running.close("finished")


def test_claude_home_keeps_the_archive_in_teamdecks_home(
    run: Any, home_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "claude-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    record_fake_run(Home(home_dir), "mine")
    listing = json.loads(run("--claude", "history", "--json").out)
    assert [r["goal"] for r in listing] == ["mine"]
    assert not (claude / "history.db").exists()


def test_costs_are_shown_for_priced_models(run: Any, home_dir: Path) -> None:
    record_fake_run(Home(home_dir), "priced")
    [row] = json.loads(run("history", "--json").out)
    assert row["cost_usd"] == pytest.approx((1000 * 2 + 100 * 10) / 1e6)
    assert "$0.0030" in run("history").out


async def test_the_replay_length_is_the_one_history_lists(run: Any, home_dir: Path) -> None:
    """A run whose end comes after its last event: ``teamdeck history``'s TIME and the
    replay's length are the same ``run_length``."""
    from app.archive import query
    from app.archive.replay import Replay
    from app.dashboard.screens.replay import ReplayApp

    run_id = record_fake_run(Home(home_dir), "a goal", started=1_795_000_000.0)  # took 5 s
    conn = connect(home_dir / "history.db")
    conn.execute("UPDATE runs SET ended_at = started_at + 151 WHERE id = ?", (run_id,))
    conn.execute("UPDATE events SET at = ? WHERE run_id = ?", (1_795_000_000.0 + 150, run_id))
    conn.commit()
    conn.close()
    listing = run("history").out.splitlines()[1]
    assert " 2m31s " in listing, listing
    assert "took 2m31s" in run("history", "show", str(run_id)).out
    reader = query.open_reader(home_dir / "history.db")
    replay = Replay.load(reader, str(run_id))
    reader.close()
    app = ReplayApp(replay)
    async with app.run_test(size=(120, 40)):
        header = str(app.screen.query_one("#replay-header").render())
        assert "/ 2m31s" in header, header

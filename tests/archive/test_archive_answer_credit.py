"""An answer the person gave is sent as team-lead (the protocol's sender) and credited to them
in every view of the run: the replay's feed, ``history show`` and a teammate process's log."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.archive import connect, start_run
from app.archive.replay import Replay
from app.archive.timeline import event_line
from app.cli import main as cli
from app.core import Home
from app.core.protocol import plan_approval_response
from app.runtime.api import AgentSnapshot
from app.runtime.events import MessageSent, StatusChanged
from app.runtime.runners.event_log import LoggedAgent
from app.runtime.runners.event_log import event_line as log_line

APPROVED = plan_approval_response("plan-1", True).to_text()


def record(home: Home, *messages: MessageSent) -> int:
    recorder = start_run(home, None, source="dashboard", goal="write it")
    recorder.set_team("crew")
    recorder.on_event(StatusChanged("team-lead", "running"))
    for message in messages:
        recorder.on_event(message)
    recorder.close("finished", "done")
    assert recorder.run_id is not None
    return recorder.run_id


def test_the_replay_feed_and_history_show_credit_the_persons_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Home(tmp_path / "home")
    by_person = MessageSent(
        "crew", "team-lead", "writer", APPROVED, None, "plan_approval_response", "t1", "user"
    )
    by_lead = MessageSent(
        "crew", "team-lead", "editor", APPROVED, None, "plan_approval_response", "t2"
    )
    run_id = record(home, by_person, by_lead)
    conn: sqlite3.Connection = connect(home.root / "history.db")
    try:
        replay = Replay.load(conn, str(run_id))
        lines = [event_line(e) for e in replay.feed(len(replay))]
    finally:
        conn.close()
    assert lines == ["user -> writer: plan approved", "team-lead -> editor: plan approved"]
    assert cli.main(["--home", str(home.root), "history", "show", str(run_id)]) == 0
    shown = capsys.readouterr().out
    assert "user -> writer: plan approved" in shown
    assert "team-lead -> editor: plan approved" in shown


def test_a_teammate_process_log_keeps_who_answered() -> None:
    sent = MessageSent("crew", "team-lead", "writer", APPROVED, None, None, "t1", "user")
    line = log_line(sent)
    assert line is not None and line["answeredBy"] == "user"
    agent = LoggedAgent(AgentSnapshot("writer", "blue", "running"))
    (again,) = agent.apply(json.loads(json.dumps(line)))
    assert again == sent
    plain = log_line(MessageSent("crew", "writer", "team-lead", "hi", None, None, "t2"))
    assert plain is not None and "answeredBy" not in plain

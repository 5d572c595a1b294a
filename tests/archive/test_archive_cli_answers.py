"""Answers given with ``teamdeck approve`` are the person's: credited to "user" in the history
(``history show``) and in the feed, whether the teammates run in-process or as processes. The
answer frames keep Claude Code's shapes (sent by team-lead); the inbox message that carries
one names the person (``answeredBy``), and the running team closes the request it answers."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from app.archive import connect
from app.cli.main import main
from app.core import Home
from app.core.paths import LEAD_NAME
from app.dashboard.launch import build_dashboard
from app.dashboard.recording import finish_dashboard_recording
from tests.timing import scaled
from widgets.message_feed import MessageFeed

GUARD = 90.0
GOAL = "Summarize what the Python files in this folder do and count their lines"


def answers_on_disk(home: Home, team: str | None) -> dict[str, dict[str, Any]]:
    """The inbox messages naming who answered (by their text), while the team is there."""
    found: dict[str, dict[str, Any]] = {}
    inboxes = home.layout.team_dir(team) / "inboxes" if team else None
    for path in inboxes.glob("*.json") if inboxes is not None else ():
        with contextlib.suppress(OSError, ValueError):
            for message in json.loads(path.read_text()):
                if "answeredBy" in message:
                    found[message["text"]] = message
    return found


@pytest.mark.parametrize("backend", ["in-process", "process"])
async def test_answers_given_with_the_cli_are_credited_to_the_person(
    home: Home, project: Path, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    app = build_dashboard(home, goal=GOAL, cwd=project, teammate_backend=backend)
    answered: dict[str, int] = {}
    answers: dict[str, dict[str, Any]] = {}
    feed: set[str] = set()
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + scaled(GUARD)
        while not app.recorder.team_deleted:
            assert time.monotonic() < deadline, "the team never finished"
            for request in [a for a in app.approvals if a.kind != "shutdown"]:
                if request.request_id not in answered:  # from the CLI, not a key
                    argv = ["--home", str(home.root), "approve", request.request_id]
                    answered[request.request_id] = main(argv)
            feed.update(app.screen.query_one(MessageFeed).lines())
            answers.update(answers_on_disk(home, app.runtime.team if app.runtime else None))
            await pilot.pause(0.1)
        # The runtime tells the recorder at once that the team is deleted, while the feed draws
        # the team's last messages on the view's next beat (up to ~0.15 s later); at pace 0 a
        # quick machine gets from an answer to the deletion inside that time. The feed keeps
        # them once drawn (it is the record), so look until they are there (a hang guard).
        wanted = ("user -> writer: plan approved", "user -> researcher: permission allowed")
        guard = time.monotonic() + scaled(10.0)
        while not all(any(w in line for line in feed) for w in wanted):
            if time.monotonic() > guard:
                break
            await pilot.pause(0.1)
            feed.update(app.screen.query_one(MessageFeed).lines())
    finish_dashboard_recording(app)
    assert answered and set(answered.values()) == {0}, answered
    # On disk: the frame as Claude Code writes it, from team-lead; the person named beside it.
    assert len(answers) == len(answered), answers
    assert all(m["from"] == LEAD_NAME and m["answeredBy"] == "user" for m in answers.values())
    conn = connect(home.root / "history.db")
    decided = conn.execute("SELECT kind, decision, decided_by FROM approvals").fetchall()
    conn.close()
    mine = [(kind, decision, by) for kind, decision, by in decided if kind != "shutdown"]
    assert {kind for kind, _, _ in mine} == {"plan", "permission"}, decided
    assert all(by == "user" and decision in ("approved", "allowed") for _, decision, by in mine), (
        decided
    )
    capsys.readouterr()
    assert main(["--home", str(home.root), "history", "show", "last"]) == 0
    shown = capsys.readouterr().out
    rows = [line.split() for line in shown.split("approvals:")[1].split("\n\n")[0].splitlines()]
    rows = [row for row in rows if row]
    by = rows[0].index("BY")
    assert [row[by] for row in rows[1:] if row[0] in ("plan", "permission")] == ["user"] * 2
    assert any("user -> writer: plan approved" in line for line in feed), sorted(feed)
    assert any("user -> researcher: permission allowed" in line for line in feed), sorted(feed)

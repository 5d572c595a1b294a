"""In a Claude Code home (``teamdeck --claude``) the person's answers are credited to "user" in
teamdeck's history (``history show``) and in the feed, as in teamdeck's own homes, while
Claude Code's inbox files keep Claude Code's exact shapes: no ``answeredBy``, no other key.
teamdeck keeps its note of who answered in its own home (``app.core.answer_credits``).

Three hands: ``teamdeck approve``/``reject`` (through the inbox files), the dashboard's keys
(the same files), and ``teamdeck approve`` on a request Claude Code's hook holds (the bridge).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.archive import connect
from app.cli.main import main
from app.core import Home, InboxMessage, answer_credits
from app.core.paths import default_home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.dashboard.recording import finish_dashboard_recording
from app.runtime.by_files.requests import find_request
from app.runtime.by_files.steering import permission_response_text
from tests import claude_home as ch
from tests.ui.helpers import wait_for
from widgets.message_feed import MessageFeed

ROOT = Path(__file__).resolve().parents[2]
GUARD = 30.0
FILE_REQUESTS = {ch.PLAN_ID, ch.PERMISSION_ID}  # the ones in the inboxes
ANSWERED = "user allowed team-lead's Bash request"  # the bridge's feed line


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    built = ch.build(tmp_path / "claude")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(built))  # what ``--claude`` opens
    return built


def inbox(root: Path, agent: str) -> Path:
    return root / "teams" / ch.TEAM / "inboxes" / f"{agent}.json"


def decided() -> dict[str, tuple[str, str]]:
    """request id -> (decision, decided_by), from the history."""
    conn = connect(default_home() / "history.db")
    try:
        rows = conn.execute("SELECT request_id, decision, decided_by FROM approvals").fetchall()
    finally:
        conn.close()
    return {rid: (decision, by) for rid, decision, by in rows}


def feed(app: TeamDeckApp) -> list[str]:
    return app.screen.query_one(MessageFeed).lines()


def shown_by(capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str]]:
    """``teamdeck --claude history show last``: each approval's KIND and BY."""
    capsys.readouterr()
    assert main(["--claude", "history", "show", "last"]) == 0
    shown = capsys.readouterr().out
    rows = [line.split() for line in shown.split("approvals:")[1].split("\n\n")[0].splitlines()]
    rows = [row for row in rows if row]
    by = rows[0].index("BY")
    return [(row[0], row[by]) for row in rows[1:]]


def claude_code_shape(root: Path, agent: str, before: list[dict[str, Any]]) -> dict[str, Any]:
    """The inbox is ``before`` plus one answer from team-lead, byte for byte as Node writes it
    (``JSON.stringify(x, null, 2)``) with the keys of Claude Code's messages only."""
    after = json.loads(inbox(root, agent).read_text())
    assert after[:-1] == before
    ours = after[-1]
    keys = ["type", "from", "text", "timestamp", "read", "msgV", "msg_id"]
    assert list(ours) == keys, list(ours)  # no answeredBy, nothing else
    assert ours["from"] == "team-lead"
    assert inbox(root, agent).read_text() == ch.node_stringify([*before, ours])
    answer: dict[str, Any] = ours
    return answer


def ours_in(root: Path) -> list[Path]:
    """Files of teamdeck's in Claude Code's home (its note, a lock left behind)."""
    return [p for p in root.rglob("*") if "answer" in p.name or p.name.endswith(".lock")]


def start_hook(event: dict[str, Any]) -> subprocess.Popen[str]:
    """``teamdeck hook PermissionRequest`` as Claude Code runs it (the event on stdin)."""
    hook = subprocess.Popen(
        [sys.executable, "-P", "-m", "app.cli.hook", "PermissionRequest"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
    )
    assert hook.stdin is not None
    hook.stdin.write(json.dumps(event))
    hook.stdin.close()
    return hook


async def ready(pilot: Pilot[None]) -> TeamDeckApp:
    app = pilot.app
    assert isinstance(app, TeamDeckApp)
    await wait_for(pilot, lambda: app.loaded and len(app.approvals) == 2, GUARD)
    return app


async def test_cli_answers_in_a_claude_code_home_are_credited_to_the_person(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {a: json.loads(inbox(root, a).read_text()) for a in ("researcher", "writer")}
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert main(["--claude", "approve", ch.PLAN_ID]) == 0
        assert main(["--claude", "reject", ch.PERMISSION_ID, "--feedback", "not now"]) == 0
        wanted = ("user -> researcher: plan approved", "user -> writer: permission denied")
        await wait_for(
            pilot, lambda: all(any(w in line for line in feed(app)) for w in wanted), GUARD
        )

        def recorded() -> bool:
            app.recorder.flush()
            return all(by for _, by in decided().values()) and len(decided()) == 2

        await wait_for(pilot, recorded, GUARD)
        assert not any("team-lead -> researcher: plan" in line for line in feed(app))
    finish_dashboard_recording(app)
    assert decided() == {ch.PLAN_ID: ("approved", "user"), ch.PERMISSION_ID: ("denied", "user")}
    assert sorted(shown_by(capsys)) == [("permission", "user"), ("plan", "user")]
    claude_code_shape(root, "researcher", before["researcher"])
    answer = claude_code_shape(root, "writer", before["writer"])
    assert json.loads(answer["text"])["error"] == "not now"
    assert not ours_in(root)


async def test_an_answer_claude_codes_lead_writes_stays_the_leads(root: Path) -> None:
    """Only the answers teamdeck wrote are the person's: the lead's own answer (Claude Code
    writing the inbox) is credited to team-lead, though the person answered the other."""
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert main(["--claude", "approve", ch.PLAN_ID]) == 0
        lead = Home(root, lock_style="mkdir")  # Claude Code's lead, another writer
        request = find_request(lead, ch.PERMISSION_ID, ch.TEAM)
        text = permission_response_text(request.frame, request.approval, allow=True)
        lead.mailbox(ch.TEAM).append("writer", InboxMessage(sender="team-lead", text=text))
        wanted = ("user -> researcher: plan approved", "team-lead -> writer: permission allowed")
        await wait_for(
            pilot, lambda: all(any(w in line for line in feed(app)) for w in wanted), GUARD
        )

        def recorded() -> bool:
            app.recorder.flush()
            return len([by for _, by in decided().values() if by]) == 2

        await wait_for(pilot, recorded, GUARD)
    finish_dashboard_recording(app)
    assert decided() == {
        ch.PLAN_ID: ("approved", "user"),
        ch.PERMISSION_ID: ("allowed", "team-lead"),
    }


async def test_key_answers_in_a_claude_code_home_are_credited_to_the_person(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = json.loads(inbox(root, "researcher").read_text())
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("escape")  # out of the lead's input: keys act
        await pilot.press("1")  # researcher, whose plan waits
        await wait_for(pilot, lambda: app.selected == "researcher", GUARD)
        await pilot.press("a")
        await wait_for(
            pilot, lambda: any("user -> researcher: plan approved" in s for s in feed(app)), GUARD
        )

        def recorded() -> bool:
            app.recorder.flush()
            return decided().get(ch.PLAN_ID, ("", None))[1] is not None

        await wait_for(pilot, recorded, GUARD)
    finish_dashboard_recording(app)
    assert decided()[ch.PLAN_ID] == ("approved", "user")
    assert ("plan", "user") in shown_by(capsys)
    claude_code_shape(root, "researcher", before)


async def test_hook_answers_are_credited_to_the_person(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A permission Claude Code's hook holds (``teamdeck hook PermissionRequest``), answered
    with ``teamdeck approve`` through the listening dashboard's bridge."""
    event = {
        "session_id": ch.LEAD_SESSION,  # the lead of the team shown
        "cwd": ch.PROJECT,
        "permission_mode": "default",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "ls", "description": "List the files"},
    }
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        hook = start_hook(event)
        try:
            await wait_for(pilot, lambda: len(app.approvals) == 3, GUARD)
            (request,) = [a for a in app.approvals if a.request_id not in FILE_REQUESTS]
            assert main(["--claude", "approve", request.request_id]) == 0
            await wait_for(
                pilot, lambda: any(line.startswith(ANSWERED) for line in feed(app)), GUARD
            )

            def recorded() -> bool:
                app.recorder.flush()
                return decided().get(request.request_id, ("", None))[1] is not None

            await wait_for(pilot, recorded, GUARD)
        finally:
            assert hook.stdout is not None
            out = hook.stdout.read()
            hook.wait(timeout=GUARD)
        assert json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "allow"
    finish_dashboard_recording(app)
    assert decided()[request.request_id] == ("allowed", "user")
    assert ("permission", "user") in shown_by(capsys)


def test_a_damaged_note_file_is_left_as_it_is(tmp_path: Path) -> None:
    """The notes are only a credit: a damaged file costs the credit, never the file (a new
    note is not written over it), and readers see no notes."""
    path = answer_credits.ledger_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    answer_credits.note_answer(tmp_path, "crew", "writer", "plan-1", "t1")
    assert path.read_text() == "{not json"
    entry = {"from": "team-lead", "text": '{"requestId": "plan-1"}', "timestamp": "t1"}
    assert answer_credits.AnswerCredits(tmp_path, True).answered_by("crew", "writer", entry) is None
    path.unlink()
    answer_credits.note_answer(tmp_path, "crew", "writer", "plan-1", "t1")
    credits = answer_credits.AnswerCredits(tmp_path, True)
    assert credits.answered_by("crew", "writer", entry) == "user"


async def test_a_request_answered_in_claude_code_is_recorded_as_such(root: Path) -> None:
    """Claude Code went on without teamdeck (the call's PostToolUse arrived while the hook still
    waited): the request leaves the queue, the feed says "answered in Claude Code", and the
    history records it decided by Claude Code, not asked twice."""
    event = {
        "session_id": ch.LEAD_SESSION,
        "cwd": ch.PROJECT,
        "permission_mode": "default",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "ls", "description": "List the files"},
    }
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        hook = start_hook(event)
        try:
            await wait_for(pilot, lambda: len(app.approvals) == 3, GUARD)
            (request,) = [a for a in app.approvals if a.request_id not in FILE_REQUESTS]
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-P", "-m", "app.cli.hook", "PostToolUse"],
                input=json.dumps({**event, "hook_event_name": "PostToolUse"}),
                text=True,
                cwd=ROOT,
                capture_output=True,
                timeout=GUARD,
            )
            assert done.returncode == 0 and done.stdout == ""
            await wait_for(pilot, lambda: len(app.approvals) == 2, GUARD)
            line = f"team-lead's Bash request {request.request_id}: answered in Claude Code"
            await wait_for(pilot, lambda: any(line in shown for shown in feed(app)), GUARD)
        finally:
            assert hook.stdout is not None
            out = hook.stdout.read()
            hook.wait(timeout=GUARD)
        assert out == ""  # no decision: Claude Code's own answer stands
    finish_dashboard_recording(app)
    assert decided()[request.request_id] == ("answered in Claude Code", "claude-code")


async def test_a_restarted_dashboard_rebuilds_the_hooks_feed_once(root: Path) -> None:
    """What the hooks told the first dashboard (Claude Code consumed its inboxes since) is in
    the second one's feed, from the archive, once, and its statuses too (the lead still
    waiting at Claude Code's prompt); the same in a third."""
    event = {
        "session_id": ch.LEAD_SESSION,
        "cwd": ch.PROJECT,
        "hook_event_name": "SubagentStop",
        "agent_id": "aresearcher-0123456789abcdef",
        "last_assistant_message": "Survey of the CLI written down.",
    }
    line = "finished its turn: Survey of the CLI written down."
    first = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        told = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-P", "-m", "app.cli.hook", "SubagentStop"],
            input=json.dumps(event),
            text=True,
            cwd=ROOT,
            capture_output=True,
            timeout=GUARD,
        )
        assert told.returncode == 0
        asking = {
            "session_id": ch.LEAD_SESSION,
            "cwd": ch.PROJECT,
            "hook_event_name": "Notification",
            "notification_type": "worker_permission_prompt",
            "message": "team-lead needs permission for Bash",
        }
        told = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-P", "-m", "app.cli.hook", "Notification"],
            input=json.dumps(asking),
            text=True,
            cwd=ROOT,
            capture_output=True,
            timeout=GUARD,
        )
        assert told.returncode == 0
        await wait_for(pilot, lambda: any(line in shown for shown in feed(first)), GUARD)
        await wait_for(
            pilot, lambda: first.files.statuses.get("team-lead") == "awaiting approval", GUARD
        )
    finish_dashboard_recording(first)

    def times_shown(app: TeamDeckApp) -> int:
        return sum(line in shown for shown in feed(app))

    for _ in range(2):  # restarted, and restarted again
        again = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
        async with again.run_test(size=(120, 40)) as pilot:
            app = await ready(pilot)
            await wait_for(pilot, lambda: times_shown(app) > 0, GUARD)  # noqa: B023
            # still waiting at Claude Code's prompt, as the first dashboard last heard
            await wait_for(
                pilot,
                lambda: app.files.statuses.get("team-lead") == "awaiting approval",  # noqa: B023
                GUARD,
            )
            await pilot.pause(0.5)
            assert times_shown(app) == 1
        finish_dashboard_recording(again)

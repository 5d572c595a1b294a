"""Answering a Claude Code team's requests through its files (``FileSteering``, the CLI).

The home is built by Node in Claude Code's exact shapes (``tests/claude_home.py``); the answers
are checked byte for byte against Node's ``JSON.stringify`` of the expected inbox.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli
from app.core import Home
from app.runtime.by_files.requests import scan_team
from app.runtime.by_files.steering import FileSteering, permission_response_text
from tests import claude_home as ch


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return ch.build(tmp_path / "claude")


@pytest.fixture
def home(root: Path) -> Home:
    return Home(root, lock_style="mkdir")


def inbox(root: Path, agent: str) -> Path:
    return root / "teams" / ch.TEAM / "inboxes" / f"{agent}.json"


def entries(root: Path, agent: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(inbox(root, agent).read_text())
    return data


def pending_ids(home: Home) -> list[str]:
    return [r.approval.request_id for r in scan_team(home, ch.TEAM).pending]


def assert_appended(root: Path, agent: str, before: list[dict[str, Any]], frame: Any) -> None:
    """The inbox is exactly ``before`` + one newer-era message from team-lead carrying
    ``frame``, as Node would have written it."""
    after = entries(root, agent)
    assert after[:-1] == before
    ours = after[-1]
    assert json.loads(ours["text"]) == frame
    expected = {
        "type": "message",
        "from": "team-lead",
        "text": ours["text"],
        "timestamp": ours["timestamp"],
        "read": False,
        "msgV": 1,
        "msg_id": ours["msg_id"],
    }
    assert ours == expected and list(ours) == list(expected)
    assert inbox(root, agent).read_text() == ch.node_stringify([*before, expected])


def test_pending_requests_come_from_the_files(home: Home) -> None:
    found = scan_team(home, ch.TEAM)
    assert [(r.approval.kind, r.requester) for r in found.pending] == [
        ("plan", "researcher"),
        ("permission", "writer"),
    ]
    assert found.pending[1].approval.tool_input == ch.PERMISSION_INPUT


def test_approve_plan(root: Path, home: Home) -> None:
    before = entries(root, "researcher")
    plan = scan_team(home, ch.TEAM).pending[0].approval
    outcome = FileSteering(home, ch.TEAM).approve(plan)
    assert outcome.ok and outcome.message == "researcher's plan approved"
    text = json.loads(entries(root, "researcher")[-1]["text"])
    assert list(text) == ["type", "requestId", "approved", "timestamp", "permissionMode"]
    assert_appended(
        root,
        "researcher",
        before,
        {
            "type": "plan_approval_response",
            "requestId": ch.PLAN_ID,
            "approved": True,
            "timestamp": text["timestamp"],
            "permissionMode": "default",
        },
    )
    assert pending_ids(home) == [ch.PERMISSION_ID]


def test_reject_plan_with_feedback(root: Path, home: Home) -> None:
    before = entries(root, "researcher")
    plan = scan_team(home, ch.TEAM).pending[0].approval
    assert FileSteering(home, ch.TEAM).reject(plan, "Also cover `__main__.py`").ok
    text = json.loads(entries(root, "researcher")[-1]["text"])
    assert_appended(
        root,
        "researcher",
        before,
        {
            "type": "plan_approval_response",
            "requestId": ch.PLAN_ID,
            "approved": False,
            "feedback": "Also cover `__main__.py`",
            "timestamp": text["timestamp"],
        },
    )


@pytest.mark.parametrize("always", [False, True])
def test_allow_permission(root: Path, home: Home, always: bool) -> None:
    before = entries(root, "writer")
    request = scan_team(home, ch.TEAM).pending[1].approval
    outcome = FileSteering(home, ch.TEAM).allow(request, always=always)
    assert outcome.ok and outcome.message.endswith("always allowed" if always else "allowed")
    assert_appended(
        root,
        "writer",
        before,
        {
            "type": "permission_response",
            "request_id": ch.PERMISSION_ID,
            "subtype": "success",
            "response": {
                "updated_input": ch.PERMISSION_INPUT,
                "permission_updates": ch.SUGGESTIONS if always else [],
            },
        },
    )


def test_deny_permission(root: Path, home: Home) -> None:
    before = entries(root, "writer")
    request = scan_team(home, ch.TEAM).pending[1].approval
    assert FileSteering(home, ch.TEAM).deny(request, "not now").ok
    assert_appended(
        root,
        "writer",
        before,
        {
            "type": "permission_response",
            "request_id": ch.PERMISSION_ID,
            "subtype": "error",
            "error": "not now",
        },
    )


def test_always_without_suggestions_builds_the_allow_rule(home: Home) -> None:
    found = scan_team(home, ch.TEAM).pending[1]
    bare = found.frame.model_copy(update={"permission_suggestions": [], "input": None})
    approval = found.approval
    approval.suggestion = "Bash(npm test:*)"
    text = permission_response_text(bare, approval, allow=True, always=True)  # type: ignore[arg-type]
    assert json.loads(text)["response"] == {
        "updated_input": {},  # never null
        "permission_updates": [
            {
                "type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                "behavior": "allow",
                "destination": "localSettings",
            }
        ],
    }


def test_answered_elsewhere_cannot_be_answered_again(root: Path, home: Home) -> None:
    plan = scan_team(home, ch.TEAM).pending[0].approval
    steer = FileSteering(home, ch.TEAM)
    assert steer.approve(plan).ok
    second = steer.reject(plan, "too late")
    assert not second.ok and second.settled and "already answered" in second.message
    responses = [e for e in entries(root, "researcher") if "plan_approval_response" in e["text"]]
    assert len(responses) == 1


def test_two_deciders_at_once_answer_once(root: Path, home: Home) -> None:
    request = scan_team(home, ch.TEAM).pending[1].approval
    outcomes: list[bool] = []
    barrier = threading.Barrier(6)

    def decide(i: int) -> None:
        steer = FileSteering(Home(root, lock_style="mkdir"), ch.TEAM)
        barrier.wait()
        result = steer.allow(request) if i % 2 else steer.deny(request, "no")
        outcomes.append(result.ok)

    threads = [threading.Thread(target=decide, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == [False] * 5 + [True]
    answers = [e for e in entries(root, "writer") if "permission_response" in e["text"]]
    assert len(answers) == 1


def test_looking_and_answering_keep_modes_and_unknown_fields(root: Path, home: Home) -> None:
    before = ch.snapshot(root)
    scan_team(home, ch.TEAM)
    assert ch.snapshot(root) == before  # looking wrote nothing
    for request in scan_team(home, ch.TEAM).pending:
        assert FileSteering(home, ch.TEAM).approve(request.approval).ok
    after = ch.snapshot(root)
    assert set(after) == set(before)  # no new file, no lock left behind
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {
        f"teams/{ch.TEAM}/inboxes/researcher.json",
        f"teams/{ch.TEAM}/inboxes/writer.json",
    }
    assert all(after[k][0] == before[k][0] for k in before)  # modes unchanged
    assert json.loads((root / f"teams/{ch.TEAM}/config.json").read_text())["futureTeamField"]


def test_shutdown_send_kill(root: Path, home: Home) -> None:
    steer = FileSteering(home, ch.TEAM)
    first = steer.shutdown("researcher")
    assert first.ok and first.message == "shutdown requested from researcher"
    frame = json.loads(entries(root, "researcher")[-1]["text"])
    assert frame["type"] == "shutdown_request" and frame["from"] == "team-lead"
    assert frame["requestId"].startswith("shutdown-") and frame["requestId"].endswith("@researcher")
    again = steer.shutdown("researcher")
    assert not again.ok and "already asked" in again.message
    assert [s.agent for s in scan_team(home, ch.TEAM).pending_shutdowns()] == ["researcher"]

    sent = steer.send("writer", "Use British spelling")
    assert sent.ok
    last = entries(root, "writer")[-1]
    assert last["from"] == "user" and last["text"] == "Use British spelling"
    assert not steer.send("nobody", "hi").ok

    for outcome in (steer.kill("writer"), steer.interrupt("writer")):
        assert not outcome.ok and outcome.message.startswith("not possible from here")


# ----------------------------------------------------------------------------- CLI


@pytest.fixture
def run(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))

    def invoke(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


def test_cli_lists_and_answers(root: Path, run: Any) -> None:
    before = ch.snapshot(root)
    code, out, _ = run("--claude", "approvals")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "TEAM", "AGENT", "KIND", "AGE", "WHAT"]
    assert lines[1].startswith(ch.PLAN_ID + "  ") and "researcher" in lines[1]
    assert lines[2].startswith(ch.PERMISSION_ID + "  ") and "Run the tests" in lines[2]
    code, out, _ = run("--claude", "approvals", "--team", ch.TEAM, "--json")
    listed = json.loads(out)
    assert [r["requestId"] for r in listed] == [ch.PLAN_ID, ch.PERMISSION_ID]
    assert listed[1]["input"] == ch.PERMISSION_INPUT
    assert ch.snapshot(root) == before  # looking created nothing

    code, out, _ = run("--claude", "approve", ch.PLAN_ID)
    assert code == 0 and out.startswith("approved researcher's plan request")
    code, out, err = run("--claude", "approve", ch.PLAN_ID)
    assert code == 1 and err == f"teamdeck: error: request {ch.PLAN_ID} was already answered\n"
    code, out, _ = run("--claude", "reject", ch.PERMISSION_ID, "--feedback", "not now")
    assert code == 0 and out.startswith("denied writer's permission request")
    assert json.loads(entries(root, "writer")[-1]["text"])["error"] == "not now"
    code, out, _ = run("--claude", "approvals")
    assert out.strip() == "no pending requests"
    code, _, err = run("--claude", "reject", "nope-1@x")
    assert code == 1 and err.count("\n") == 1 and "no plan or permission request" in err


def test_cli_approve_always_on_a_plan_is_an_error(root: Path, run: Any) -> None:
    before = ch.snapshot(root)
    code, out, err = run("--claude", "approve", ch.PLAN_ID, "--always")
    assert (code, out) == (1, "")
    assert err == (
        f"teamdeck: error: --always is for permission requests; {ch.PLAN_ID} is a plan request"
        " (nothing sent)\n"
    )
    assert ch.snapshot(root) == before  # nothing written


def test_cli_approve_always_and_feedback(root: Path, run: Any) -> None:
    code, out, _ = run("--claude", "approve", ch.PERMISSION_ID, "--always")
    assert code == 0 and out.startswith("always allowed writer's permission request")
    response = json.loads(entries(root, "writer")[-1]["text"])["response"]
    assert response["permission_updates"] == ch.SUGGESTIONS
    code, _, _ = run("--claude", "approve", ch.PLAN_ID, "--feedback", "keep it short")
    assert code == 0
    *_, answer, note = entries(root, "researcher")
    assert json.loads(answer["text"])["approved"] is True
    assert note["from"] == "user" and note["text"] == "keep it short"


def test_seed_era_named_team_is_answered_byte_for_byte(tmp_path: Path) -> None:
    """A named team of the seed era: plain ``{from, text, timestamp, read}`` messages (no
    ``msgV``/``msg_id``/``type``): the answers come in the same plain shape, nothing else."""
    root = ch.build(tmp_path / "claude", ch.seed_era_files())
    home = Home(root, lock_style="mkdir")
    before = ch.snapshot(root)
    box = root / "teams" / ch.SEED_TEAM / "inboxes"
    researcher = json.loads((box / "researcher.json").read_text())
    writer = json.loads((box / "writer.json").read_text())
    steer = FileSteering(home, ch.SEED_TEAM)
    plan, permission = scan_team(home, ch.SEED_TEAM).pending
    assert steer.approve(plan.approval).ok
    assert steer.deny(permission.approval, "keep the README short").ok

    def plain(frame: dict[str, Any], at: str) -> dict[str, Any]:
        return {"from": "team-lead", "text": ch.compact(frame), "timestamp": at, "read": False}

    answer = json.loads((box / "researcher.json").read_text())[-1]
    frame = {
        "type": "plan_approval_response",
        "requestId": ch.SEED_PLAN_ID,
        "approved": True,
        "timestamp": json.loads(answer["text"])["timestamp"],
        "permissionMode": "default",
    }
    expected = ch.node_stringify([*researcher, plain(frame, answer["timestamp"])])
    assert (box / "researcher.json").read_text() == expected
    answer = json.loads((box / "writer.json").read_text())[-1]
    frame = {
        "type": "permission_response",
        "request_id": ch.SEED_PERMISSION_ID,
        "subtype": "error",
        "error": "keep the README short",
    }
    expected = ch.node_stringify([*writer, plain(frame, answer["timestamp"])])
    assert (box / "writer.json").read_text() == expected
    after = ch.snapshot(root)
    assert set(after) == set(before)  # nothing created, no lock left behind
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {
        f"teams/{ch.SEED_TEAM}/inboxes/researcher.json",
        f"teams/{ch.SEED_TEAM}/inboxes/writer.json",
    }
    assert all(after[k][0] == before[k][0] for k in before)  # no mode changed
    assert scan_team(home, ch.SEED_TEAM).pending == []

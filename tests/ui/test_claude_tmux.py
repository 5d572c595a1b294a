"""``teamdeck --claude`` in a real terminal (tmux) on a hand-built Claude Code home.

The home is written by Node in Claude Code's exact shapes (``tests/claude_home.py``: a
per-session team, newer-era inboxes, a teammate transcript). Looking must change nothing; then
the plan and the permission request are answered with keys (approve and allow once; reject
with feedback and deny with a reason), and the two inboxes must hold
exactly what Node's ``JSON.stringify`` would have written with the answers appended: the right
frames, the same envelope as the inbox's other messages, every unknown field kept, no file mode
changed, nothing else created. Skipped where tmux is not installed.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests import claude_home as ch
from tests.timing import scaled
from tests.ui.test_demo_tmux import Tmux, _teamdeck

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def inbox(root: Path, agent: str) -> Path:
    return root / "teams" / ch.TEAM / "inboxes" / f"{agent}.json"


def entries(root: Path, agent: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(inbox(root, agent).read_text())
    return data


def expected_inbox(before: list[dict[str, Any]], ours: dict[str, Any]) -> str:
    """``before`` plus our message in the inbox's newer-era envelope, as Node writes it."""
    message = {
        "type": "message",
        "from": "team-lead",
        "text": ours["text"],
        "timestamp": ours["timestamp"],
        "read": False,
        "msgV": 1,
        "msg_id": ours["msg_id"],
    }
    return ch.node_stringify([*before, message])


def wait_file(predicate: Any, what: str, within: float = 60.0) -> None:
    deadline = time.monotonic() + scaled(within)
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


#: What each run presses, and the frames the two inboxes must then end with (``timestamp``
#: is filled in from the file: it is the moment of the answer).
ANSWERS: dict[str, tuple[list[list[str]], dict[str, Any], dict[str, Any]]] = {
    "approve and allow once": (
        [["a"], ["a"]],
        {
            "type": "plan_approval_response",
            "requestId": ch.PLAN_ID,
            "approved": True,
            "timestamp": None,
            "permissionMode": "default",
        },
        {
            "type": "permission_response",
            "request_id": ch.PERMISSION_ID,
            "subtype": "success",
            "response": {"updated_input": ch.PERMISSION_INPUT, "permission_updates": []},
        },
    ),
    "reject with feedback and deny with a reason": (
        [["r", "cover the CLI too", "Enter"], ["r", "not in watch mode", "Enter"]],
        {
            "type": "plan_approval_response",
            "requestId": ch.PLAN_ID,
            "approved": False,
            "feedback": "cover the CLI too",
            "timestamp": None,
        },
        {
            "type": "permission_response",
            "request_id": ch.PERMISSION_ID,
            "subtype": "error",
            "error": "not in watch mode",
        },
    ),
}


@pytest.mark.parametrize("answers", list(ANSWERS))
def test_claude_team_answered_with_keys(tmp_path: Path, answers: str) -> None:
    (plan_keys, permission_keys), plan_expected, permission_expected = ANSWERS[answers]
    root = ch.build(tmp_path / "claude")
    before = ch.snapshot(root)
    researcher_before = entries(root, "researcher")
    writer_before = entries(root, "writer")
    tmux = Tmux(tmp_path, 120, 40)
    env = {"CLAUDE_CONFIG_DIR": str(root), "TERM": "xterm-256color", "HOME": str(tmp_path)}
    tmux.start(f"{_teamdeck()} --claude", env)
    try:
        tmux.wait_for(lambda s: "researcher" in s and "writer" in s, "the team's panels")
        tmux.wait_for(lambda s: "Run the tests" in s or "plan" in s.lower(), "the requests")
        time.sleep(0.5)
        assert ch.snapshot(root) == before, "looking changed the Claude Code home"

        tmux.keys("Escape")  # out of the lead's input (focused at start): keys act
        time.sleep(0.3)
        tmux.keys("1")  # select researcher
        time.sleep(0.3)
        press(tmux, plan_keys)  # answer its plan
        wait_file(
            lambda: "plan_approval_response" in inbox(root, "researcher").read_text(),
            "the plan answer",
        )
        time.sleep(0.5)  # past the key guard of the closed dialog
        tmux.keys("2")  # select writer
        time.sleep(0.3)
        press(tmux, permission_keys)  # answer its Bash command
        wait_file(
            lambda: "permission_response" in inbox(root, "writer").read_text(), "the permission"
        )
        words = ("allowed", "approved", "rejected", "denied")
        tmux.wait_for(lambda s: any(w in s for w in words), "the outcome on screen")
    finally:
        tmux.kill()

    plan_answer = entries(root, "researcher")[-1]
    assert inbox(root, "researcher").read_text() == expected_inbox(researcher_before, plan_answer)
    plan_expected = {**plan_expected, "timestamp": json.loads(plan_answer["text"])["timestamp"]}
    assert plan_answer["text"] == ch.compact(plan_expected)
    permission_answer = entries(root, "writer")[-1]
    assert inbox(root, "writer").read_text() == expected_inbox(writer_before, permission_answer)
    assert permission_answer["text"] == ch.compact(permission_expected)
    after = ch.snapshot(root)
    assert set(after) == set(before), "a file or folder was created (or a lock left behind)"
    assert {k for k in before if before[k] != after[k]} == {
        f"teams/{ch.TEAM}/inboxes/researcher.json",
        f"teams/{ch.TEAM}/inboxes/writer.json",
    }
    assert all(after[k][0] == before[k][0] for k in before), "a file mode changed"


def press(tmux: Tmux, keys: list[str]) -> None:
    """The first key acts; the rest (if any) are typed into the dialog it opens, once it is on
    the screen (as a person would: typed before it, "a" in "watch" would answer the request).
    A letter within 0.3 s of a dialog closing is ignored (the key guard): a person's next key
    after a dialog comes later than that, and so does this one's."""
    time.sleep(0.5)
    tmux.keys(keys[0])
    if len(keys) > 1:
        tmux.wait_for(lambda s: "Feedback for" in s or "why (optional)" in s, "the dialog")
        time.sleep(0.2)
    for key in keys[1:]:
        tmux.keys(key)

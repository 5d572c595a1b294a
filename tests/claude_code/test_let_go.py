"""A request answered in Claude Code's own prompt leaves teamdeck (the real Claude Code 2.1.332,
interactive, tmux).

The lead's own Bash call asks in both places at once: Claude Code's prompt in its terminal, and
teamdeck's Approvals box (its PermissionRequest hook). When the person answers in Claude Code,
the command runs and teamdeck lets the request go (its PostToolUse): it leaves Approvals, the
feed says "answered in Claude Code", and ``teamdeck approve`` afterwards is refused in one line
(before, it stayed listed and an answer was recorded that did nothing).
"""

from __future__ import annotations

from tests.claude_code.interactive import Session, teamdeck, wait_until
from tests.claude_code.server import Rule, call


def test_a_request_answered_in_claude_codes_prompt_leaves_teamdeck(session: Session) -> None:
    session.setup("in-process")
    target = session.home.project / "made-by-lead"
    command = {"command": f"touch {target}", "description": "Create the marker"}
    session.home.api.add(Rule(call("Bash", command), last="Please make the marker", tool="Bash"))
    session.start_dashboard()
    session.start_claude("Please make the marker file.")

    deck = session.terminals
    deck.wait_for("deck", lambda s: "by-lead)" in s, "the request in Approvals")
    request = session.first_pending("the request")
    assert request["agent"] == "team-lead" and request["input"] == command
    assert not target.exists()

    deck.wait_for("claude", lambda s: "Do you want to proceed?" in s, "Claude Code's own prompt")
    deck.keys("claude", "1")  # the person answers "1. Yes" in Claude Code
    wait_until(target.exists, "the command to run")

    wait_until(lambda: not session.held() and session.pending() == [], "the request to leave")
    deck.wait_for("deck", lambda s: "answered in Claude Code" in s, "the feed line")
    late = teamdeck(session.env, "approve", request["requestId"])
    assert late.returncode == 1
    said = late.stderr.strip().splitlines()
    assert len(said) == 1 and "answered in Claude Code" in said[0], late.stderr

"""A teammate's plan, decided from teamdeck (the real Claude Code 2.1.332, interactive, tmux).

2.1.332 routes no plan to a person: the lead approves a teammate's plan by itself within a
second, and no PermissionRequest hook fires for it. The one hook that sees the plan before it
is sent is the teammate's own PreToolUse on ``ExitPlanMode`` (a pane teammate runs its hooks
itself), and a deny there keeps the plan from the lead. So teamdeck holds it: the plan shows in
the Approvals box, ``r`` with feedback rejects it, and the teammate's model reads the feedback;
the lead never got the plan (its debug log has no plan approval). Approving leaves the plan to
the lead's own approval (``answers.pre_tool_use``).

The lead runs in plan mode (its pane teammate inherits it). Its ``Agent`` call then meets
Claude Code's "Auto mode can't check actions" prompt, which no hook sees: the test answers that
one in Claude Code's terminal, as the person would.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.claude_code.interactive import SPAWN, Session, Terminals, teamdeck, wait_until
from tests.claude_code.server import Rule, Turn, call, say, user_text

PLAN = "## Plan\n1. Read the README.\n2. Summarise it.\n"
FEEDBACK = "add tests first"


def teammate(body: dict[str, Any]) -> Turn:
    """The teammate in plan mode, one step per turn: load ExitPlanMode and call it (Claude Code
    answers with the plan file's place), write the plan there, call ExitPlanMode again; after
    a rejection, say it will do what was asked."""
    last = user_text(body)
    if FEEDBACK in last:
        return say("I will add tests first.")
    place = re.search(r"No plan file found at `?([^`\s]+\.md)", last)
    if place:
        return call("Write", {"file_path": place.group(1), "content": PLAN})
    if "WORKER TASK" in last:
        return call("ToolSearch", {"query": "select:ExitPlanMode"})
    return call("ExitPlanMode", {})  # after the tool was loaded, and after the Write


def is_teammate(body: dict[str, Any]) -> bool:
    said = user_text(body, last=False)
    return "WORKER TASK" in said and "Please spawn" not in said


def teammate_heard(session: Session, words: str) -> bool:
    return any(
        is_teammate(r.body) and words in user_text(r.body) for r in session.home.api.messages()
    )


def answer_yes(session: Session) -> None:
    """Choose "Yes" in Claude Code's prompt (the default is "No") as a person would: again if
    a key went in while the prompt was still being drawn and it is still asking."""

    def answered() -> bool:
        screen = session.terminals.screen("claude")
        if "Do you want to proceed?" not in screen:
            return True
        session.terminals.keys("claude", "Enter" if "❯ Yes" in screen else "Down")
        time.sleep(0.5)
        return False

    wait_until(answered, "Claude Code's prompt answered Yes")


def a_pane_teammates_plan(session: Session) -> tuple[Terminals, dict[str, Any]]:
    """A tmux teammate spawned in plan mode whose plan waits in Approvals: the dashboard's
    terminals and the request as the CLI lists it."""
    session.setup("tmux")
    api = session.home.api
    api.add(Rule(call("Agent", SPAWN), last="Please spawn a worker", tool="Agent"))
    api.add(Rule(teammate, when=is_teammate, tool="Write", times=None))
    session.start_dashboard()
    session.start_claude("Please spawn a worker.", mode="plan")
    deck = session.terminals
    deck.wait_for("claude", lambda s: "Do you want to proceed?" in s, "Claude Code's Agent prompt")
    answer_yes(session)

    # The Approvals box first (a look at the screen is cheap; each look at the pending
    # requests runs a teamdeck process), then the request as the CLI lists it.
    deck.wait_for("deck", lambda s: "plan worker" in s, "the plan in Approvals")
    request = session.first_pending("the plan request")
    assert (request["agent"], request["kind"]) == ("worker", "plan")
    return deck, request


def test_a_teammates_plan_is_rejected_with_a_key(session: Session) -> None:
    deck, request = a_pane_teammates_plan(session)
    assert request["planContent"] == PLAN  # Claude Code filled it in from the plan file
    deck.keys("deck", "r")
    deck.wait_for("deck", lambda s: "feedback" in s.lower(), "the feedback dialog")
    deck.keys("deck", FEEDBACK, "Enter")

    wait_until(lambda: teammate_heard(session, FEEDBACK), "the teammate reading the feedback")
    assert teammate_heard(session, "the person rejected this plan: " + FEEDBACK)
    assert session.pending() == []
    log = session.home.debug_log.read_text(errors="replace")
    assert "Auto-approved plan" not in log  # the lead never got it


def test_an_in_process_teammates_plan_reaches_the_person(session: Session) -> None:
    """An in-process teammate's plan: its PreToolUse runs in the lead's process (``agent_id``
    on stdin) and teamdeck holds it there, as a pane teammate's; before, the lead approved it
    by itself in about 0.3 s and the person never saw it."""
    session.setup("in-process")
    api = session.home.api
    api.add(Rule(call("Agent", SPAWN), last="Please spawn a worker", tool="Agent"))
    api.add(Rule(teammate, when=is_teammate, tool="Write", times=None))
    session.start_dashboard()
    session.start_claude("Please spawn a worker.", mode="plan")
    deck = session.terminals
    deck.wait_for("claude", lambda s: "Do you want to proceed?" in s, "Claude Code's Agent prompt")
    answer_yes(session)

    deck.wait_for("deck", lambda s: "plan worker" in s, "the plan in Approvals")
    request = session.first_pending("the plan request")
    assert (request["agent"], request["kind"]) == ("worker", "plan")
    assert request["planContent"] == PLAN
    deck.keys("deck", "r")
    deck.wait_for("deck", lambda s: "feedback" in s.lower(), "the feedback dialog")
    deck.keys("deck", FEEDBACK, "Enter")

    wait_until(lambda: teammate_heard(session, FEEDBACK), "the teammate reading the feedback")
    assert teammate_heard(session, "the person rejected this plan: " + FEEDBACK)
    assert session.pending() == []
    log = session.home.debug_log.read_text(errors="replace")
    assert "Auto-approved plan" not in log  # the lead never approved it by itself


def test_approving_a_pane_teammates_plan_says_the_lead_decides(session: Session) -> None:
    """2.1.332 gives the person no door to approve a teammate's plan: the plan's request id is
    made after the teammate's hook answered, and the lead's inbox poller approves it at once
    (its debug log: "Auto-approved plan"). So ``a`` says so at the moment, in the dialog and the
    feed, and the evidence is the lead's own approval."""
    deck, request = a_pane_teammates_plan(session)
    deck.keys("deck", "a")
    words = "the lead approves worker's plan by itself"
    deck.wait_for("deck", lambda s: words in s, "the feed line")
    wait_until(
        lambda: "Auto-approved plan" in session.home.debug_log.read_text(errors="replace"),
        "the lead approving it by itself",
    )
    # (the scripted teammate then plans again: only this request must be gone)
    assert request["requestId"] not in [r["requestId"] for r in session.pending()]
    shown = teamdeck(session.env, "--claude", "history", "show", "last", "--json")
    answered = [
        e["text"] for e in json.loads(shown.stdout)["events"] if e.get("frame") == "Answered"
    ]
    assert any(
        line.endswith(f"{words}: Claude Code 2.1.332 gives no other door") for line in answered
    ), answered

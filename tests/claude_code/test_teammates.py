"""Teammates of the real Claude Code steered from teamdeck: interactive sessions in tmux
(``interactive``), a team formed by the scripted lead's ``Agent`` call, the teammate's first
act a Bash call that waits for the person.

- in-process (``teammateMode: in-process``): the lead runs the teammate's PermissionRequest
  hook; the request shows in the dashboard's Approvals box and ``a`` answers it;
- in a tmux pane (``teammateMode: tmux``): 2.1.332 runs no PermissionRequest hook for it, its
  own PreToolUse hook holds the call; ``teamdeck approve ID`` from another process answers.

Each time: the command ran only after the answer, nobody answered Claude Code's own prompt
(its terminal never asked), the panels follow the hook events (awaiting approval, then idle;
gone once the lead's process is), and ``setup --remove`` gives settings.json back.
"""

from __future__ import annotations

import json
import re

from tests.claude_code.interactive import Session, teamdeck, wait_until
from tests.claude_code.server import Rule, call, user_text

#: The worker's row in Approvals: who asks, then (the roster's narrow column) what it runs.
ROW = re.compile(r"perm worker\b[^\n]*\n[^\n]*?(?:Bash\(|\$ )touch \S*worker")
#: What Claude Code's own permission prompt says in its terminal.
OWN_PROMPT = re.compile(r"Do you want to|Yes, and don't ask again|needs your permission")


def panel_status(screen: str, agent: str) -> str:
    """The status word on ``agent``'s row of the Team panel (a narrow row's "awaiting" read
    as "awaiting approval")."""
    match = re.search(
        rf"\d {re.escape(agent)}\b[^│┃]*?(running|idle|awaiting(?: approval)?|gone|completed)",
        screen,
    )
    if match is None:
        return ""
    return "awaiting approval" if match.group(1) == "awaiting" else match.group(1)


def test_an_in_process_teammates_request_is_answered_with_a_key(session: Session) -> None:
    session.setup("in-process")
    target = session.home.project / "made-by-worker"
    session.script_worker({"command": f"touch {target}", "description": "Worker makes the marker"})
    session.start_dashboard()
    session.start_claude("Please spawn a worker.")

    deck = session.terminals
    screen = deck.wait_for(  # named by its command (start and end), not its description
        "deck", lambda s: ROW.search(s) is not None, "the request in Approvals"
    )
    (request,) = session.pending()
    assert request["agent"] == "worker" and request["source"] == "hook PermissionRequest"
    assert not target.exists()  # it waits for the person
    deck.wait_for(
        "deck", lambda s: panel_status(s, "worker") == "awaiting approval", "awaiting approval"
    )

    deck.keys("deck", "a")
    wait_until(target.exists, "the approved command to run")
    screen = deck.wait_for("deck", lambda s: panel_status(s, "worker") == "idle", "worker idle")
    assert "nothing to approve" in screen
    assert session.pending() == []
    assert not OWN_PROMPT.search(deck.screen("claude")), "Claude Code asked by itself"

    deck.wait_for(
        "deck", lambda s: "worker is idle" in s or "worker finished its turn" in s, "the feed"
    )
    # its transcript: subagents/agent-aworker-<hex>.jsonl, named by the sibling .meta.json
    deck.keys("deck", "1")
    deck.wait_for("deck", lambda s: "▶1 worker" in s, "worker selected")
    deck.keys("deck", "Enter")
    view = deck.wait_for("deck", lambda s: "WORKER TASK" in s and "Bash" in s, "its transcript")
    assert "no transcript found" not in view
    deck.keys("deck", "Escape")
    deck.tmux("kill-window", "-t", "t:claude")  # the lead's process ends: its team is gone
    deck.wait_for("deck", lambda s: panel_status(s, "worker") == "gone", "worker gone")

    # the home is intact: nothing forged into its inboxes, its settings given back
    for inbox in session.home.root.glob("teams/*/inboxes/*.json"):
        assert "permission_response" not in inbox.read_text(), inbox
    removed = teamdeck(session.env, "claude", "setup", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert session.home.settings() == {"teammateMode": "in-process"}  # what the test added


def test_a_pane_teammates_request_is_answered_from_the_cli(session: Session) -> None:
    session.setup("tmux")
    target = session.home.project / "made-by-worker"
    session.script_worker({"command": f"touch {target}", "description": "Worker makes the marker"})
    session.start_dashboard()
    session.start_claude("Please spawn a worker.")

    deck = session.terminals
    # The panel first (a look at the screen is cheap; each look at the pending requests runs
    # a teamdeck process), then the request as the CLI lists it.
    deck.wait_for("deck", lambda s: panel_status(s, "worker") == "awaiting approval", "awaiting")
    request = session.first_pending("the request")
    assert request["agent"] == "worker" and request["source"] == "hook PreToolUse"
    assert request["input"]["command"] == f"touch {target}"
    config = session.team_config()
    assert config is not None
    (worker,) = [m for m in config["members"] if m["name"] == "worker"]
    assert worker["backendType"] == "tmux"  # a pane of Claude Code's own tmux server
    assert not target.exists()

    approved = teamdeck(session.env, "approve", request["requestId"])
    assert approved.returncode == 0, approved.stderr
    assert f"allowed worker's Bash request {request['requestId']}" in approved.stdout
    wait_until(target.exists, "the approved command to run")
    deck.wait_for("deck", lambda s: panel_status(s, "worker") == "idle", "worker idle")
    assert not OWN_PROMPT.search(deck.screen("claude")), "Claude Code asked by itself"

    session.stop_swarm()  # the teammate's pane (its own claude process) ends
    deck.wait_for("deck", lambda s: panel_status(s, "worker") == "gone", "worker gone")

    # the archive kept what Claude Code's consumed inboxes no longer hold
    shown = teamdeck(session.env, "--claude", "history", "show", "last", "--json")
    assert shown.returncode == 0, shown.stderr
    run = json.loads(shown.stdout)
    hooks = {(e["agent"], e["frame"]) for e in run["events"] if e["kind"] == "claude-hook"}
    assert {("worker", "PreToolUse"), ("worker", "Answered"), ("worker", "TeammateIdle")} <= hooks
    statuses = [(e["agent"], e["frame"]) for e in run["events"] if e["kind"] == "status"]
    assert ("worker", "running") in statuses and ("worker", "idle") in statuses
    (approval,) = run["approvals"]
    assert approval["request_id"] == request["requestId"] and approval["agent"] == "worker"
    assert approval["decision"] == "allowed" and approval["answered_at"] >= approval["asked_at"]
    assert approval["decided_by"] == "user"  # the person answered (through the bridge)


def test_always_allow_for_a_pane_teammate_keeps_its_word(session: Session) -> None:
    """A pane teammate's hook cannot add a rule to Claude Code's settings: ``approve --always``
    keeps the rule in teamdeck, which answers the teammate's next call it covers by itself
    (before, the next call was held again although "always" was promised)."""
    session.setup("tmux")
    first = session.home.project / "made-first"
    second = session.home.project / "made-second"
    session.script_worker({"command": f"touch {first}", "description": "First marker"})
    session.home.api.add(
        Rule(
            call("Bash", {"command": f"touch {second}", "description": "Second marker"}),
            when=lambda body: (
                "WORKER TASK" in user_text(body, last=False)
                and "Please spawn" not in user_text(body, last=False)
            ),
            tool="Bash",
        )
    )
    session.start_dashboard()
    session.start_claude("Please spawn a worker.")

    request = session.first_pending("the first request")
    assert request["agent"] == "worker" and request["input"]["command"] == f"touch {first}"
    approved = teamdeck(session.env, "approve", "--always", request["requestId"])
    assert approved.returncode == 0, approved.stderr
    assert "rule Bash(touch:*) kept by teamdeck" in approved.stdout
    wait_until(first.exists, "the approved command to run")
    wait_until(second.exists, "the second call, answered by teamdeck's rule")
    assert session.pending() == []
    rules = teamdeck(session.env, "claude", "rules")
    assert rules.stdout.startswith("Bash(touch:*)  (added "), rules.stdout
    assert "touch" not in json.dumps(session.home.settings())  # Claude Code got no rule

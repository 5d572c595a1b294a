"""What the hook events say of each agent (``app.runtime.bridge.facts``) and how the dashboard's
link lays it over the files' statuses (``BridgeLink.overlay``). The stdin shapes are the ones
2.1.332 gave (``docs/claude-code-2.1.332.md``); the binary tests in ``tests/claude_code``
observe the same statuses on the real thing."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from app.core.models import TeamConfig
from app.dashboard.claude_bridge import BridgeLink
from app.display.values import TeamFiles
from app.runtime.bridge.facts import HookFacts, feed_text, status_of
from app.runtime.bridge.hold import Sender
from app.runtime.bridge.server import HookEvent
from app.runtime.by_files.liveness import proc_start

TEAM = "session-510c9ba6"
LEAD = Sender("team-lead", TEAM, "510c9ba6-9f22")
WORKER = Sender("worker", TEAM, "510c9ba6-9f22", in_process=True)


def event(name: str, who: Sender = WORKER, at: float = 1.0, **data: Any) -> HookEvent:
    return HookEvent(name, {"hook_event_name": name, **data}, who, at=at)


def test_each_event_says_a_status() -> None:
    assert status_of(event("SubagentStart")) == ("worker", "running")
    assert status_of(event("PreToolUse", tool_name="Bash")) == ("worker", "running")
    assert status_of(event("TeammateIdle")) == ("worker", "idle")
    assert status_of(event("SubagentStop")) == ("worker", "idle")
    assert status_of(event("Stop", LEAD)) == ("team-lead", "idle")
    assert status_of(event("SessionEnd", LEAD, reason="other")) == ("team-lead", "completed")
    asking = event(
        "Notification",
        LEAD,
        message="worker needs permission for Bash",
        notification_type="worker_permission_prompt",
    )
    assert status_of(asking) == ("worker", "awaiting approval")
    assert status_of(event("Notification", LEAD, notification_type="idle_prompt")) is None


def test_the_feed_says_what_happened() -> None:
    spawned = event(
        "PostToolUse",
        LEAD,
        tool_name="Agent",
        tool_response={"status": "teammate_spawned", "name": "worker", "tmux_pane_id": "%0"},
    )
    assert feed_text(spawned) == "spawned worker (in a tmux pane)"
    assert feed_text(event("SubagentStop", last_assistant_message="Done.")) == (
        "finished its turn: Done."
    )
    assert feed_text(event("PreToolUse", tool_name="Read")) is None  # status only


def test_facts_keep_the_latest_status_per_agent() -> None:
    facts = HookFacts()
    assert facts.note(event("SubagentStart", at=1.0))
    assert not facts.note(event("PreToolUse", at=2.0))  # still running: no change
    assert facts.note(event("TeammateIdle", at=3.0))
    (fact,) = facts.of(TEAM).values()
    assert (fact.status, fact.since) == ("idle", 3.0)
    assert facts.of("session-other") == {}


def config(lead_process: dict[str, Any] | None) -> TeamConfig:
    data: dict[str, Any] = {
        "name": TEAM,
        "leadAgentId": f"team-lead@{TEAM}",
        "members": [
            {"agentId": f"team-lead@{TEAM}", "name": "team-lead"},
            {"agentId": f"worker@{TEAM}", "name": "worker"},
            {"agentId": f"pane@{TEAM}", "name": "pane"},
        ],
    }
    if lead_process is not None:
        data["leadProcess"] = lead_process
    return TeamConfig.model_validate(data)


def test_the_overlay_follows_the_hooks_and_the_processes() -> None:
    link = BridgeLink()
    me = {"pid": os.getpid(), "procStart": proc_start(os.getpid())}
    files = TeamFiles(team=TEAM, config=config(me), statuses={"worker": "running"})
    dead = subprocess.Popen(["true"])
    dead.wait()
    pane = Sender("pane", TEAM, "0c9", pane=True, pid=dead.pid)
    live_pane = Sender("pane", TEAM, "0c9", pane=True, pid=os.getpid())

    link.facts.note(event("TeammateIdle", at=5.0))
    link.facts.note(event("SessionStart", live_pane, at=6.0))
    shown = link.overlay(files, fresh=True)
    assert dict(shown.statuses) == {"worker": "idle", "pane": "running"}
    assert shown.status_since["worker"] == 5.0

    link.facts.note(event("PreToolUse", pane, at=7.0, tool_name="Bash"))  # now its pid is gone
    assert dict(link.overlay(files).statuses)["pane"] == "gone"

    files = TeamFiles(team=TEAM, config=config({**me, "procStart": "1"}))  # the lead is gone
    assert set(link.overlay(files, fresh=True).statuses.values()) == {"gone"}


def test_an_agent_whose_session_ended_shows_completed_not_gone() -> None:
    """``SessionEnd`` by the person's word (``/exit``: ``prompt_input_exit``) is "completed",
    also once the process is gone (before, the process check turned every ended session into
    "gone"); a killed process's SessionEnd ("other") is gone."""
    link = BridgeLink()
    dead = subprocess.Popen(["true"])
    dead.wait()
    pane = Sender("pane", TEAM, "0c9", pane=True, pid=dead.pid)
    link.facts.note(event("SessionEnd", pane, at=8.0, reason="prompt_input_exit"))
    link.facts.note(event("SessionEnd", LEAD, at=9.0, reason="prompt_input_exit"))
    link.facts.note(event("TeammateIdle", at=7.0))
    me = {"pid": os.getpid(), "procStart": proc_start(os.getpid())}
    files = TeamFiles(team=TEAM, config=config(me))
    assert dict(link.overlay(files, fresh=True).statuses)["pane"] == "completed"
    files = TeamFiles(team=TEAM, config=config({**me, "procStart": "1"}))  # the lead is gone
    assert dict(link.overlay(files, fresh=True).statuses) == {
        "team-lead": "completed",
        "worker": "gone",
        "pane": "completed",
    }
    link.facts.note(event("SessionEnd", pane, at=10.0, reason="other"))  # its pane was killed
    assert dict(link.overlay(files, fresh=True).statuses)["pane"] == "gone"


def test_a_request_says_awaiting_until_answered_here_and_after_it_went_to_claude_codes_prompt() -> (
    None
):
    """Read back by a restarted dashboard too: a teammate whose request the earlier dashboard
    held when it ended waits at Claude Code's prompt (before, it was shown running)."""
    assert status_of(event("PermissionRequest", tool_name="Bash")) == (
        "worker",
        "awaiting approval",
    )
    assert status_of(event("Answered", decision="allowed")) == ("worker", "running")
    gave_up = "Claude Code stopped waiting (it asks in its own prompt)"
    assert status_of(event("AnsweredElsewhere", why=gave_up)) == ("worker", "awaiting approval")
    assert status_of(event("AnsweredElsewhere", why="answered in Claude Code")) is None

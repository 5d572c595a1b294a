"""The hook client and the bridge's socket: a request waits for the person's answer and the
client prints exactly what Claude Code accepts; with nobody listening the client prints nothing
and exits 0; a client that gives up withdraws its request; lifecycle events are only told."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.runtime.bridge import client, wire
from app.runtime.bridge.hold import Sender, hold
from app.runtime.bridge.server import Bridge, BridgeBusyError, BridgeServer, HookEvent

ROOT = Path(__file__).resolve().parents[2]
BASH = {
    "session_id": "510c9ba6-9f22-4afd-886a-7a7254565251",
    "cwd": "/tmp/project",
    "permission_mode": "default",
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "touch /tmp/project/marker", "description": "Make the marker"},
    "permission_suggestions": [{"type": "setMode", "mode": "acceptEdits"}],
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "teamdeck-home"
    monkeypatch.setenv("TEAMDECK_HOME", str(root))
    return root


@pytest.fixture
def served(home: Path) -> Iterator[tuple[Bridge, BridgeServer, list[HookEvent]]]:
    events: list[HookEvent] = []
    changed = threading.Event()
    bridge = Bridge(on_change=changed.set, on_event=events.append)
    server = BridgeServer(bridge, wire.socket_path(home))
    server.start()
    try:
        yield bridge, server, events
    finally:
        server.stop()


def hook(event: str, data: dict[str, Any], home: Path) -> subprocess.Popen[str]:
    """``teamdeck hook EVENT`` as Claude Code runs it (a process, the event on stdin)."""
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "app.cli.hook", event],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TEAMDECK_HOME": str(home)},
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(data))
    process.stdin.close()
    return process


def wait_for_request(bridge: Bridge) -> str:
    for _ in range(500):
        pending = bridge.pending()
        if pending:
            return pending[0].request_id
        threading.Event().wait(0.02)
    raise AssertionError("the hook's request never reached the bridge")


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    process.wait(timeout=60)
    assert not err, err
    return process.returncode, out


def test_no_listener_no_output_exit_zero(home: Path) -> None:
    code, out = finish(hook("PermissionRequest", BASH, home))
    assert (code, out) == (0, "")
    # A socket left by a teamdeck that is gone: the same.
    folder = wire.socket_path(home).parent
    folder.mkdir(parents=True)
    import socket

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    wire.bind(stale, wire.socket_path(home))
    stale.close()
    code, out = finish(hook("PermissionRequest", BASH, home))
    assert (code, out) == (0, "")


def test_allow_prints_the_decision_with_the_input(
    served: tuple[Bridge, BridgeServer, list[HookEvent]], home: Path
) -> None:
    bridge, _, events = served
    process = hook("PermissionRequest", BASH, home)
    request_id = wait_for_request(bridge)
    (listed,) = client.pending_requests() or []
    assert listed["requestId"] == request_id
    assert listed["agent"] == "team-lead" and listed["team"] == "session-510c9ba6"
    assert listed["toolName"] == "Bash" and listed["input"] == BASH["tool_input"]

    assert client.answer(request_id, allow=True) == (
        True,
        f"allowed team-lead's Bash request {request_id}",
    )

    code, out = finish(process)
    assert code == 0
    assert json.loads(out) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": BASH["tool_input"]},
        }
    }
    assert client.pending_requests() == []
    assert [e.event for e in events] == ["PermissionRequest", "Answered"]  # teamdeck's own


def test_always_adds_a_rule_and_deny_carries_the_message(
    served: tuple[Bridge, BridgeServer, list[HookEvent]], home: Path
) -> None:
    bridge, _, _ = served
    process = hook("PermissionRequest", BASH, home)
    ok, text = client.answer(wait_for_request(bridge), allow=True, always=True)
    assert ok and "rule Bash(touch:*)" in text
    decision = json.loads(finish(process)[1])["hookSpecificOutput"]["decision"]
    assert decision["updatedPermissions"] == [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
            "behavior": "allow",
            "destination": "userSettings",
        }
    ]

    process = hook("PermissionRequest", BASH, home)
    assert client.answer(wait_for_request(bridge), allow=False, feedback="Not now")[0]
    assert json.loads(finish(process)[1]) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "Not now"},
        }
    }


def test_a_second_answer_is_refused(
    served: tuple[Bridge, BridgeServer, list[HookEvent]], home: Path
) -> None:
    bridge, _, _ = served
    process = hook("PermissionRequest", BASH, home)
    request_id = wait_for_request(bridge)
    assert client.answer(request_id, allow=False)[0]
    ok, text = client.answer(request_id, allow=True)
    assert not ok and "not pending" in text
    assert json.loads(finish(process)[1])["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def test_a_hook_that_gives_up_withdraws_its_request(
    served: tuple[Bridge, BridgeServer, list[HookEvent]], home: Path
) -> None:
    bridge, _, _ = served
    process = hook("PermissionRequest", BASH, home)
    wait_for_request(bridge)
    process.kill()  # Claude Code's timeout
    process.wait(timeout=60)
    for _ in range(500):
        if not bridge.pending():
            break
        threading.Event().wait(0.02)
    assert bridge.pending() == []


def test_stopping_the_server_releases_waiting_hooks_with_no_decision(
    served: tuple[Bridge, BridgeServer, list[HookEvent]], home: Path
) -> None:
    bridge, server, _ = served
    process = hook("PermissionRequest", BASH, home)
    wait_for_request(bridge)
    server.stop()
    assert finish(process) == (0, "")
    assert not wire.socket_path(home).exists()


def test_lifecycle_events_are_told_and_never_held(
    served: tuple[Bridge, BridgeServer, list[HookEvent]], home: Path
) -> None:
    bridge, _, events = served
    idle = {
        "session_id": BASH["session_id"],
        "hook_event_name": "TeammateIdle",
        "agent_id": "aworker-5699d3908f789f09",
        "agent_type": "worker",
        "teammate_name": "worker",
        "team_name": "session-510c9ba6",
    }
    assert finish(hook("TeammateIdle", idle, home)) == (0, "")
    # The lead's own PreToolUse is never held (its PermissionRequest decides).
    pre = {**BASH, "hook_event_name": "PreToolUse", "tool_use_id": "toolu_1"}
    assert finish(hook("PreToolUse", pre, home)) == (0, "")
    for _ in range(500):
        if len(events) == 2:
            break
        threading.Event().wait(0.02)
    assert [(e.event, e.sender.agent, e.sender.in_process) for e in events] == [
        ("TeammateIdle", "worker", True),
        ("PreToolUse", "team-lead", False),
    ]
    assert bridge.pending() == []


def test_the_socket_folder_is_private_and_one_server_listens(
    served: tuple[Bridge, BridgeServer, list[HookEvent]], home: Path
) -> None:
    folder = wire.socket_path(home).parent
    assert folder.stat().st_mode & 0o777 == 0o700
    with pytest.raises(BridgeBusyError):
        BridgeServer(Bridge(), wire.socket_path(home)).start()
    assert client.pending_requests() == []  # the first one still answers


def test_pane_teammates_pre_tool_use_is_held_when_it_would_ask(tmp_path: Path) -> None:
    pane = Sender("worker", "session-510c9ba6", "s", pane=True)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    bash = {"tool_name": "Bash", "tool_input": {"command": "touch x"}, "cwd": str(tmp_path)}
    read = {"tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "x")}}
    plan = {"tool_name": "ExitPlanMode", "tool_input": {"plan": "## Plan"}}
    assert hold("PreToolUse", bash, pane, env) == "permission"
    assert hold("PreToolUse", read, pane, env) is None
    assert hold("PreToolUse", plan, pane, env) == "plan"
    no_file = {"tool_name": "ExitPlanMode", "tool_input": {}}  # fails by itself: no plan file
    assert hold("PreToolUse", no_file, pane, env) is None
    assert hold("PreToolUse", {**bash, "permission_mode": "bypassPermissions"}, pane, env) is None
    (tmp_path / "claude").mkdir()
    (tmp_path / "claude" / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(touch:*)"]}}'
    )
    assert hold("PreToolUse", bash, pane, env) is None  # an allow rule: Claude Code will not ask
    lead = Sender("team-lead", "session-510c9ba6", "s")
    assert hold("PreToolUse", bash, lead, env) is None
    assert hold("PermissionRequest", bash, lead, env) == "permission"

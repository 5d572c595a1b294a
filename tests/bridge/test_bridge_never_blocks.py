"""The hook never stalls Claude Code: an event teamdeck does not hold is handed over without
waiting; a held request waits only while the listening teamdeck keeps acknowledging it (a
stopped or hung one lets Claude Code ask in its own prompt); a bad payload gets no decision at
once and one line in the hook's log. Each hook here runs exactly as ``teamdeck claude setup``
installs it (``python -I -S hook_client.py EVENT``)."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.runtime.bridge import install, wire
from app.runtime.bridge.server import Bridge, BridgeServer
from tests.bridge.test_bridge_kept_rules import wait_for_command_line
from tests.timing import scaled

BASH = {
    "session_id": "510c9ba6-9f22-4afd-886a-7a7254565251",
    "cwd": "/tmp/project",
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "touch /tmp/project/marker"},
}
READ = {
    **BASH,
    "hook_event_name": "PreToolUse",
    "tool_name": "Read",
    "tool_input": {"file_path": "/x"},
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "teamdeck-home"


def run_hook(
    event: str, payload: bytes, home: Path, within: float = 30, pid: int | None = None
) -> tuple[int, str]:
    """The installed hook command, the payload on its stdin; a hang guard of ``within``
    (``pid``: the Claude Code process running it, ``CLAUDE_PID``)."""
    command = shlex.split(install.hook_command(event))
    env = {**os.environ, "TEAMDECK_HOME": str(home), "CLAUDE_PID": str(pid or os.getpid())}
    done = subprocess.run(
        command,
        input=payload,
        capture_output=True,
        env=env,
        timeout=scaled(within),
        check=False,
    )
    assert not done.stderr, done.stderr
    return done.returncode, done.stdout.decode()


@pytest.fixture
def stalled(home: Path) -> Iterator[socket.socket]:
    """A listening teamdeck that has stopped (as under SIGSTOP): its socket and secret are there,
    connections queue, nothing is ever read or answered."""
    folder = wire.socket_path(home).parent
    folder.mkdir(parents=True, mode=0o700)
    wire.secret_path(wire.socket_path(home)).write_text("s3cret\n")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    wire.bind(sock, wire.socket_path(home))
    sock.listen(16)
    yield sock
    sock.close()


def test_a_stopped_teamdeck_delays_no_call_and_lets_claude_code_ask(
    stalled: socket.socket, home: Path
) -> None:
    # Read is never held: handed over, not waited on (it waited 280 s for an answer before);
    # nor is the lead's own Bash PreToolUse (its PermissionRequest is what may be held).
    assert run_hook("PreToolUse", json.dumps(READ).encode(), home, within=10) == (0, "")
    lead_bash = {**BASH, "hook_event_name": "PreToolUse"}
    assert run_hook("PreToolUse", json.dumps(lead_bash).encode(), home, within=10) == (0, "")
    assert run_hook("Stop", json.dumps(BASH).encode(), home, within=10) == (0, "")
    log = wire.socket_path(home).parent / "hook.log"
    assert not log.exists()  # none of those waited for an acknowledgement
    # A request: nobody acknowledges it, so no decision (Claude Code asks in its own prompt).
    assert run_hook("PermissionRequest", json.dumps(BASH).encode(), home, within=10) == (0, "")
    # A pane teammate's Bash PreToolUse may be held: the same.
    pane = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", "--agent-name", "worker"]
    )
    wait_for_command_line(pane.pid)
    try:
        said = run_hook("PreToolUse", json.dumps(lead_bash).encode(), home, within=10, pid=pane.pid)
    finally:
        pane.kill()
        pane.wait()
    assert said == (0, "")
    lines = log.read_text().splitlines()
    unheard = "teamdeck did not acknowledge within 1 s: no decision (Claude Code asks)"
    assert [line.split(": ", 1)[1] for line in lines] == [
        f"PermissionRequest: {unheard}",
        f"PreToolUse: {unheard}",
    ]


def test_a_dashboard_that_stalls_stops_acknowledging_and_the_request_is_let_go(
    home: Path,
) -> None:
    beating = threading.Event()
    beating.set()
    events: list[Any] = []
    bridge = Bridge(on_event=events.append)
    bridge.alive = beating.is_set
    with BridgeServer(bridge, wire.socket_path(home)):
        result: list[tuple[int, str]] = []
        waiter = threading.Thread(
            target=lambda: result.append(
                run_hook("PermissionRequest", json.dumps(BASH).encode(), home)
            )
        )
        waiter.start()
        for _ in range(1000):
            if bridge.pending():
                break
            threading.Event().wait(0.02)
        (held,) = bridge.pending()
        waiter.join(timeout=1.5)
        assert waiter.is_alive()  # acknowledged: it waits for the person
        beating.clear()  # the dashboard's loop stalls
        waiter.join(timeout=scaled(20))
        assert result == [(0, "")]
        assert bridge.pending() == []
        ok, line = bridge.answer(held.request_id, allow=True)
        assert not ok and "no longer waiting" in line
        # while it stalls, a new request is not held at all
        assert run_hook("PermissionRequest", json.dumps(BASH).encode(), home) == (0, "")
        assert bridge.pending() == []


@pytest.mark.parametrize(
    ("event", "payload", "said"),
    [
        ("PermissionRequest", b"", "empty payload"),
        ("PermissionRequest", b"  \n", "empty payload"),
        ("PermissionRequest", b"[1, 2]", "not an object"),
        ("PreToolUse", b'"Bash"', "not an object"),
        ("PermissionRequest", b"{not json", "not JSON"),
        ("PermissionRequest", b'{"x": "' + b"a" * (5 << 20) + b'"}', "over"),
        ("NoSuchEvent", json.dumps(BASH).encode(), "unknown event"),
    ],
    ids=["empty", "blank", "list", "string", "not-json", "oversized", "unknown-event"],
)
def test_a_bad_payload_gets_no_decision_at_once_and_one_log_line(
    home: Path, event: str, payload: bytes, said: str
) -> None:
    bridge = Bridge()
    with BridgeServer(bridge, wire.socket_path(home)):
        assert run_hook(event, payload, home, within=10) == (0, "")
        assert bridge.pending() == [] and not bridge.events
    lines = (wire.socket_path(home).parent / "hook.log").read_text().splitlines()
    assert len(lines) == 1 and said in lines[0], lines


@pytest.mark.parametrize(
    ("event", "extra", "why"),
    [
        ("PostToolUse", {"tool_response": {"stdout": ""}}, "answered in Claude Code"),
        ("PostToolUseFailure", {"error": "denied"}, "answered in Claude Code"),
        ("Stop", {}, "answered in Claude Code"),
        ("SessionEnd", {"reason": "prompt_input_exit"}, "the session ended"),
    ],
)
def test_a_request_claude_code_went_on_without_is_let_go(
    home: Path, event: str, extra: dict[str, Any], why: str
) -> None:
    """Answered in Claude Code's own prompt (then the call ran, or failed), or the turn or the
    session ended: the request leaves the queue with a feed line, the hook ends with no
    decision, and answering it afterwards is refused in one line."""
    events: list[Any] = []
    bridge = Bridge(on_event=events.append)
    with BridgeServer(bridge, wire.socket_path(home)):
        result: list[tuple[int, str]] = []
        waiter = threading.Thread(
            target=lambda: result.append(
                run_hook("PermissionRequest", json.dumps(BASH).encode(), home)
            )
        )
        waiter.start()
        for _ in range(1000):
            if bridge.pending():
                break
            threading.Event().wait(0.02)
        (held,) = bridge.pending()
        other = {**BASH, "session_id": "another-session", "tool_input": {"command": "ls"}}
        # another session's events, or another call's, change nothing
        assert run_hook("PostToolUse", json.dumps(other).encode(), home) == (0, "")
        assert run_hook("SessionEnd", json.dumps(other).encode(), home) == (0, "")
        assert [a.request_id for a in bridge.pending()] == [held.request_id]

        done = {**BASH, "hook_event_name": event, **extra}
        assert run_hook(event, json.dumps(done).encode(), home) == (0, "")
        waiter.join(timeout=scaled(20))
        assert result == [(0, "")]
        assert bridge.pending() == []
        (line,) = [e.data["line"] for e in events if e.event == "AnsweredElsewhere"]
        assert line == f"team-lead's Bash request {held.request_id}: {why}"
        ok, said = bridge.answer(held.request_id, allow=True)
        assert not ok
        assert said == f"request {held.request_id} is no longer waiting ({why}): nothing sent"

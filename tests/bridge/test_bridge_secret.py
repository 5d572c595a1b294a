"""The bridge's per-run secret: every operation (``hook``, ``list``, ``answer``) must present it.
A process of the same user that cannot read ``<home>/bridge/secret`` (a sandboxed command: the
sandbox hides that folder) is refused and changes nothing, whatever it sends; the person's own
commands (``teamdeck approvals`` / ``approve``) and the installed hook present it."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.runtime.bridge import install, wire
from app.runtime.bridge.server import NOT_AUTHENTICATED, Bridge, BridgeServer

ROOT = Path(__file__).resolve().parents[2]
BASH = {
    "session_id": "510c9ba6-9f22-4afd-886a-7a7254565251",
    "cwd": "/tmp/project",
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "touch /tmp/project/marker"},
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "teamdeck-home"
    monkeypatch.setenv("TEAMDECK_HOME", str(root))
    return root


@pytest.fixture
def served(home: Path) -> Iterator[tuple[Bridge, BridgeServer]]:
    bridge = Bridge()
    server = BridgeServer(bridge, wire.socket_path(home))
    server.start()
    try:
        yield bridge, server
    finally:
        server.stop()


def raw(home: Path, message: dict[str, Any]) -> Any:
    """One message to the socket as any process of this user could send it (no secret read)."""
    with wire.connect(wire.socket_path(home)) as sock:
        sock.sendall(wire.encode(message))
        sock.settimeout(10)
        line = wire.read_line(sock)
    return json.loads(line) if line.strip() else None


def start_hook(home: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        shlex.split(install.hook_command("PermissionRequest")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "TEAMDECK_HOME": str(home)},
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(BASH).encode())
    process.stdin.close()
    return process


def held(bridge: Bridge) -> str:
    for _ in range(1000):
        if bridge.pending():
            return bridge.pending()[0].request_id
        threading.Event().wait(0.02)
    raise AssertionError("the hook's request never reached the bridge")


def test_the_secret_is_new_each_run_private_and_gone_at_the_end(home: Path) -> None:
    path = wire.secret_path(wire.socket_path(home))
    seen = []
    for _ in range(2):
        with BridgeServer(Bridge(), wire.socket_path(home)) as server:
            info = path.stat()
            assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
            assert path.read_text().strip() == server.secret and len(server.secret) >= 32
            seen.append(server.secret)
        assert not path.exists()
    assert seen[0] != seen[1]


@pytest.mark.parametrize("secret", [None, "", "wrong", "x" * 43])
def test_an_unauthenticated_peer_is_refused_for_every_operation(
    served: tuple[Bridge, BridgeServer], home: Path, secret: str | None
) -> None:
    bridge, _ = served
    extra = {} if secret is None else {"secret": secret}
    process = start_hook(home)  # a real request, waiting for the person
    request_id = held(bridge)

    # hook: a forged request is not held, not recorded, not shown
    forged = {"op": "hook", "event": "PermissionRequest", "input": BASH, "env": {}, **extra}
    assert raw(home, forged) == {"error": NOT_AUTHENTICATED}
    # list: nothing of the pending requests is told
    assert raw(home, {"op": "list", **extra}) == {"error": NOT_AUTHENTICATED}
    # answer: the real request is not answered, not "always allowed"
    answer = {"op": "answer", "id": request_id, "allow": True, "always": True, **extra}
    assert raw(home, answer) == {"error": NOT_AUTHENTICATED}

    assert [a.request_id for a in bridge.pending()] == [request_id]
    assert len(bridge.events) == 1  # the real hook's event only
    assert process.poll() is None  # still waiting for the person
    ok, _ = bridge.answer(request_id, allow=False)
    assert ok
    assert process.stdout is not None
    assert json.loads(process.stdout.read())["hookSpecificOutput"]["decision"]["behavior"] == (
        "deny"
    )
    process.wait(timeout=30)


def test_the_persons_commands_present_the_secret(
    served: tuple[Bridge, BridgeServer], home: Path
) -> None:
    bridge, _ = served
    process = start_hook(home)
    request_id = held(bridge)
    env = {**os.environ, "TEAMDECK_HOME": str(home)}

    def teamdeck(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-P", "-m", "app.cli.main", *args]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)

    listed = teamdeck("approvals", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["requestId"] for r in json.loads(listed.stdout)] == [request_id]
    approved = teamdeck("approve", request_id)
    assert approved.returncode == 0, approved.stderr
    assert process.stdout is not None
    decision = json.loads(process.stdout.read())["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "allow"
    process.wait(timeout=30)

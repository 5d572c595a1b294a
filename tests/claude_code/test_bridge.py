"""The hook bridge against the real Claude Code: ``teamdeck claude setup`` installs the hooks,
``teamdeck claude listen`` holds the lead's Bash request, ``teamdeck approve`` from another
process answers it, and the command runs without Claude Code's own prompt (under ``-p`` nobody
could answer that one: the call would come back "needs approval"). ``--remove`` then gives the
settings file back byte for byte."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.claude_code.conftest import ClaudeHome
from tests.claude_code.interactive import held, teamdeck
from tests.claude_code.server import Rule, call
from tests.timing import deadline, scaled

ROOT = Path(__file__).resolve().parents[2]
#: The person's own settings, in their own formatting: setup must give them back exactly.
SETTINGS = b'{\n  "model": "claude-opus-5-5",\n  "permissions": {"allow": []}\n}\n'


def bridge_env(claude_home: ClaudeHome, tmp_path: Path) -> dict[str, str]:
    """teamdeck's environment: its own home, Claude Code's config folder."""
    return {
        **os.environ,
        "TEAMDECK_HOME": str(tmp_path / "td"),
        "CLAUDE_CONFIG_DIR": str(claude_home.root),
    }


def listening(env: dict[str, str], *options: str) -> Iterator[subprocess.Popen[str]]:
    """``teamdeck claude listen [options]``, started and listening (a fixture's body)."""
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "app.cli.main", "claude", "listen", *options],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert "listening" in process.stdout.readline()
    yield process
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture
def env(claude_home: ClaudeHome, tmp_path: Path) -> dict[str, str]:
    return bridge_env(claude_home, tmp_path)


@pytest.fixture
def listener(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``teamdeck claude listen --json``, started and listening."""
    yield from listening(env, "--json")


def pending(env: dict[str, str]) -> list[dict[str, Any]]:
    done = teamdeck(env, "approvals", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def wait_for_request(
    env: dict[str, str], claude: subprocess.Popen[str], asked: Rule
) -> dict[str, Any]:
    """The first pending request. Listed by ``teamdeck approvals`` only once the scripted API
    has given Claude Code the call it asks about (``asked`` fired) and the listener holds a
    request (:func:`held`): each listing runs a teamdeck process."""
    end = deadline(120)
    while time.monotonic() < end:
        found = pending(env) if asked.fired and held(env) else []
        if found:
            return found[0]
        assert claude.poll() is None, "Claude Code ended without asking"
        time.sleep(0.1)
    raise AssertionError("the request never reached teamdeck")


def start_claude(
    claude_home: ClaudeHome, env: dict[str, str], prompt: str
) -> subprocess.Popen[str]:
    command = [str(claude_home.binary), "-p", prompt, "--debug-file", str(claude_home.debug_log)]
    return subprocess.Popen(
        [*command, "--permission-mode", "manual"],
        cwd=claude_home.project,
        env=claude_home.env(TEAMDECK_HOME=env["TEAMDECK_HOME"]),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def tool_results(claude_home: ClaudeHome) -> list[dict[str, Any]]:
    results = []
    for request in claude_home.api.messages():
        content = request.body["messages"][-1].get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                results.append(block)
    return results


def test_the_leads_bash_request_is_answered_from_teamdeck(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str]
) -> None:
    claude_home.settings_path.write_bytes(SETTINGS)
    setup = teamdeck(env, "claude", "setup")
    assert setup.returncode == 0, setup.stderr
    target = claude_home.project / "made-by-lead"
    command = {"command": f"touch {target}", "description": "Create the marker"}
    bash = Rule(call("Bash", command), last="Please make the marker", tool="Bash")
    claude_home.api.add(bash)

    claude = start_claude(claude_home, env, "Please make the marker file.")
    request = wait_for_request(env, claude, bash)
    assert request["agent"] == "team-lead"
    assert request["toolName"] == "Bash" and request["input"] == command
    assert not target.exists()  # it waits for the person
    approved = teamdeck(env, "approve", request["requestId"])
    assert approved.returncode == 0, approved.stderr
    out, err = claude.communicate(timeout=120)

    assert claude.returncode == 0, err[-2000:]
    assert target.exists(), "the approved command did not run"
    (result,) = tool_results(claude_home)
    assert result["is_error"] is False  # not "needs approval": Claude Code did not ask itself
    assert pending(env) == []

    listener.terminate()
    lines, _ = listener.communicate(timeout=30)
    events = [json.loads(line) for line in lines.splitlines()]
    names = [e["event"] for e in events]
    assert "PermissionRequest" in names
    assert {"SessionStart", "PreToolUse", "PostToolUse", "SessionEnd"} <= set(names)
    assert "Notification" not in names  # Claude Code never prompted

    removed = teamdeck(env, "claude", "setup", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert "byte for byte" in removed.stdout
    assert claude_home.settings_path.read_bytes() == SETTINGS


def test_with_nobody_listening_claude_code_decides_by_itself(
    claude_home: ClaudeHome, env: dict[str, str]
) -> None:
    setup = teamdeck(env, "claude", "setup")
    assert setup.returncode == 0, setup.stderr
    target = claude_home.project / "made-by-lead"
    command = {"command": f"touch {target}", "description": "Create the marker"}
    claude_home.api.add(Rule(call("Bash", command), last="Please make the marker", tool="Bash"))

    claude = start_claude(claude_home, env, "Please make the marker file.")
    _, err = claude.communicate(timeout=120)

    assert claude.returncode == 0, err[-2000:]
    assert not target.exists()
    (result,) = tool_results(claude_home)
    assert result["is_error"] is True  # Claude Code's own prompt, which -p cannot show
    assert "needs approval" in json.dumps(result["content"])
    log = claude_home.debug_log.read_text(errors="replace")
    assert "timed out" not in log


def test_a_subagents_bash_request_is_answered_from_teamdeck(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str]
) -> None:
    """Under ``-p`` an ``Agent`` call starts a background subagent in the lead's process, not a
    teammate (2.1.332 forms a team in interactive sessions only): the lead runs its
    PermissionRequest hook (``agent_id``, ``agent_type`` on stdin), as for an in-process
    teammate. The request names the agent, and teamdeck's answer lets its command run."""
    assert teamdeck(env, "claude", "setup").returncode == 0
    target = claude_home.project / "made-by-worker"
    spawn = {
        "description": "worker task",
        "prompt": "WORKER TASK: please run the command",
        "name": "worker",
        "subagent_type": "general-purpose",
    }
    claude_home.api.add(Rule(call("Agent", spawn), last="Please spawn a worker", tool="Agent"))
    command = {"command": f"touch {target}", "description": "Worker makes the marker"}
    bash = Rule(call("Bash", command), last="WORKER TASK", tool="Bash")
    claude_home.api.add(bash)

    claude = start_claude(claude_home, env, "Please spawn a worker.")
    request = wait_for_request(env, claude, bash)
    assert request["agent"] == "general-purpose"  # the subagent, not the lead
    assert request["input"] == command
    assert teamdeck(env, "approve", request["requestId"]).returncode == 0
    _, err = claude.communicate(timeout=180)

    assert claude.returncode == 0, err[-2000:]
    assert target.exists(), "the subagent's approved command did not run"


def test_a_stopped_teamdeck_never_stalls_claude_code(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str]
) -> None:
    """The listening teamdeck hangs (SIGSTOP): the lead's Read goes through without waiting, and
    its Bash falls to Claude Code's own prompt (under ``-p``: "needs approval") within the
    acknowledgement's wait, not the hook's 280 s."""
    assert teamdeck(env, "claude", "setup").returncode == 0
    target = claude_home.project / "made-by-lead"
    read = {"file_path": str(claude_home.project / "README.md")}
    claude_home.api.add(Rule(call("Read", read), last="Please make the marker", tool="Read"))
    command = {"command": f"touch {target}", "description": "Create the marker"}
    claude_home.api.add(Rule(call("Bash", command), last="Demo project", tool="Bash"))

    os.kill(listener.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        claude = start_claude(claude_home, env, "Please make the marker file.")
        _, err = claude.communicate(timeout=scaled(90))  # each held call waited 280 s before
        took = time.monotonic() - started
    finally:
        os.kill(listener.pid, signal.SIGCONT)
    print(f"claude -p with a stopped teamdeck: {took:.1f} s")

    assert claude.returncode == 0, err[-2000:]
    assert not target.exists()
    read_result, bash_result = tool_results(claude_home)
    assert not read_result.get("is_error")  # the Read went through
    assert "Demo project" in json.dumps(read_result["content"])
    assert bash_result["is_error"] is True  # Claude Code's own prompt, which -p cannot show
    assert "needs approval" in json.dumps(bash_result["content"])
    log = (Path(env["TEAMDECK_HOME"]) / "bridge" / "hook.log").read_text()
    assert "PermissionRequest: teamdeck did not acknowledge" in log
    assert "timed out" not in claude_home.debug_log.read_text(errors="replace")


def test_two_sessions_on_one_home_are_each_themselves(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str], tmp_path: Path
) -> None:
    """Two Claude Code sessions on one home, in two folders, each asking for a Bash call: each
    request names its own session, team and folder, and answering one runs only that one."""
    assert teamdeck(env, "claude", "setup").returncode == 0
    second = tmp_path / "second-project"
    second.mkdir()
    state = json.loads((claude_home.root / ".claude.json").read_text())
    state["projects"][str(second)] = {"hasTrustDialogAccepted": True, "allowedTools": []}
    (claude_home.root / ".claude.json").write_text(json.dumps(state))
    targets = {}
    claudes = {}
    asked: list[Rule] = []
    for name, folder in (("first", claude_home.project), ("second", second)):
        targets[name] = folder / f"made-by-{name}"
        command = {"command": f"touch {targets[name]}", "description": f"Mark {name}"}
        asked.append(Rule(call("Bash", command), last=f"Please mark {name}", tool="Bash"))
        claude_home.api.add(asked[-1])
        process = subprocess.Popen(
            [str(claude_home.binary), "-p", f"Please mark {name}.", "--permission-mode", "manual"],
            cwd=folder,
            env=claude_home.env(TEAMDECK_HOME=env["TEAMDECK_HOME"]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        claudes[name] = process

    end = deadline(120)
    requests: list[dict[str, Any]] = []
    while time.monotonic() < end and len(requests) < 2:
        # each listing runs a teamdeck process: none before both sessions were given their
        # call and the listener holds both requests
        fired = all(rule.fired for rule in asked)
        requests = pending(env) if fired and len(held(env)) >= 2 else []
        time.sleep(0.2)
    assert len(requests) == 2, requests
    by_folder = {r["folder"]: r for r in requests}
    first, other = by_folder[str(claude_home.project)], by_folder[str(second)]
    assert first["session"] != other["session"]
    for request, folder in ((first, claude_home.project), (other, second)):
        session = request["session"]
        assert request["team"] == f"session-{session[:8]}"
        assert request["origin"] == (
            f"Claude Code session {session[:8]} · team session-{session[:8]} · {folder}"
        )
    listed = teamdeck(env, "approvals")
    assert str(second) in listed.stdout and str(claude_home.project) in listed.stdout

    assert teamdeck(env, "approve", other["requestId"]).returncode == 0
    claudes["second"].communicate(timeout=120)
    assert targets["second"].exists() and not targets["first"].exists()
    assert [r["requestId"] for r in pending(env)] == [first["requestId"]]
    assert teamdeck(env, "reject", first["requestId"]).returncode == 0
    claudes["first"].communicate(timeout=120)
    assert not targets["first"].exists()

"""The real Claude Code asks a ``PermissionRequest`` hook before running Bash, and does what the
hook's stdout says: allow (with a rewritten command), deny (with the person's message), or
nothing printed (Claude Code falls back to its own prompt; under ``-p`` nobody answers it, so
the command does not run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.claude_code.conftest import ClaudeHome, hook_command
from tests.claude_code.server import Rule, call, user_text

HOOK = """\
import json, pathlib, sys
here = pathlib.Path(__file__).parent
event = json.load(sys.stdin)
with (here / "events.jsonl").open("a") as out:
    out.write(json.dumps(event) + "\\n")
decision = here / "decision.json"
if decision.exists():
    sys.stdout.write(decision.read_text())
"""


def install_hook(claude_home: ClaudeHome, decision: dict[str, Any] | None) -> Path:
    folder = claude_home.root.parent / "hook"
    folder.mkdir()
    script = folder / "hook.py"
    script.write_text(HOOK)
    if decision is not None:
        (folder / "decision.json").write_text(json.dumps(decision))
    claude_home.add_hook("PermissionRequest", hook_command(script), timeout=30)
    return folder


def events(folder: Path) -> list[dict[str, Any]]:
    path = folder / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def decision(behavior: str, **fields: Any) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": behavior, **fields},
        }
    }


def tool_result_after_bash(claude_home: ClaudeHome) -> dict[str, Any]:
    """What Claude Code told the model about the Bash call (the next request's tool result)."""
    for request in claude_home.api.messages():
        content = request.body["messages"][-1].get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                return {**block, "text": user_text(request.body)}
    raise AssertionError("Claude Code never sent the Bash result back to the model")


@pytest.fixture
def bash_request(claude_home: ClaudeHome) -> Path:
    """The scripted model answers the prompt with one Bash call that creates a file."""
    target = claude_home.project / "made-by-model"
    command = {"command": f"touch {target}", "description": "Create a marker file"}
    claude_home.api.add(Rule(call("Bash", command), last="Please make the marker", tool="Bash"))
    return target


def run(claude_home: ClaudeHome) -> None:
    done = claude_home.run_print("Please make the marker file.", "--permission-mode", "manual")
    assert done.returncode == 0, done.stderr[-2000:]


def test_allow_runs_the_command_with_the_updated_input(
    claude_home: ClaudeHome, bash_request: Path
) -> None:
    rewritten = claude_home.project / "made-by-hook"
    updated = {"command": f"touch {rewritten}", "description": "Create the hook's marker"}
    folder = install_hook(claude_home, decision("allow", updatedInput=updated))

    run(claude_home)

    assert rewritten.exists(), "the allowed (rewritten) command did not run"
    assert not bash_request.exists(), "the model's original input ran instead of updatedInput"
    (asked,) = events(folder)
    assert asked["hook_event_name"] == "PermissionRequest"
    assert asked["tool_name"] == "Bash"
    assert asked["tool_input"]["command"] == f"touch {bash_request}"
    assert tool_result_after_bash(claude_home)["is_error"] is False


def test_deny_keeps_the_command_from_running_and_tells_the_model_why(
    claude_home: ClaudeHome, bash_request: Path
) -> None:
    folder = install_hook(claude_home, decision("deny", message="Not now, says teamdeck."))

    run(claude_home)

    assert not bash_request.exists(), "a denied command ran"
    assert len(events(folder)) == 1
    result = tool_result_after_bash(claude_home)
    assert result["is_error"] is True
    assert "Not now, says teamdeck." in result["text"]


def test_no_decision_leaves_it_to_claude_code(claude_home: ClaudeHome, bash_request: Path) -> None:
    """A hook that prints nothing decides nothing: Claude Code asks by itself (under ``-p``
    nobody can answer, so the command is refused as needing approval)."""
    folder = install_hook(claude_home, None)

    run(claude_home)

    assert not bash_request.exists()
    assert len(events(folder)) == 1
    result = tool_result_after_bash(claude_home)
    assert result["is_error"] is True
    assert "needs approval" in result["text"]

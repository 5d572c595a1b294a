"""Always allow keeps its word against the real Claude Code 2.1.332 (``-p``, the lead's own
calls, held by ``teamdeck claude listen`` and answered with ``teamdeck approve``).

The person picks one of Claude Code's own choices -- this exact command, the command's prefix,
a file's directory -- and the rule lands in Claude Code's user settings: the calls it covers
are not asked again (no second request; under ``-p`` an unanswered ask would come back "needs
approval"), those it does not cover still are. A directory rule for a path outside the project
is spelled as Claude Code reads it (``Edit(//abs/**)``): before, teamdeck's ``Edit(/abs/**)``
was relative to the settings file, and the next call there was asked again. And the person can
edit a command before allowing it: the edited command is what runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.claude_code.conftest import ClaudeHome
from tests.claude_code.interactive import Session, held, teamdeck, wait_until
from tests.claude_code.server import Rule, Turn, call, say
from tests.claude_code.test_bridge import bridge_env, listening, pending, start_claude, tool_results
from tests.timing import deadline, scaled


@pytest.fixture
def env(claude_home: ClaudeHome, tmp_path: Path) -> dict[str, str]:
    env = bridge_env(claude_home, tmp_path)
    assert teamdeck(env, "claude", "setup").returncode == 0
    return env


@pytest.fixture
def listener(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    yield from listening(env)


def in_turn(calls: list[Turn]) -> Callable[[dict[str, Any]], Turn]:
    """The model's calls one after the other (one per tool result so far), then "done"."""

    def reply(body: dict[str, Any]) -> Turn:
        done = sum(
            1
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        return calls[done] if done < len(calls) else say("done")

    return reply


def next_request(
    env: dict[str, str], claude: subprocess.Popen[str], seen: set[str], model: Rule
) -> Any:
    """The next held request not in ``seen`` (``None`` once Claude Code ended). Listed by
    ``teamdeck approvals`` only once the scripted model has made a call past those already
    asked about (``model`` fired more often than ``seen`` holds) and the listener holds a new
    request (:func:`held`): each listing runs a teamdeck process."""
    end = deadline(120)
    while time.monotonic() < end:
        if model.fired > len(seen) and any(r["requestId"] not in seen for r in held(env)):
            fresh = [r for r in pending(env) if r["requestId"] not in seen]
            if fresh:
                seen.add(fresh[0]["requestId"])
                return fresh[0]
        if claude.poll() is not None:
            return None
        time.sleep(0.2)
    raise AssertionError("no request reached teamdeck")


def run(
    claude_home: ClaudeHome, env: dict[str, str], calls: list[Turn]
) -> tuple[subprocess.Popen[str], Rule]:
    """Claude Code started on ``calls``, and the scripted model's rule that makes them."""
    model = Rule(in_turn(calls), last="", tool="Bash", times=None)
    claude_home.api.add(model)
    return start_claude(claude_home, env, "Please do the work."), model


def bash(command: str) -> Turn:
    return call("Bash", {"command": command, "description": "work"})


def finish(claude: subprocess.Popen[str]) -> None:
    _, err = claude.communicate(timeout=120)
    assert claude.returncode == 0, err[-2000:]


def choice(request: dict[str, Any], words: str) -> str:
    (rule,) = [c["rule"] for c in request["ruleChoices"] if c["words"] == words]
    return str(rule)


def test_this_exact_command(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str]
) -> None:
    project = claude_home.project
    again, other = f"touch {project}/a", f"touch {project}/b"
    claude, model = run(claude_home, env, [bash(again), bash(again), bash(other)])
    seen: set[str] = set()
    first = next_request(env, claude, seen, model)
    rule = choice(first, "this exact command")
    assert rule == f"Bash({again})"
    done = teamdeck(env, "approve", first["requestId"], "--always", "--rule", rule)
    assert done.returncode == 0, done.stderr
    assert f"rule {rule} added in Claude Code's user settings" in done.stdout

    asked = next_request(env, claude, seen, model)  # the same command is not asked again
    assert asked is not None and asked["input"]["command"] == other
    assert teamdeck(env, "reject", asked["requestId"]).returncode == 0
    finish(claude)
    results = tool_results(claude_home)
    assert [bool(r.get("is_error")) for r in results] == [False, False, True]
    assert claude_home.settings()["permissions"]["allow"] == [rule]


def test_the_commands_prefix(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str]
) -> None:
    project = claude_home.project
    claude, model = run(claude_home, env, [bash(f"touch {project}/a"), bash(f"touch {project}/b")])
    seen: set[str] = set()
    first = next_request(env, claude, seen, model)
    rule = choice(first, "commands that start the same way")
    assert rule == "Bash(touch:*)" and first["suggestion"] == rule  # the default
    assert teamdeck(env, "approve", first["requestId"], "--always").returncode == 0

    assert next_request(env, claude, seen, model) is None  # touch b was not asked
    finish(claude)
    assert (project / "a").exists() and (project / "b").exists()
    assert claude_home.settings()["permissions"]["allow"] == [rule]


def test_a_directory_outside_the_project(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    first_file, second_file = outside / "one.txt", outside / "sub" / "two.txt"
    calls = [
        call("Write", {"file_path": str(first_file), "content": "one\n"}),
        call("Write", {"file_path": str(second_file), "content": "two\n"}),
        call("Read", {"file_path": str(first_file)}),
    ]
    claude, model = run(claude_home, env, calls)
    seen: set[str] = set()
    first = next_request(env, claude, seen, model)
    rule = choice(first, f"files in {outside} and below")
    assert rule == f"Edit(/{outside}/**)" and first["suggestion"] == rule
    assert teamdeck(env, "approve", first["requestId"], "--always").returncode == 0

    # neither the Write below it nor a Read there is asked again (an Edit rule covers reads)
    assert next_request(env, claude, seen, model) is None
    finish(claude)
    assert first_file.read_text() == "one\n" and second_file.read_text() == "two\n"
    assert [bool(r.get("is_error")) for r in tool_results(claude_home)] == [False] * 3
    assert claude_home.settings()["permissions"]["allow"] == [rule]


def test_an_edited_command_is_what_runs(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str]
) -> None:
    project = claude_home.project
    claude, model = run(claude_home, env, [bash(f"touch {project}/asked")])
    request = next_request(env, claude, set(), model)
    edited = f"touch {project}/edited"
    done = teamdeck(env, "approve", request["requestId"], "--command", edited)
    assert done.returncode == 0, done.stderr
    assert f"as the person edited it: $ {edited}" in done.stdout
    finish(claude)
    assert (project / "edited").exists() and not (project / "asked").exists()
    (result,) = tool_results(claude_home)
    assert not result.get("is_error")
    assert json.dumps(claude_home.settings().get("permissions", {})) in ("{}", '{"allow": []}')


def flat(screen: str) -> str:
    """The screen's words with the dialog's borders gone and its wrapped lines joined."""
    return re.sub(r"[\s█│┃]+", " ", screen)


def test_the_dialog_picks_the_rule_and_edits_the_command(session: Session) -> None:
    """The same in the dashboard (interactive, tmux): ``v`` opens the in-process teammate's
    request, the dialog shows the rule A adds and where it lives, ``c`` picks this exact
    command, ``e`` edits the command (the dialog shows the edited one and its rule), ``A``
    allows it: the edited command runs and its exact rule is in Claude Code's settings."""
    session.setup("in-process")
    project = session.home.project
    asked, edited = f"touch {project}/asked", f"touch {project}/edited"
    session.script_worker({"command": asked, "description": "Worker makes the marker"})
    session.start_dashboard()
    session.start_claude("Please spawn a worker.")
    deck = session.terminals
    deck.wait_for("deck", lambda s: "awaiting" in s, "the worker asking")
    deck.keys("deck", "v")
    deck.wait_for("deck", lambda s: "wants to use" in s and "touch:*" in s, "the dialog")
    deck.keys("deck", "c")
    deck.wait_for("deck", lambda s: "(this exact command)" in flat(s), "the exact choice")
    deck.keys("deck", "e")
    deck.wait_for("deck", lambda s: "Edit worker's command" in s, "the edit box")
    # the key guard of a dialog just opened: its first keys are not typed (stretched with the
    # load: a loaded dashboard took the typed line in the guard, the edit box left empty)
    time.sleep(scaled(0.6))
    deck.keys("deck", "C-u")
    deck.keys("deck", "-l", edited)
    deck.wait_for("deck", lambda s: "edited" in s, "the edited command typed")
    deck.keys("deck", "Enter")
    screen = deck.wait_for("deck", lambda s: "Edited by you" in s, "the edited command shown")
    assert "(this exact command)" in flat(screen)  # the edited one's (settings, below)
    deck.keys("deck", "A")
    wait_until((project / "edited").exists, "the edited command to run")
    assert not (project / "asked").exists()
    # the rule may land a moment after the command ran (a full run read the settings first)
    wait_until(lambda: "permissions" in session.home.settings(), "the rule kept")
    allow = session.home.settings()["permissions"]["allow"]
    assert allow == [f"Bash({edited})"]

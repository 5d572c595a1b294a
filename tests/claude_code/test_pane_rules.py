"""Always allow and an edited command for a pane teammate (the real Claude Code 2.1.332,
interactive, tmux): its calls are held at its own PreToolUse hook, whose answer adds no rule to
Claude Code's settings. So teamdeck keeps the rule the person picked and answers the calls it
covers itself; the directory of a file outside the project is one such rule (before, the next
call there was held again). An edited command is what runs (the hook's ``updatedInput``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.claude_code.interactive import SPAWN, Session, teamdeck, wait_until
from tests.claude_code.server import Rule, Turn, call, user_text
from tests.claude_code.test_always_allow import in_turn


def is_teammate(body: dict[str, Any]) -> bool:
    said = user_text(body, last=False)
    return "WORKER TASK" in said and "Please spawn" not in said


def start(session: Session, calls: list[Turn]) -> None:
    session.setup("tmux")
    api = session.home.api
    api.add(Rule(call("Agent", SPAWN), last="Please spawn a worker", tool="Agent"))
    api.add(Rule(in_turn(calls), when=is_teammate, tool="Bash", times=None))
    session.start_dashboard()
    session.start_claude("Please spawn a worker.")


def next_request(session: Session, seen: set[str]) -> dict[str, Any]:
    def fresh() -> dict[str, Any] | None:
        if all(r["requestId"] in seen for r in session.held()):
            return None  # the listing runs a teamdeck process: only once one is held
        return next((r for r in session.pending() if r["requestId"] not in seen), None)

    request: dict[str, Any] = wait_until(fresh, "the worker's request")
    seen.add(request["requestId"])
    return request


def test_a_directory_rule_kept_by_teamdeck_answers_the_next_call_there(
    session: Session, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    one, two = outside / "one.txt", outside / "sub" / "two.txt"
    start(
        session,
        [
            call("Write", {"file_path": str(one), "content": "one\n"}),
            call("Write", {"file_path": str(two), "content": "two\n"}),
        ],
    )
    request = next_request(session, set())
    assert request["agent"] == "worker" and request["source"] == "hook PreToolUse"
    rule = f"Edit(/{outside}/**)"
    assert request["suggestion"] == rule and "kept by teamdeck" in request["ruleHome"]
    done = teamdeck(session.env, "approve", "--always", request["requestId"])
    assert done.returncode == 0, done.stderr
    assert f"rule {rule} kept by teamdeck" in done.stdout

    wait_until(two.exists, "the second Write, answered by teamdeck's rule")
    assert one.read_text() == "one\n" and two.read_text() == "two\n"
    assert session.pending() == []
    rules = teamdeck(session.env, "claude", "rules")
    assert rules.stdout.startswith(f"{rule}  (added "), rules.stdout
    assert str(outside) not in json.dumps(session.home.settings())  # Claude Code got no rule


def test_this_exact_command_and_an_edited_one(session: Session) -> None:
    project = session.home.project
    again = f"touch {project}/again"
    calls = [
        call("Bash", {"command": again, "description": "first"}),
        call("Bash", {"command": again, "description": "same"}),
        call("Bash", {"command": f"touch {project}/asked", "description": "other"}),
    ]
    start(session, calls)
    seen: set[str] = set()
    first = next_request(session, seen)
    exact = f"Bash({again})"
    assert {"rule": exact, "words": "this exact command"} in first["ruleChoices"]
    done = teamdeck(session.env, "approve", "--always", "--rule", exact, first["requestId"])
    assert done.returncode == 0, done.stderr

    other = next_request(session, seen)  # the same command again was answered by the rule
    assert other["input"]["command"] == f"touch {project}/asked"
    edited = f"touch {project}/edited"
    done = teamdeck(session.env, "approve", "--command", edited, other["requestId"])
    assert done.returncode == 0, done.stderr
    wait_until((project / "edited").exists, "the edited command to run")
    assert (project / "again").exists() and not (project / "asked").exists()

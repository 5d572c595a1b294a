"""The permission dialog of a Claude Code request offers Claude Code's own rules and an edit of
the command (Pilot; the request comes from the real hook command, as in
``test_ui_claude_sessions``): the rule is shown, with where it lives, before A adds it; c picks
another (this exact command, its prefix); e edits the command, the dialog shows the edited one,
and the hook's answer runs it (``updatedInput``) with the rule picked for it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.dashboard.screens.feedback import FeedbackScreen
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.runtime.bridge import install
from tests import claude_home as ch
from tests.ui.helpers import screen_text, wait_for
from tests.ui.test_ui_claude_sessions import ask, bash


def rule_line(app: TeamDeckApp) -> str:
    """The dialog's line that shows the rule A adds (one line, however it wraps)."""
    return str(app.screen.query_one("#rule", Static).render())


@pytest.fixture
def hooks() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


async def test_pick_a_rule_and_edit_the_command_before_allowing(
    tmp_path: Path, hooks: list[subprocess.Popen[bytes]]
) -> None:
    root = ch.build(tmp_path / "claude")
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with app.run_test(size=(160, 40)) as pilot:
        assert isinstance(app, TeamDeckApp)
        await wait_for(pilot, lambda: app.loaded and app.files.team == ch.TEAM)
        hook = ask(hooks, root, bash(ch.LEAD_SESSION, "/work/project", "touch asked.txt"))
        await wait_for(pilot, lambda: any(a.request_id.startswith("cc-") for a in app.approvals))
        (held,) = [a for a in app.approvals if a.request_id.startswith("cc-")]
        assert held.rule_choices == (
            ("Bash(touch:*)", "commands that start the same way"),
            ("Bash(touch asked.txt)", "this exact command"),
        )
        await pilot.press("escape")
        app.screen.open_approval(held)  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        assert rule_line(app) == (
            "Always allow (A) adds the rule Bash(touch:*) (commands that start the same way), "
            "in Claude Code's user settings · c: the next of 2 choices"
        )
        await pilot.press("c")
        await wait_for(
            pilot, lambda: "Bash(touch asked.txt) (this exact command)" in rule_line(app)
        )
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, FeedbackScreen))
        assert app.screen.query_one(Input).value == "touch asked.txt"
        await pilot.press("ctrl+u", *"touch edited.txt", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await wait_for(pilot, lambda: "$ touch edited.txt" in screen_text(app))
        assert "Edited by you: this runs instead of team-lead's command" in screen_text(app)
        assert "Bash(touch edited.txt) (this exact command)" in rule_line(app)  # its own rule

        await pilot.press("A")
        assert hook.stdout is not None
        decision = json.loads(hook.stdout.read())["hookSpecificOutput"]["decision"]
        assert decision["behavior"] == "allow"
        assert decision["updatedInput"] == {"command": "touch edited.txt"}
        (update,) = decision["updatedPermissions"]
        assert update["rules"] == [{"toolName": "Bash", "ruleContent": "touch edited.txt"}]
        assert update["destination"] == "userSettings"


async def test_a_teammates_plan_says_the_lead_approves_it_by_itself(
    tmp_path: Path, hooks: list[subprocess.Popen[bytes]]
) -> None:
    """2.1.332 gives no door to approve a teammate's plan on the person's word: the plan
    dialog says at once what ``a`` does, and so does the answer's feed line."""
    root = ch.build(tmp_path / "claude")
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    plan = {
        "session_id": ch.LEAD_SESSION,
        "cwd": "/work/project",
        "hook_event_name": "PreToolUse",
        "tool_name": "ExitPlanMode",
        "tool_input": {"plan": "## Plan\n1. Write the tests.\n"},
        "agent_id": "aworker-0123456789abcdef",
    }
    async with app.run_test(size=(160, 40)) as pilot:
        assert isinstance(app, TeamDeckApp)
        await wait_for(pilot, lambda: app.loaded and app.files.team == ch.TEAM)
        hook = subprocess.Popen(  # noqa: ASYNC220 - the hook runs beside the app, as in use
            shlex.split(install.hook_command("PreToolUse")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "CLAUDE_CONFIG_DIR": str(root)},
        )
        hooks.append(hook)
        assert hook.stdin is not None
        hook.stdin.write(json.dumps(plan).encode())
        hook.stdin.close()
        await wait_for(pilot, lambda: any(a.request_id.startswith("cc-") for a in app.approvals))
        (held,) = [a for a in app.approvals if a.request_id.startswith("cc-")]
        await pilot.press("escape")
        app.screen.open_approval(held)  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: isinstance(app.screen, PlanReviewScreen))
        words = str(app.screen.query_one("#approve-words", Static).render())
        assert words == (
            "a: the lead approves worker's plan by itself: Claude Code 2.1.332 gives no other door"
        )
        assert "Approve (a): to the lead" in screen_text(app)
        await pilot.press("a")
        assert hook.stdout is not None
        assert hook.stdout.read() == b""  # no decision: the teammate sends it, the lead decides
        await wait_for(
            pilot,
            lambda: (
                "approved worker's plan" in screen_text(app)
                and "the lead approves worker's plan by itself" in screen_text(app)
            ),
        )

"""Two Claude Code sessions on one home: the dashboard steering one session's team shows the
other session's request apart, labelled with its session, team and folder, and does not answer
it; its own requests name their session, team and folder in the dialog. The requests come from
the real hook command (``python -I -S hook_client.py PermissionRequest``)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import Home
from app.dashboard.app import TeamDeckApp
from app.dashboard.launch import build_dashboard
from app.dashboard.screens.permission import PermissionScreen
from app.runtime.bridge import install
from tests import claude_home as ch
from tests.ui.helpers import screen_text, wait_for

OTHER_SESSION = "77aa0000-1111-4222-8333-944445555666"


def bash(session: str, folder: str, command: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "cwd": folder,
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    ).encode()


@pytest.fixture
def hooks() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def ask(
    hooks: list[subprocess.Popen[bytes]], root: Path, payload: bytes
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        shlex.split(install.hook_command("PermissionRequest")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "CLAUDE_CONFIG_DIR": str(root)},
    )
    assert process.stdin is not None
    process.stdin.write(payload)
    process.stdin.close()
    hooks.append(process)
    return process


async def test_another_sessions_request_is_shown_apart_and_not_answered_here(
    tmp_path: Path, hooks: list[subprocess.Popen[bytes]]
) -> None:
    root = ch.build(tmp_path / "claude")
    app = build_dashboard(Home(root, lock_style="mkdir"), viewer=True)
    async with app.run_test(size=(160, 40)) as pilot:
        assert isinstance(app, TeamDeckApp)
        await wait_for(pilot, lambda: app.loaded and app.files.team == ch.TEAM)
        ours = ask(hooks, root, bash(ch.LEAD_SESSION, "/work/project", "mkdir ours"))
        theirs = ask(hooks, root, bash(OTHER_SESSION, "/work/elsewhere", "mkdir theirs"))
        held = lambda: [a for a in app.approvals if a.request_id.startswith("cc-")]  # noqa: E731
        await wait_for(pilot, lambda: len(held()) == 2, within=20)
        mine, other = held()  # the team shown's first, the other session's after it
        assert mine.tool_input == {"command": "mkdir ours"}
        assert mine.title.startswith("team-lead: ")
        assert mine.origin == f"Claude Code session 98b0b4a7 · team {ch.TEAM} · /work/project"
        assert other.tool_input == {"command": "mkdir theirs"}
        assert other.title.startswith(
            "[other session: Claude Code session 77aa0000 · team session-77aa0000 · "
            "/work/elsewhere] team-lead: "
        )

        refused = app.steering.allow(other)
        assert not refused.ok
        assert "another Claude Code session's request" in refused.message
        assert f"teamdeck approve {other.request_id}" in refused.message
        assert theirs.poll() is None  # still waiting: nothing was answered

        await pilot.press("escape")
        app.screen.open_approval(mine)  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        origin = f"session 98b0b4a7 · team {ch.TEAM} · /work/project"
        await wait_for(pilot, lambda: origin in screen_text(app))  # the dialog drawn
        await pilot.press("y")
        assert ours.stdout is not None
        decision = json.loads(ours.stdout.read())["hookSpecificOutput"]["decision"]
        assert decision["behavior"] == "allow"
        await wait_for(pilot, lambda: [a.request_id for a in held()] == [other.request_id])

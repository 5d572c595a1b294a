"""A bad payload never holds the real Claude Code 2.1.332 (``-p``): its PermissionRequest hook is
teamdeck's hook command fed an empty payload, or a JSON array, instead of the event (as a
broken wrapper or a future Claude Code might). With a teamdeck listening, the hook gives no
decision at once and writes one line in teamdeck's hook log; Claude Code asks in its own prompt
(under ``-p``: "needs approval"). Before, such a payload blocked 4 min 40 s and was never
listed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.runtime.bridge import install
from tests.claude_code.conftest import ClaudeHome
from tests.claude_code.server import Rule, call
from tests.claude_code.test_bridge import bridge_env, listening, start_claude, tool_results


@pytest.fixture
def env(claude_home: ClaudeHome, tmp_path: Path) -> dict[str, str]:
    return bridge_env(claude_home, tmp_path)


@pytest.fixture
def listener(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    yield from listening(env)


@pytest.mark.parametrize(
    ("payload", "logged"),
    [
        ("", "PermissionRequest: empty payload: no decision"),
        ("[1, 2]", "PermissionRequest: payload is a JSON list, not an object: no decision"),
    ],
)
def test_a_bad_payload_gets_no_decision_at_once(
    claude_home: ClaudeHome,
    env: dict[str, str],
    listener: subprocess.Popen[str],
    payload: str,
    logged: str,
) -> None:
    feed = f"printf %s {payload!r} | {install.hook_command('PermissionRequest')}"
    claude_home.add_hook("PermissionRequest", feed, timeout=300)
    target = claude_home.project / "made-by-lead"
    command = {"command": f"touch {target}", "description": "Create the marker"}
    claude_home.api.add(Rule(call("Bash", command), last="Please make the marker", tool="Bash"))

    claude = start_claude(claude_home, env, "Please make the marker file.")
    _, err = claude.communicate(timeout=120)  # a hang guard: before, 280 s per request

    assert claude.returncode == 0, err[-2000:]
    assert not target.exists()
    (result,) = tool_results(claude_home)
    assert result["is_error"] is True  # Claude Code's own prompt, which -p cannot show
    assert "needs approval" in json.dumps(result["content"])
    log = (Path(env["TEAMDECK_HOME"]) / "bridge" / "hook.log").read_text()
    assert logged in log

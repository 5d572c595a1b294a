"""The hook's cost in a real session (Claude Code 2.1.332, ``-p``, teamdeck listening): every
event runs the small standard-library client (``python -I -S hook_client.py``: no ``site``,
nothing of teamdeck's imported), which Claude Code reports finished with status 0, and a
``PreToolUse`` or ``PostToolUse`` teamdeck does not hold waits for no reply. Claude Code's own
timings of each hook (its debug log) are printed beside a bare ``python -I -c pass`` measured in
the same test: measured, not judged (``bench/hook.py`` judges, on a quiet machine). Before, each
event ran the ``teamdeck hook`` console script, which imported teamdeck: 66-100 ms a call in real
sessions, 150-200 ms added to every tool call."""

from __future__ import annotations

import re
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude_code.conftest import ClaudeHome
from tests.claude_code.interactive import teamdeck
from tests.claude_code.server import Rule, call
from tests.claude_code.test_always_allow import in_turn
from tests.claude_code.test_bridge import bridge_env, listening, start_claude

FINISHED = re.compile(r"Hooks: (\w+)(?::\w+)? \[(.+?)\] finished with status (\d+) \((\d+)ms\)")


@pytest.fixture
def env(claude_home: ClaudeHome, tmp_path: Path) -> dict[str, str]:
    env = bridge_env(claude_home, tmp_path)
    assert teamdeck(env, "claude", "setup").returncode == 0
    return env


@pytest.fixture
def listener(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    yield from listening(env)


def bare_python_ms(runs: int = 9) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def test_every_tool_call_runs_the_small_client_and_waits_for_nothing(
    claude_home: ClaudeHome, env: dict[str, str], listener: subprocess.Popen[str]
) -> None:
    readme = str(claude_home.project / "README.md")
    calls = [call("Read", {"file_path": readme}) for _ in range(4)]
    claude_home.api.add(Rule(in_turn(calls), last="", tool="Read", times=None))
    claude = start_claude(claude_home, env, "Please read the README four times.")
    _, err = claude.communicate(timeout=180)
    assert claude.returncode == 0, err[-2000:]

    log = claude_home.debug_log.read_text(errors="replace")
    finished = FINISHED.findall(log)
    tools = [(event, int(ms)) for event, _, _, ms in finished if event.endswith("ToolUse")]
    assert len(tools) == 8, finished  # a PreToolUse and a PostToolUse per Read
    for _, command, status, _ in finished:
        words = shlex.split(command)
        assert words[1:3] == ["-I", "-S"] and Path(words[3]).name == "hook_client.py", command
        assert status == "0"
    hook_log = Path(env["TEAMDECK_HOME"]) / "bridge" / "hook.log"
    assert not hook_log.exists() or "acknowledge" not in hook_log.read_text()
    baseline = bare_python_ms()
    median = statistics.median(ms for _, ms in tools)
    print(
        f"Claude Code's timing of teamdeck's PreToolUse/PostToolUse hooks: median {median:.0f} ms "
        f"over {len(tools)}; python -I -c pass here and now: {baseline:.0f} ms "
        f"({median / baseline:.2f}x)"
    )

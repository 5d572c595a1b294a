"""Hook commands: the event as JSON on stdin, exit 0 / exit 2 / other exits / timeouts, and
an environment without the API credentials."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.runtime.agent.hook_commands import hook_input, run_hook, run_hooks
from app.runtime.permissions.settings import HookCommand

TASK = SimpleNamespace(id="3", subject="Write the parser", description="in src/parse.py")


def payload(cwd: Path) -> dict[str, object]:
    return hook_input(
        "TaskCompleted", cwd=cwd, team_name="alpha", teammate_name="researcher", task=TASK
    )


def test_hook_input_has_claude_codes_fields(tmp_path: Path) -> None:
    data = payload(tmp_path)
    assert data["hook_event_name"] == "TaskCompleted"
    assert data["team_name"] == "alpha" and data["teammate_name"] == "researcher"
    assert (data["task_id"], data["task_subject"], data["task_description"]) == (
        "3",
        "Write the parser",
        "in src/parse.py",
    )
    assert data["cwd"] == str(tmp_path)
    idle = hook_input("TeammateIdle", cwd=tmp_path, team_name="alpha", teammate_name="r")
    assert "task_id" not in idle


async def test_exit_0_passes_and_sees_the_event_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    result = await run_hook(f"cat > {out}; echo chatter >&2", payload(tmp_path), cwd=tmp_path)
    assert result.outcome == "ok" and not result.blocked
    assert json.loads(out.read_text())["task_subject"] == "Write the parser"


async def test_exit_2_blocks_with_stderr_as_feedback(tmp_path: Path) -> None:
    hook = HookCommand("TaskCompleted", "echo 'tests fail: 2 errors' >&2; exit 2")
    run = await run_hooks("TaskCompleted", [hook], payload(tmp_path), cwd=tmp_path)
    assert run.blocked
    assert run.feedback == "tests fail: 2 errors"
    assert run.warnings == []


async def test_json_decision_block_on_exit_0(tmp_path: Path) -> None:
    cmd = """echo '{"decision": "block", "reason": "add a description"}'"""
    result = await run_hook(cmd, payload(tmp_path), cwd=tmp_path)
    assert result.blocked and result.message == "add a description"


async def test_other_exit_is_a_warning_not_a_block(tmp_path: Path) -> None:
    result = await run_hook("echo 'lint broke' >&2; exit 3", payload(tmp_path), cwd=tmp_path)
    assert result.outcome == "warning" and not result.blocked
    assert result.exit_code == 3
    assert "exit 3" in result.message and "lint broke" in result.message


async def test_timeout_is_a_warning_and_kills_the_command(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    hook = HookCommand("TeammateIdle", f"sleep 0.8; touch {marker}", timeout=0.2)
    run = await run_hooks("TeammateIdle", [hook], payload(tmp_path), cwd=tmp_path)
    assert not run.blocked
    assert len(run.warnings) == 1 and run.warnings[0].endswith("timed out after 0.2s")
    await asyncio.sleep(1.0)  # had the command survived, it would have touched the marker
    assert not marker.exists()


async def test_hooks_never_see_the_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "fake-token")
    monkeypatch.setenv("SOMETHING_ELSE", "kept")
    out = tmp_path / "env.txt"
    result = await run_hook(f"env > {out}", payload(tmp_path), cwd=tmp_path)
    assert result.outcome == "ok"
    env = out.read_text()
    assert "sk-ant-fake-key" not in env and "fake-token" not in env
    assert "SOMETHING_ELSE=kept" in env and f"CLAUDE_PROJECT_DIR={tmp_path}" in env


async def test_only_the_events_hooks_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hooks = [HookCommand("TaskCreated", f"touch {marker}")]
    run = await run_hooks("TaskCompleted", hooks, payload(tmp_path), cwd=tmp_path)
    assert run.results == [] and not marker.exists()


async def test_huge_output_is_capped_not_held(tmp_path: Path) -> None:
    """A hook printing 50 MB: the result keeps at most OUTPUT_LIMIT of it, and the hook ends
    normally (the pipes were drained all along)."""
    from app.runtime.agent.hook_commands import OUTPUT_LIMIT

    hook = HookCommand(
        "TeammateIdle", "head -c 50000000 /dev/zero | tr '\\0' x; echo >&2 done; exit 2"
    )
    result = await run_hook(hook, {}, cwd=tmp_path)
    assert result.outcome == "blocked" and result.message == "done"
    assert 0 < len(result.stdout) <= OUTPUT_LIMIT


async def test_a_child_left_holding_stdout_does_not_make_a_timeout(tmp_path: Path) -> None:
    """The hook's shell exits 0 at once but leaves a child with its stdout open for 30 s: the
    hook is ``ok`` as soon as the shell ends, not "timed out" after its whole timeout."""
    hook = HookCommand("TeammateIdle", "echo ok; sleep 30 &", timeout=20)
    result = await asyncio.wait_for(run_hook(hook, {}, cwd=tmp_path), 10)
    assert result.outcome == "ok" and result.stdout == "ok"


async def test_control_characters_never_reach_the_feedback(tmp_path: Path) -> None:
    hook = HookCommand(
        "TeammateIdle", "printf 'fix \\033[31mred\\033[0m\\a tests\\r\\nnow\\000' >&2; exit 2"
    )
    result = await run_hook(hook, {}, cwd=tmp_path)
    assert result.blocked
    assert result.message == "fix [31mred[0m tests\nnow"
    assert all(ch == "\n" or ch.isprintable() for ch in result.message)

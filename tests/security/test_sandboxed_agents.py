"""Agents' commands and hooks run in the sandbox the run was given: the Bash tool, the team
hooks, and the `teamdeck` command's default and its one-line notice where bubblewrap is
missing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.agent.hook_commands import run_hook
from app.runtime.permissions.settings import HookCommand
from app.runtime.sandbox import SandboxConfig, bwrap_problem
from app.runtime.tools.base import AgentIdentity, ToolContext
from app.runtime.tools.workspace import Bash
from tests.conformance.test_conformance_headless import run_here

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"{bwrap_problem()}")
PROBE = "echo in > made.txt; (echo out > {outside}) 2>/dev/null || echo REFUSED; env"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def context(tmp_path: Path, project: Path, sandbox: SandboxConfig | None) -> ToolContext:
    agent = AgentIdentity(name="worker", team="t", cwd=project)
    return ToolContext(home=Home(tmp_path / "home"), agent=agent, sandbox=sandbox)


@needs_bwrap
async def test_bash_runs_in_the_sandbox(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    outside = Path.home() / f".teamdeck-probe-{os.getpid()}"
    ctx = context(tmp_path, project, SandboxConfig())
    result = await Bash().call({"command": PROBE.format(outside=outside)}, ctx)
    assert (project / "made.txt").exists() and not outside.exists()
    assert "REFUSED" in result.content
    assert "aws-secret" not in result.content and "CLAUDE_CODE_AGENT_NAME=worker" in result.content


async def test_without_the_sandbox_the_environment_is_still_an_allowlist(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--no-sandbox``: commands reach the whole disk again, but foreign secrets still stay
    out of their environment (``--pass-env`` brings one in on purpose)."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-token")
    config = SandboxConfig(enabled=False, pass_env=("GITHUB_TOKEN",))
    result = await Bash().call({"command": "env"}, context(tmp_path, project, config))
    assert "aws-secret" not in result.content and "GITHUB_TOKEN=gh-token" in result.content


@needs_bwrap
async def test_hooks_run_in_the_sandbox(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "oa-key")
    outside = Path.home() / f".teamdeck-hook-probe-{os.getpid()}"
    hook = HookCommand("TeammateIdle", PROBE.format(outside=outside))
    result = await run_hook(hook, {}, cwd=project, sandbox=SandboxConfig())
    assert result.outcome == "ok"
    assert (project / "made.txt").exists() and not outside.exists()
    assert "REFUSED" in result.stdout and "oa-key" not in result.stdout
    assert f"CLAUDE_PROJECT_DIR={project}" in result.stdout


def test_a_missing_bwrap_is_one_line_saying_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`teamdeck run --headless` where no bwrap is on PATH: one warning line naming the
    package and saying that commands and hooks will not run unconfined; the run itself goes
    on (its Bash calls refuse: tests/security/test_no_door.py). Through the entry function in
    this process, bwrap looked up again for the run and after it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh", "bash", "wc", "ls", "cat"):
        found = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if found:
            (bin_dir / tool).symlink_to(found)
    env = {
        "PATH": str(bin_dir),
        "HOME": str(tmp_path),
        "TEAMDECK_OFFLINE_PACE": "0",
    }
    core = Path(__file__).resolve().parents[2] / "app" / "core"
    goal = "Summarize the Python files"
    bwrap_problem.cache_clear()
    try:
        done = run_here(monkeypatch, capsys, tmp_path / "home", core, env, goal, "--no-history")
    finally:
        bwrap_problem.cache_clear()
    warnings = [line for line in done.stderr.splitlines() if "sandbox" in line]
    assert warnings == [
        "teamdeck: warning: no sandbox: bwrap not found: install bubblewrap "
        "(apt-get install bubblewrap, or dnf install bubblewrap); commands and hooks do not "
        "run unconfined (or run teamdeck with --no-sandbox)"
    ], done.stderr
    assert done.returncode == 0, done.stderr

"""The sandbox is a boundary: what a sandboxed command can and cannot reach (bubblewrap)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from pathlib import Path

import pytest

from app.runtime.sandbox import Sandbox, bwrap_problem, sandbox_env
from app.runtime.sandbox.bwrap import shell_argv

pytestmark = pytest.mark.skipif(
    bwrap_problem() is not None, reason=f"no sandbox here: {bwrap_problem()}"
)


def run(sandbox: Sandbox, command: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    with sandbox.launch(shell_argv(command), cwd) as (argv, fds):
        done = subprocess.run(
            argv,
            pass_fds=fds,
            capture_output=True,
            text=True,
            timeout=30,
            env=env if env is not None else sandbox_env(os.environ),
        )
    return done.stdout + done.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text("{}")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    return root


def test_the_project_is_writable_and_the_rest_is_not(project: Path, tmp_path: Path) -> None:
    """The project takes writes; a folder outside it (the person's home) refuses them, and a
    write to /tmp lands in the sandbox's own /tmp, never the host's."""
    outside = Path.home() / f".teamdeck-sandbox-probe-{os.getpid()}"
    beside = tmp_path / "beside.txt"
    out = run(
        Sandbox.for_project(project),
        f"echo in > made.txt; (echo out > {outside}) 2>/dev/null || echo REFUSED-OUTSIDE;"
        f"echo tmp > {beside}",
        project,
    )
    assert (project / "made.txt").read_text() == "in\n"
    assert not outside.exists() and "REFUSED-OUTSIDE" in out
    assert not beside.exists()


def test_code_running_config_is_read_only(project: Path) -> None:
    out = run(
        Sandbox.for_project(project),
        "echo '{\"hooks\": 1}' > .claude/settings.json || echo REFUSED-CLAUDE;"
        "echo '[core] fsmonitor = x' >> .git/config || echo REFUSED-GIT;"
        "echo x > .git/hooks/pre-commit || echo REFUSED-HOOK",
        project,
    )
    assert (project / ".claude" / "settings.json").read_text() == "{}"
    assert (project / ".git" / "config").read_text() == "[core]\n"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert all(f"REFUSED-{w}" in out for w in ("CLAUDE", "GIT", "HOOK")), out


def test_settings_cannot_be_created_where_there_were_none(tmp_path: Path) -> None:
    """A project without ``.claude``: a command cannot make one with settings in it (a hook
    there would be code for teamdeck to run)."""
    bare = tmp_path / "bare"
    bare.mkdir()
    out = run(
        Sandbox.for_project(bare),
        "mkdir -p .claude; echo '{\"hooks\": 1}' > .claude/settings.json || echo REFUSED;"
        "echo in > made.txt",
        bare,
    )
    assert "REFUSED" in out and (bare / "made.txt").exists()
    assert not (bare / ".claude" / "settings.json").exists()


def test_ancestors_are_out_of_sight(project: Path) -> None:
    """A new PID namespace: this test's process (an ancestor of the command) has no
    ``/proc/<pid>`` inside, so neither its environment nor its memory can be read."""
    me = os.getpid()
    out = run(
        Sandbox.for_project(project),
        f"cat /proc/{me}/environ >/dev/null 2>&1 && echo SEEN || echo HIDDEN;"
        f"ls /proc | grep -c '^[0-9]'",
        project,
    )
    assert "HIDDEN" in out and "SEEN" not in out
    assert int(out.split()[-1]) < 10  # only the sandbox's own few processes


def test_tmp_is_private(project: Path) -> None:
    marker = Path("/tmp") / f"teamdeck-sandbox-marker-{os.getpid()}"
    marker.write_text("host")
    try:
        out = run(
            Sandbox.for_project(project),
            f"cat {marker} 2>/dev/null || echo PRIVATE; echo t > /tmp/mine && echo WROTE",
            project,
        )
        assert "PRIVATE" in out and "WROTE" in out
        assert not Path("/tmp/mine").exists() or Path("/tmp/mine").read_text() != "t\n"
    finally:
        marker.unlink()


def test_no_network_unless_allowed(project: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        probe = f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo REACHED || echo CUT"
        assert "CUT" in run(Sandbox.for_project(project), probe, project)
        assert "REACHED" in run(Sandbox.for_project(project, network=True), probe, project)


def test_foreign_secrets_are_not_in_the_environment(project: Path) -> None:
    base = {
        **os.environ,
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "GITHUB_TOKEN": "gh-token",
        "OPENAI_API_KEY": "oa-key",
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "CLAUDE_CODE_TEAM_NAME": "my-team",
        "MY_BUILD_FLAG": "1",
    }
    env = sandbox_env(base, passed=["MY_BUILD_FLAG", "ANTHROPIC_API_KEY"])
    out = run(Sandbox.for_project(project), "env", project, env=env)
    for secret in ("aws-secret", "gh-token", "oa-key", "sk-ant-x"):
        assert secret not in out
    assert "CLAUDE_CODE_TEAM_NAME=my-team" in out and "MY_BUILD_FLAG=1" in out
    assert "PATH=" in out and "HOME=" in out


def test_commands_overlapping_in_one_project_keep_each_others_stand_ins(tmp_path: Path) -> None:
    """Sandboxed commands at once in a project that lacks the protected names (two teammates'
    Bash, two hooks): one set up while the first's stand-ins are there runs after the first
    has ended, sealed all the same; the last one out removes the stand-ins. (The first's end
    used to remove them from under the other: "bwrap: Can't find source path .../.git".)"""
    project = tmp_path / "bare"
    project.mkdir()
    probe = "touch .git/x .mcp.json 2>/dev/null; echo RAN; ls -A"
    first = Sandbox.for_project(project)
    with contextlib.ExitStack() as second_run:
        with first.launch(shell_argv("true"), project):
            assert sorted(os.listdir(project)) == [".claude", ".git", ".gitmodules", ".mcp.json"]
            built_meanwhile = Sandbox.for_project(project)  # sees them as the project's
            second = Sandbox.for_project(project)
            argv, fds = second_run.enter_context(second.launch(shell_argv(probe), project))
        # the first command has ended: the second, started during it, runs now
        assert sorted(os.listdir(project)) == [".claude", ".git", ".gitmodules", ".mcp.json"]
        done = subprocess.run(argv, pass_fds=fds, capture_output=True, text=True, timeout=30)
        assert done.stdout.startswith("RAN"), done.stderr
    assert os.listdir(project) == []  # the last one out removed them
    assert "RAN" in run(built_meanwhile, probe, project)  # built when they were there
    assert os.listdir(project) == []

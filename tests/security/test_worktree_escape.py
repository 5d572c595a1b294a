"""Issue 28, item 2: a teammate in a worktree cannot make teamdeck's own git (at release), nor
the person's ``git status``, run its program: the worktree's administrative files are
read-only in the sandbox, and teamdeck's git pins the common dir it recorded, refusing in one
line when ``commondir`` was changed anyway (a sandbox turned off, say)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.sandbox import SandboxConfig, bwrap_problem
from app.runtime.team.git_worktrees import WorktreeManager
from app.runtime.tools.base import AgentIdentity, ToolContext
from app.runtime.tools.workspace import Bash

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"{bwrap_problem()}")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "p@example.org")
    git(root, "config", "user.name", "Person")
    (root / "a.txt").write_text("one\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "one")
    return root


def attack(main_git: Path, admin: Path, marker: Path) -> str:
    """A planted repository whose config has a clean filter that writes ``marker``, the
    worktree's files routed through it, and its ``commondir`` pointed there."""
    return (
        f"cp -r {main_git} planted && "
        f'printf \'[filter "x"]\\n\\tclean = sh -c "touch {marker}; cat"\\n\' >> planted/config;'
        "echo '* filter=x' > .gitattributes; echo two >> a.txt;"
        f"(echo $PWD/planted > {admin}/commondir) 2>/dev/null && echo PLANTED || echo REFUSED;"
        f"(echo x > {main_git}/info/attributes) 2>/dev/null && echo ATTR || echo NOATTR"
    )


@needs_bwrap
async def test_a_sandboxed_teammate_cannot_plant_a_commondir(repo: Path, tmp_path: Path) -> None:
    manager = WorktreeManager(repo, "t")
    tree = manager.create("w")
    assert tree.git_dir is not None
    marker = tmp_path / "ran-as-the-person"
    agent = AgentIdentity(name="w", team="t", cwd=tree.path)
    ctx = ToolContext(home=Home(tmp_path / "home"), agent=agent, sandbox=SandboxConfig())
    result = await Bash().call({"command": attack(repo / ".git", tree.git_dir, marker)}, ctx)
    assert "REFUSED" in result.content and "NOATTR" in result.content, result.content
    assert (tree.git_dir / "commondir").read_text().strip() == "../.."
    # Its own HEAD and index stay writable: a commit works inside the sandbox.
    who = "-c user.name=w -c user.email=w@x"
    commit = await Bash().call({"command": f"git add -A && git {who} commit -qm w; echo C=$?"}, ctx)
    assert "C=0" in commit.content, commit.content
    released = manager.release(tree)
    assert not released.removed and not marker.exists(), released.summary
    await asyncio.to_thread(git, tree.path, "status")  # the person's own git status there
    assert not marker.exists()
    # The stand-ins for the absent .mcp.json and .gitmodules were not committed.
    committed = git(tree.path, "show", "--name-only", "--format=", "HEAD").split()
    assert "a.txt" in committed and not {".mcp.json", ".gitmodules"} & set(committed)


def test_a_changed_commondir_is_refused_in_one_line(repo: Path, tmp_path: Path) -> None:
    """The same plant made where no sandbox held it: release runs no git there, keeps the
    worktree and says why in one line; the filter never runs."""
    manager = WorktreeManager(repo, "t")
    tree = manager.create("w")
    assert tree.git_dir is not None
    marker = tmp_path / "ran-as-the-person"
    subprocess.run(
        ["bash", "-c", attack(repo / ".git", tree.git_dir, marker)],
        cwd=tree.path,
        capture_output=True,
        check=False,
    )
    released = manager.release(tree)
    assert not released.removed and not marker.exists()
    assert "commondir" in released.error and "\n" not in released.summary, released.summary
    assert tree.path.is_dir()

"""``--worktrees`` against a real git repository: created on a teamdeck branch, edits isolated,
a clean worktree removed with its branch, a changed one kept; outside a repository, one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.runtime.team.git_worktrees import WorktreeError, WorktreeManager, branch_name


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "README.md").write_text("hello\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


def branches(root: Path) -> list[str]:
    return git(root, "branch", "--format=%(refname:short)").splitlines()


def test_outside_a_repository_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(WorktreeError) as info:
        WorktreeManager(tmp_path, "alpha")
    assert (
        str(info.value) == f"--worktrees needs a git repository, and {tmp_path} is not inside one"
    )


def test_created_isolated_and_clean_one_removed(repo: Path) -> None:
    manager = WorktreeManager(repo / ".", "My Team")
    a = manager.create("researcher")
    b = manager.create("tester")
    assert a.branch == "teamdeck/My-Team/researcher" == branch_name("My Team", "researcher")
    assert a.path.is_dir() and (a.path / "README.md").read_text() == "hello\n"
    assert git(a.path, "rev-parse", "--abbrev-ref", "HEAD") == a.branch
    (a.path / "README.md").write_text("edited by researcher\n")
    assert (b.path / "README.md").read_text() == "hello\n"
    assert (repo / "README.md").read_text() == "hello\n"

    released = manager.release(b)
    assert released.removed and not b.path.exists()
    assert b.branch not in branches(repo)

    kept = manager.release(a)
    assert not kept.removed and a.path.is_dir()
    assert kept.changed_files == 1
    assert a.branch in branches(repo)
    assert "kept worktree" in kept.summary and "1 changed file" in kept.summary


def test_commits_and_untracked_files_count_as_changes(repo: Path) -> None:
    manager = WorktreeManager(repo, "t")
    committed = manager.create("a")
    (committed.path / "new.txt").write_text("x")
    git(committed.path, "add", ".")
    git(committed.path, "commit", "-qm", "work")
    untracked = manager.create("b")
    (untracked.path / "scratch.txt").write_text("y")
    r1, r2 = manager.release(committed), manager.release(untracked)
    assert (r1.removed, r1.commits, r1.changed_files) == (False, 1, 0)
    assert (r2.removed, r2.changed_files) == (False, 1)
    assert committed.path.is_dir() and untracked.path.is_dir()


def test_an_existing_branch_is_a_clear_error(repo: Path) -> None:
    git(repo, "branch", "teamdeck/t/a")
    with pytest.raises(WorktreeError, match="branch teamdeck/t/a already exists"):
        WorktreeManager(repo, "t").create("a")


def test_a_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    with pytest.raises(WorktreeError, match="needs a commit"):
        WorktreeManager(tmp_path, "t")


def test_work_only_in_ignored_files_is_kept_and_reported(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.local\nbuild/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore")
    manager = WorktreeManager(repo, "team")
    tree = manager.create("researcher")
    (tree.path / "notes.local").write_text("an hour of findings\n")
    (tree.path / "build").mkdir()
    (tree.path / "build" / "out.bin").write_text("x")

    released = manager.release(tree)

    assert not released.removed and tree.path.exists()
    assert (tree.path / "notes.local").read_text() == "an hour of findings\n"
    assert released.ignored_files >= 2 and released.changed_files == 0
    assert "ignored files" in released.summary and tree.branch in branches(repo)


def evil_script(where: Path) -> tuple[Path, Path]:
    marker = where / "ran"
    script = where / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(0o755)
    return script, marker


def test_repository_config_that_runs_code_is_not_run_by_teamdecks_own_git(repo: Path) -> None:
    """A teammate sets ``core.fsmonitor`` (run by every ``git status``) and a hooks path in
    the repository's config: the release's git commands run neither."""
    manager = WorktreeManager(repo, "team")
    tree = manager.create("researcher")
    evil, marker = evil_script(repo.parent)
    git(repo, "config", "core.fsmonitor", str(evil))
    git(repo, "config", "core.hooksPath", str(repo.parent))
    (tree.path / "new.txt").write_text("work\n")

    released = manager.release(tree)

    assert not released.removed and released.changed_files == 1
    assert not marker.exists()


def test_a_rewritten_git_file_is_not_followed(repo: Path) -> None:
    """The teammate points its worktree's ``.git`` file at a repository of its own whose
    config runs code: the release uses the worktree's real administrative folder."""
    manager = WorktreeManager(repo, "team")
    tree = manager.create("researcher")
    evil, marker = evil_script(repo.parent)
    other = repo.parent / "other"
    git(repo.parent, "init", "-q", str(other))
    git(other, "config", "core.fsmonitor", str(evil))
    (tree.path / ".git").write_text(f"gitdir: {other / '.git'}\n")

    manager.release(tree)

    assert not marker.exists()

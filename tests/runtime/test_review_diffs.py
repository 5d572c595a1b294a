"""Diffs from git (``app.runtime.review.diffs``): an edit request's change, a teammate's work
so far (worktree or project), binary and large files in one line, and a worktree whose ``.git``
file a teammate pointed at a config that runs a program is refused without running it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from app.runtime.review import diffs
from app.runtime.review.diffs import ReviewError, proposed_diff, work_diff


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / "a.txt").write_text("one\ntwo\nthree\n")
    (folder / "blob.bin").write_bytes(b"\0\1\2")
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "start")
    return folder


def test_edit_write_and_multiedit_diffs(repo: Path) -> None:
    change = {"file_path": "a.txt", "old_string": "two", "new_string": "2"}
    edit = proposed_diff("Edit", change, repo)
    assert edit is not None and edit.text.splitlines()[1:] == [" one", "-two", "+2", " three"]
    multi = proposed_diff(
        "MultiEdit",
        {"file_path": str(repo / "a.txt"), "edits": [
            {"old_string": "one", "new_string": "1"}, {"old_string": "three", "new_string": "3"}
        ]},
        repo,
    )  # fmt: skip
    assert multi is not None and multi.path == "a.txt" and (multi.added, multi.removed) == (2, 2)
    new = proposed_diff("Write", {"file_path": "b/c.py", "content": "x = 1\n"}, repo)
    assert new is not None and new.new and new.text.endswith("+x = 1")
    assert proposed_diff("Bash", {"command": "ls"}, repo) is None
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"  # read, never written
    assert not (repo / "b").exists()


def test_what_is_not_shown_is_said_in_one_line(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = {"file_path": "a.txt", "old_string": "zz", "new_string": ""}
    wrong = proposed_diff("Edit", missing, repo)
    assert wrong is not None and wrong.note == "old_string is not in the file: the edit would fail"
    binary = proposed_diff("Write", {"file_path": "blob.bin", "content": "text"}, repo)
    assert binary is not None and binary.note == "binary file: not shown"
    monkeypatch.setattr(diffs, "MAX_FILE_BYTES", 5)
    large = proposed_diff("Write", {"file_path": "a.txt", "content": "x"}, repo)
    assert large is not None and large.note == "large file (0 KB): not shown"
    assert large.summary == "a.txt (large file (0 KB): not shown)"


def test_work_so_far_in_the_project(repo: Path) -> None:
    (repo / "a.txt").write_text("one\nTWO\nthree\n")
    (repo / "blob.bin").write_bytes(b"\0\3")
    (repo / "new.md").write_text("hello\n")
    found = {f.path: f for f in work_diff(repo, since=None)}
    assert sorted(found) == ["a.txt", "blob.bin", "new.md"]
    assert found["a.txt"].summary == "a.txt (+1 -1)"
    assert found["blob.bin"].note == "binary file: not shown"
    assert found["new.md"].new and found["new.md"].text.endswith("+hello")
    # since a time before every commit: the whole history counts as the work
    assert {f.path for f in work_diff(repo, since=1.0)} == {"a.txt", "blob.bin", "new.md"}


def test_work_so_far_in_a_worktree(repo: Path, tmp_path: Path) -> None:
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "mate", str(tree))
    (tree / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    git(tree, "commit", "-qam", "four")
    (tree / "x.py").write_text("pass\n")
    base = git(repo, "rev-parse", "HEAD").strip()
    assert base
    found = work_diff(tree, since=None, project=repo)  # HEAD: uncommitted work only
    assert [f.path for f in found] == ["x.py"]
    with pytest.raises(ReviewError, match="not a git repository"):
        work_diff(tmp_path, since=None)


def test_a_worktree_pointing_elsewhere_is_refused_unrun(repo: Path, tmp_path: Path) -> None:
    """A teammate rewrites its worktree's ``.git`` to name a repository whose config runs a
    program when git reads a file (a clean filter): the diff is refused, nothing runs."""
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "mate", str(tree))
    evil = tmp_path / "evil"
    evil.mkdir()
    git(evil, "init", "-q")
    (evil / "a.txt").write_text("tracked there\n")
    git(evil, "add", "a.txt")
    git(evil, "commit", "-qm", "bait")
    proof = tmp_path / "ran"
    git(evil, "config", "filter.x.clean", f"touch {proof}; cat")
    git(evil, "config", "core.fsmonitor", f"touch {proof}; false")
    (tree / ".gitattributes").write_text("* filter=x\n")
    (tree / "a.txt").write_text("changed\n")
    (tree / ".git").write_text(f"gitdir: {evil / '.git'}\n")
    with pytest.raises(ReviewError, match="does not name a worktree of"):
        work_diff(tree, since=None, project=repo)
    assert not proof.exists()

"""``teamdeck diff AGENT [--team T]``: an agent's work so far, file by file, from git; a
worktree teammate's own changes; one-line errors for an unknown agent or team."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from app.cli import main as cli
from app.core import Home, TeamMember

JOINED = 1_767_225_600  # after the project's first commit, before the work


def git(cwd: Path, *args: str, when: int = JOINED - 3600) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": f"@{when} +0000",
        "GIT_COMMITTER_DATE": f"@{when} +0000",
    }
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home_dir, project = tmp_path / "home", tmp_path / "project"
    monkeypatch.setenv("TEAMDECK_HOME", str(home_dir))
    project.mkdir()
    git(project, "init", "-q")
    (project / "auth.py").write_text("def refresh():\n    return 0\n")
    git(project, "add", ".")
    git(project, "commit", "-qm", "start")
    # the teammate's commit after it joined counts; so do uncommitted and untracked files
    (project / "auth.py").write_text("def refresh():\n    return 1\n")
    git(project, "commit", "-qam", "one", when=JOINED + 60)
    (project / "notes.md").write_text("# notes\x1b[31m\n")
    (project / "blob.bin").write_bytes(b"\0\1")
    home = Home(home_dir)
    home.teams.create("alpha", cwd=str(project))
    member = TeamMember(
        agent_id="writer@alpha", name="writer", joined_at=JOINED * 1000, cwd=str(project)
    )
    home.teams.add_member("alpha", member)
    return home_dir, project


def test_diff_prints_the_agents_work_file_by_file(
    team: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["diff", "writer"]) == 0
    out = capsys.readouterr().out
    assert (
        "=== auth.py (+1 -1)\n@@ -1,2 +1,2 @@\n def refresh():\n-    return 0\n+    return 1\n"
        in out
    )
    assert "=== blob.bin (binary file: not shown)\n" in out
    assert "=== notes.md (new, +1 -0)\n@@ -0,0 +1 @@\n+# notes\\x1b[31m\n" in out  # no raw ESC
    assert cli.main(["diff", "writer", "--team", "alpha", "--json"]) == 0
    files = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["added"], f["removed"], f["note"]) for f in files] == [
        ("auth.py", 1, 1, None), ("blob.bin", 0, 0, "binary file: not shown"),
        ("notes.md", 1, 0, None),
    ]  # fmt: skip


def test_diff_errors_are_one_line(
    team: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["diff", "nobody"]) == 1
    assert capsys.readouterr().err == "teamdeck: error: no member 'nobody' in team 'alpha'\n"
    assert cli.main(["diff", "writer", "--team", "beta"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("teamdeck: error: ") and err.count("\n") == 1


def test_a_worktree_teammate_is_diffed_against_the_leads_project(
    team: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The project is the lead's folder: a worktree whose .git file the teammate pointed
    elsewhere is refused, even though the teammate's own cwd is that worktree."""
    home_dir, project = team
    tree = tmp_path / "wt"
    git(project, "worktree", "add", "-q", "-b", "mate", str(tree))
    (tree / "x.py").write_text("pass\n")
    home = Home(home_dir)
    mate = TeamMember(
        agent_id="mate@alpha", name="mate", joined_at=JOINED * 1000, cwd=str(tree),
        worktree_path=str(tree),
    )  # fmt: skip
    home.teams.add_member("alpha", mate)
    assert cli.main(["diff", "mate"]) == 0
    assert "=== x.py (new, +1 -0)" in capsys.readouterr().out
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    (tree / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    assert cli.main(["diff", "mate"]) == 1
    assert "does not name a worktree of" in capsys.readouterr().err

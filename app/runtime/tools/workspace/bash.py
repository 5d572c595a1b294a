"""Bash, and the environment of the commands teamdeck starts.

Bash cannot be confined: it runs in the cwd and relies on the permission layer. It runs through
``asyncio.create_subprocess_shell`` (bash when available) in its own process group with stdin
closed and an environment without Anthropic credentials (``ANTHROPIC_API_KEY``,
``ANTHROPIC_AUTH_TOKEN``, any other ``ANTHROPIC_*`` key/token/secret and
``CLAUDE_CODE_OAUTH_TOKEN``): the agent's commands never see the team's API key. ``child_env``
is that environment, for every process teamdeck starts (teammate processes too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from app.core.errors import TeamdeckError
from app.core.paths import LEAD_NAME
from app.runtime.permissions import is_compound_command
from app.runtime.sandbox import SandboxConfig, sandbox_env, shell_argv
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult
from app.runtime.tools.workspace.confinement import OUTPUT_MAX_CHARS, cap, str_arg

BASH_DEFAULT_TIMEOUT_MS = 120_000
BASH_MAX_TIMEOUT_MS = 600_000

#: Environment variables never passed to a Bash child (besides ANTHROPIC_* credentials).
SECRET_ENV_VARS: frozenset[str] = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}
)
_SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


# ---------------------------------------------------------------------------------- Bash


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment without Anthropic credentials (see SECRET_ENV_VARS)."""
    env = dict(os.environ if base is None else base)
    for key in list(env):
        upper = key.upper()
        if upper in SECRET_ENV_VARS or (
            upper.startswith("ANTHROPIC_") and any(m in upper for m in _SECRET_MARKERS)
        ):
            del env[key]
    return env


#: Claude Code's teammate variables (seed 001); set from the agent running the command.
TEAMMATE_ENV_VARS: frozenset[str] = frozenset(
    {
        "CLAUDE_CODE_TEAM_NAME",
        "CLAUDE_CODE_AGENT_ID",
        "CLAUDE_CODE_AGENT_NAME",
        "CLAUDE_CODE_AGENT_TYPE",
        "CLAUDE_CODE_PLAN_MODE_REQUIRED",
    }
)


def _command_env(agent: dict[str, str] | None) -> dict[str, str]:
    """The environment of a command: teamdeck's without credentials; with an agent's
    variables, none of the teammate variables teamdeck itself inherited (e.g. when started
    from inside a Claude Code teammate) is left behind to misname the agent."""
    env = child_env()
    if agent is not None:
        for key in TEAMMATE_ENV_VARS - agent.keys():
            env.pop(key, None)
        env.update(agent)
    return env


def agent_env(ctx: ToolContext) -> dict[str, str]:
    """Claude Code's teammate variables for a command run by ``ctx.agent`` (seed 001: e.g.
    ``CLAUDE_CODE_PLAN_MODE_REQUIRED`` is ``"true"``/``"false"``). What the identity does not
    carry comes from the agent's entry in the team config."""
    agent = ctx.agent
    team = agent.team or (ctx.services.current_team() if ctx.services else None)
    member = None
    if team and (agent.agent_type is None or agent.plan_mode_required is None):
        with contextlib.suppress(TeamdeckError, OSError):
            config = ctx.home.teams.get(team)
            members = config.members if config else []
            member = next((m for m in members if m.name == agent.name), None)
    agent_type = agent.agent_type or (member.agent_type if member else None)
    plan = agent.plan_mode_required
    if plan is None:
        plan = bool(member.plan_mode_required) if member else False
    env = {
        "CLAUDE_CODE_AGENT_NAME": agent.name,
        "CLAUDE_CODE_AGENT_ID": f"{agent.name}@{team}" if team else agent.name,
        "CLAUDE_CODE_AGENT_TYPE": agent_type or (LEAD_NAME if agent.is_lead else "general-purpose"),
        "CLAUDE_CODE_PLAN_MODE_REQUIRED": "true" if plan else "false",
    }
    if team:
        env["CLAUDE_CODE_TEAM_NAME"] = team
    return env


#: First words of commands that only read (used by ``Bash.is_read_only`` for simple
#: commands; nothing with an option that can write, like ``sort -o`` or ``find -delete``).
READ_ONLY_COMMANDS: frozenset[str] = frozenset(
    {"ls", "pwd", "cat", "head", "tail", "wc", "echo", "which", "stat", "du", "df", "grep"}
)
READ_ONLY_GIT: frozenset[str] = frozenset({"status"})


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


class Bash(Tool):
    name = "Bash"
    waiting = True  # on its command: the turn's slot goes to another meanwhile
    description = (
        "Executes a shell command in your working directory and returns its output (stdout "
        "and stderr together) and exit code. timeout is in milliseconds (default "
        f"{BASH_DEFAULT_TIMEOUT_MS}, max {BASH_MAX_TIMEOUT_MS}); on timeout the command and "
        f"its children are killed. Output over {OUTPUT_MAX_CHARS} characters is truncated in "
        "the middle. There is no terminal and no stdin: do not run interactive commands. Use "
        "Read, Grep and Glob rather than cat, grep and find."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to execute"},
            "timeout": {
                "type": "number",
                "description": f"Optional timeout in milliseconds (max {BASH_MAX_TIMEOUT_MS})",
            },
            "description": {
                "type": "string",
                "description": "Clear, concise description of what this command does (5-10 words)",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    subject_kind: ClassVar[str] = "command"

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        command = tool_input.get("command")
        return command if isinstance(command, str) else None

    def is_read_only(self, tool_input: dict[str, Any]) -> bool:
        command = self.permission_subject(tool_input)
        if not command or is_compound_command(command):
            return False
        words = command.split()
        if not words:
            return False
        if words[0] == "git":
            return len(words) == 2 and words[1] in READ_ONLY_GIT
        return words[0] in READ_ONLY_COMMANDS

    def describe(self, tool_input: dict[str, Any]) -> str:
        command = self.permission_subject(tool_input) or ""
        if len(command) > 200:
            command = command[:200] + "..."
        return f"Bash({command})"

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str_arg(tool_input, "command")
        assert command is not None
        if not command.strip():
            raise ToolError("the command is empty")
        timeout_arg = tool_input.get("timeout")
        if timeout_arg is None:
            timeout_ms = BASH_DEFAULT_TIMEOUT_MS
        elif isinstance(timeout_arg, bool) or not isinstance(timeout_arg, int | float):
            raise ToolError("timeout must be a number of milliseconds")
        else:
            timeout_ms = int(timeout_arg)
            if timeout_ms <= 0:
                raise ToolError("timeout must be a positive number of milliseconds")
            timeout_ms = min(timeout_ms, BASH_MAX_TIMEOUT_MS)
        cwd = Path(ctx.agent.cwd)
        try:
            return await run_command(
                command,
                cwd,
                timeout_ms / 1000,
                agent_env(ctx),
                sandbox=ctx.sandbox,
                roots=ctx.extra_roots,
                homes=(ctx.home.root,),
            )
        except (FileNotFoundError, NotADirectoryError):
            raise ToolError(f"the working directory {cwd} does not exist") from None


async def run_command(
    command: str,
    cwd: Path,
    timeout: float,  # noqa: ASYNC109
    extra_env: dict[str, str] | None = None,
    *,
    sandbox: SandboxConfig | None = None,
    roots: Sequence[Path] = (),
    homes: Sequence[Path] = (),
) -> ToolResult:
    """Run ``command`` in a shell in ``cwd`` (own process group, no stdin, no credentials,
    ``extra_env`` added) and report its merged output (capped), exit code and any timeout.
    With a ``sandbox`` configuration the environment is its allowlist and the command runs
    inside bubblewrap (``cwd`` and ``roots`` writable, the ``homes``' keys and bridge hidden);
    where bubblewrap cannot run, ToolError in one line (fail closed) unless the configuration
    turned the sandbox off."""
    env = _command_env(extra_env)
    if sandbox is None:
        return await _run(command, None, (), cwd, timeout, env)
    env = sandbox_env(env, sandbox.pass_env)
    argv = shell_argv(command)
    refusal = sandbox.refusal()
    if refusal is not None:
        raise ToolError(refusal)
    if not sandbox.active:  # the person turned the sandbox off
        return await _run(command, argv, (), cwd, timeout, env)
    box = sandbox.sandbox(cwd, roots, homes)
    with box.launch(argv, cwd) as (wrapped, fds):
        return await _run(command, wrapped, fds, cwd, timeout, env)


async def _run(
    command: str,
    argv: list[str] | None,
    pass_fds: tuple[int, ...],
    cwd: Path,
    timeout: float,  # noqa: ASYNC109
    env: dict[str, str],
) -> ToolResult:
    """``argv`` (``None``: ``command`` in a shell) as ``run_command`` describes."""
    if argv is None:
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_shell(
                command,
                cwd=str(cwd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                start_new_session=True,
                executable=shutil.which("bash") or None,
            )
        )
    else:
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Cancelled while starting: the child may already run; kill it once it exists.
        with contextlib.suppress(Exception):
            _kill_group(await spawn)
        raise
    head = bytearray()
    tail = bytearray()
    total = 0
    keep = OUTPUT_MAX_CHARS * 4  # enough bytes for OUTPUT_MAX_CHARS // 2 characters each end

    async def pump() -> None:
        nonlocal total
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            total += len(chunk)
            room = keep - len(head)
            if room > 0:
                head.extend(chunk[:room])
                chunk = chunk[room:]
            if chunk:
                tail.extend(chunk)
                if len(tail) > keep:
                    del tail[: len(tail) - keep]

    reader = asyncio.ensure_future(pump())

    async def finish() -> None:
        await asyncio.shield(reader)
        await proc.wait()

    timed_out = False
    try:
        async with asyncio.timeout(timeout):  # not wait_for: a cancel met by the end is kept
            await finish()
    except TimeoutError:
        timed_out = True
        _kill_group(proc)
        # A child that left the process group may hold the pipe: do not wait long for it.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                await asyncio.shield(reader)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                await proc.wait()
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        if not reader.done():
            reader.cancel()
            # The pipe is still held (by a child that escaped the group): let it go.
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
        with contextlib.suppress(BaseException):
            await reader

    half = OUTPUT_MAX_CHARS // 2
    truncated = False
    if total == len(head) + len(tail):
        output, truncated = cap(bytes(head + tail).decode("utf-8", "replace"))
    else:
        truncated = True
        head_text = bytes(head).decode("utf-8", "replace")[:half]
        tail_text = bytes(tail).decode("utf-8", "replace")[-half:]
        output = (
            f"{head_text}\n\n... [output truncated: {total} bytes in all, the middle was "
            f"omitted] ...\n\n{tail_text}"
        )
    output = output.rstrip("\n")
    code = proc.returncode
    notes = []
    if timed_out:
        notes.append(f"Command timed out after {timeout:g}s and was killed.")
    elif code:
        notes.append(f"Exit code: {code}")
    text = output if output else "(no output)"
    if notes:
        text += "\n\n" + "\n".join(notes)
    data = {"exit_code": code, "timed_out": timed_out, "truncated": truncated}
    return ToolResult(text, is_error=timed_out or bool(code), data=data)

"""Running Claude Code's team hooks (``TeammateIdle``, ``TaskCreated``, ``TaskCompleted``).

A hook is a shell command from the settings files (``settings.HookCommand``). It gets the
event as one JSON object on stdin, with Claude Code's field names::

    {"hook_event_name": "TaskCompleted", "session_id": "...", "cwd": "/repo",
     "permission_mode": "default", "team_name": "my-team", "teammate_name": "researcher",
     "task_id": "3", "task_subject": "...", "task_description": "..."}

How it ends decides what happens (as in Claude Code):

- exit 0: fine (stdout and stderr are not shown). A JSON object on stdout with
  ``"decision": "block"`` (its ``reason`` the feedback) or ``"continue": false`` (its
  ``stopReason``) blocks like exit 2;
- exit 2: **blocks** — the task stays open / is not created, the teammate keeps working —
  and its stderr is the feedback handed to the agent;
- any other exit, a command that cannot start, or a timeout (default 60 s; the whole process
  group is killed): a warning shown to the person; nothing is blocked.

The command runs in ``cwd`` through ``/bin/sh -c`` with the process's environment minus the
API credentials (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``), plus ``CLAUDE_PROJECT_DIR``.
Its output is read into buffers of ``OUTPUT_LIMIT`` bytes (the rest is counted and dropped, so
a hook printing gigabytes costs no memory), the wait ends when the hook's shell ends (a
background child still holding its stdout does not turn a finished hook into a timeout), and
control characters are stripped before anything reaches the model or the feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.runtime.permissions.settings import DEFAULT_HOOK_TIMEOUT, HookCommand
from app.runtime.sandbox import SandboxConfig, sandbox_env

#: Environment variables a hook never sees.
SECRET_ENV: frozenset[str] = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
#: Exit status that blocks the action (stderr is the feedback).
BLOCK_EXIT = 2
#: At most this much of a hook's stdout/stderr is kept.
OUTPUT_LIMIT = 64 * 1024

Outcome = Literal["ok", "blocked", "warning"]


@dataclass(frozen=True)
class HookResult:
    """How one hook command ended."""

    command: str
    outcome: Outcome
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    message: str = ""  # the feedback (blocked) or the warning line

    @property
    def blocked(self) -> bool:
        return self.outcome == "blocked"


@dataclass(frozen=True)
class HookRun:
    """Every hook of one event: blocked if any blocked (feedback joined), plus warnings."""

    event: str
    results: list[HookResult] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return any(r.blocked for r in self.results)

    @property
    def feedback(self) -> str:
        return "\n".join(r.message for r in self.results if r.blocked and r.message)

    @property
    def warnings(self) -> list[str]:
        return [r.message for r in self.results if r.outcome == "warning"]


def hook_environment(
    cwd: Path, base: Mapping[str, str] | None = None, sandbox: SandboxConfig | None = None
) -> dict[str, str]:
    """The environment a hook runs with: ``base`` (default ``os.environ``) without the
    credentials (with a ``sandbox`` configuration: its allowlist), with ``CLAUDE_PROJECT_DIR``."""
    source = os.environ if base is None else base
    if sandbox is not None:
        env = sandbox_env(source, sandbox.pass_env)
    else:
        env = {k: v for k, v in source.items() if k not in SECRET_ENV}
    env["CLAUDE_PROJECT_DIR"] = str(cwd)
    return env


def hook_input(
    event: str,
    *,
    cwd: Path,
    team_name: str | None = None,
    teammate_name: str | None = None,
    task: Any = None,
    session_id: str = "",
    permission_mode: str = "default",
    **extra: Any,
) -> dict[str, Any]:
    """The JSON object a hook reads on stdin (``task``: anything with ``id``, ``subject`` and
    ``description``)."""
    data: dict[str, Any] = {
        "hook_event_name": event,
        "session_id": session_id,
        "transcript_path": "",
        "cwd": str(cwd),
        "permission_mode": permission_mode,
    }
    if team_name is not None:
        data["team_name"] = team_name
    if teammate_name is not None:
        data["teammate_name"] = teammate_name
    if task is not None:
        data["task_id"] = str(task.id)
        data["task_subject"] = task.subject
        data["task_description"] = task.description or ""
    data.update(extra)
    return data


#: C0 controls but tab and newline, DEL, and C1 controls: terminal escapes and the like.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: After the hook's shell ends, how long its output may still drain (a child it left
#: running may hold the pipes open for ever).
DRAIN_AFTER_EXIT = 0.5


def _text(data: bytes | bytearray) -> str:
    """Printable text of a hook's output (at most ``OUTPUT_LIMIT`` bytes of it)."""
    text = data[:OUTPUT_LIMIT].decode("utf-8", "replace").replace("\r\n", "\n")
    return _CONTROL.sub("", text).strip()


async def _read_capped(stream: asyncio.StreamReader | None, into: bytearray) -> None:
    """Read ``stream`` to its end, keeping its first ``OUTPUT_LIMIT`` bytes."""
    if stream is None:
        return
    while chunk := await stream.read(65536):
        room = OUTPUT_LIMIT - len(into)
        if room > 0:
            into += chunk[:room]


def _json_block(stdout: str) -> str | None:
    """The feedback if exit-0 stdout is a JSON object asking to block, else None."""
    if not stdout.startswith("{"):
        return None
    try:
        value = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    if value.get("decision") == "block":
        return str(value.get("reason") or "blocked by a hook")
    if value.get("continue") is False:
        return str(value.get("stopReason") or value.get("reason") or "blocked by a hook")
    return None


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run_hook(
    hook: HookCommand | str,
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    time_limit: float | None = None,
    env: Mapping[str, str] | None = None,
    sandbox: SandboxConfig | None = None,
) -> HookResult:
    """Run one hook command with ``payload`` on stdin (see the module docstring). Where the
    sandbox is wanted but bubblewrap cannot run, the hook does not run: a warning in one line
    naming the fix (fail closed)."""
    command = hook if isinstance(hook, str) else hook.command
    short = " ".join(command.split())
    if len(short) > 60:
        short = short[:57] + "..."
    refusal = sandbox.refusal() if sandbox is not None else None
    if refusal is not None:
        return HookResult(command, "warning", message=f"hook {short!r} did not run: {refusal}")
    argv = ["/bin/sh", "-c", command]
    environment = hook_environment(cwd, env, sandbox)
    if sandbox is None or not sandbox.active:
        return await _run_hook(hook, payload, argv, (), cwd, time_limit, environment)
    with sandbox.sandbox(cwd).launch(argv, cwd) as (wrapped, fds):
        return await _run_hook(hook, payload, wrapped, fds, cwd, time_limit, environment)


async def _run_hook(
    hook: HookCommand | str,
    payload: Mapping[str, Any],
    argv: list[str],
    pass_fds: tuple[int, ...],
    cwd: Path,
    time_limit: float | None,
    environment: dict[str, str],
) -> HookResult:
    command = hook if isinstance(hook, str) else hook.command
    limit = time_limit or (DEFAULT_HOOK_TIMEOUT if isinstance(hook, str) else hook.timeout)
    short = " ".join(command.split())
    if len(short) > 60:
        short = short[:57] + "..."
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=environment,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # a timeout kills the command and everything it started
            pass_fds=pass_fds,
        )
    except OSError as exc:
        return HookResult(command, "warning", message=f"hook {short!r} could not start: {exc}")
    data = (json.dumps(payload, ensure_ascii=False) + "\n").encode()
    out, err = bytearray(), bytearray()
    readers = [
        asyncio.ensure_future(_read_capped(proc.stdout, out)),
        asyncio.ensure_future(_read_capped(proc.stderr, err)),
    ]
    try:
        async with asyncio.timeout(limit):
            await _feed_and_wait(proc, data)
    except TimeoutError:
        _kill_group(proc)
        await proc.wait()
        return HookResult(command, "warning", message=f"hook {short!r} timed out after {limit:g}s")
    except asyncio.CancelledError:
        _kill_group(proc)
        raise
    finally:
        if proc.returncode is None:
            _kill_group(proc)
        # The shell has ended: what it printed is in the pipes; a child it left behind may
        # keep them open, so the reading stops after a short drain.
        await asyncio.wait(readers, timeout=DRAIN_AFTER_EXIT)
        for reader in readers:
            reader.cancel()
        _stop_reading(proc)
        await proc.wait()
    code = proc.returncode
    stdout, stderr = _text(out), _text(err)
    if code == 0:
        reason = _json_block(stdout)
        if reason is not None:
            return HookResult(command, "blocked", code, stdout, stderr, reason)
        return HookResult(command, "ok", code, stdout, stderr)
    if code == BLOCK_EXIT:
        feedback = stderr or f"blocked by the hook {short!r} (exit 2, no message)"
        return HookResult(command, "blocked", code, stdout, stderr, feedback)
    detail = stderr.splitlines()[-1] if stderr else "no message"
    how = f"exit {code}" if code is not None and code >= 0 else f"signal {-(code or 0)}"
    warning = f"hook {short!r} failed ({how}): {detail}"
    return HookResult(command, "warning", code, stdout, stderr, warning)


def _stop_reading(proc: asyncio.subprocess.Process) -> None:
    """Close this side of the hook's output pipes (a child it left may still hold the other)."""
    transport = getattr(proc, "_transport", None)
    if transport is None:
        return
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd)
        if pipe is not None:
            pipe.close()


async def _feed_and_wait(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the event to the hook's stdin (a hook that does not read it is fine) and wait
    for its shell to end."""
    if proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(data)
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.close()
    await _exited(proc)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the process itself has ended. ``Process.wait()`` also waits for its pipes to
    close, which a child it left behind can put off for ever; a pidfd (Linux) says when the
    process ends, then its exit status arrives from the child watcher."""
    pidfd: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(proc.pid)
    if pidfd is not None:
        loop = asyncio.get_running_loop()
        ended = asyncio.Event()
        try:
            loop.add_reader(pidfd, ended.set)
            await ended.wait()
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
    while proc.returncode is None:  # noqa: ASYNC110 (the watcher sets it; no event to await)
        await asyncio.sleep(0.005)


async def run_hooks(
    event: str,
    hooks: Sequence[HookCommand],
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    sandbox: SandboxConfig | None = None,
) -> HookRun:
    """Run every hook of ``event`` at once (as Claude Code does) and gather the results."""
    wanted = [h for h in hooks if h.event == event]
    if not wanted:
        return HookRun(event)
    results = await asyncio.gather(
        *(run_hook(h, payload, cwd=cwd, env=env, sandbox=sandbox) for h in wanted)
    )
    return HookRun(event, list(results))

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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.runtime.permissions.settings import DEFAULT_HOOK_TIMEOUT, HookCommand

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


def hook_environment(cwd: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a hook runs with: ``base`` (default ``os.environ``) without the
    credentials, with ``CLAUDE_PROJECT_DIR``."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in SECRET_ENV}
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


def _text(data: bytes) -> str:
    return data[:OUTPUT_LIMIT].decode("utf-8", "replace").strip()


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
) -> HookResult:
    """Run one hook command with ``payload`` on stdin (see the module docstring)."""
    command = hook if isinstance(hook, str) else hook.command
    limit = time_limit or (DEFAULT_HOOK_TIMEOUT if isinstance(hook, str) else hook.timeout)
    short = " ".join(command.split())
    if len(short) > 60:
        short = short[:57] + "..."
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=str(cwd),
            env=hook_environment(cwd, env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # a timeout kills the command and everything it started
        )
    except OSError as exc:
        return HookResult(command, "warning", message=f"hook {short!r} could not start: {exc}")
    data = (json.dumps(payload, ensure_ascii=False) + "\n").encode()
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), limit)
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


async def run_hooks(
    event: str,
    hooks: Sequence[HookCommand],
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
) -> HookRun:
    """Run every hook of ``event`` at once (as Claude Code does) and gather the results."""
    wanted = [h for h in hooks if h.event == event]
    if not wanted:
        return HookRun(event)
    results = await asyncio.gather(*(run_hook(h, payload, cwd=cwd, env=env) for h in wanted))
    return HookRun(event, list(results))

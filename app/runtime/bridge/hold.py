"""Who sent a hook event, and whether it waits for a person.

Claude Code runs hooks in the process that owns the agent (observed in 2.1.332): the lead runs
them for itself and for its in-process teammates (their stdin carries ``agent_id`` and
``agent_type``, the teammate's name); a teammate in a tmux pane is a ``claude`` process of its
own (``--agent-name``, ``--team-name`` on its command line, ``CLAUDE_PID`` names it) and runs
them itself.

What is held (answered by a person):

- every ``PermissionRequest`` (it fires only when Claude Code would ask);
- a pane teammate's ``PreToolUse`` when the call would need permission (its PermissionRequest
  hook never fires): ``ExitPlanMode`` with a plan (its plan), and Bash / Write / Edit /
  NotebookEdit / WebFetch calls that teamdeck's permission engine (``app.runtime.permissions``)
  says would ask, given the teammate's mode and the settings files' rules;
- an in-process teammate's ``ExitPlanMode`` (its ``PreToolUse`` runs in the lead's process,
  ``agent_id`` on stdin): no PermissionRequest fires for a plan and the lead approves it by
  itself once sent, so this is the one door where the person can decide it first.

Everything else is only told: no decision, at once.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.runtime.bridge.sessions import team_of_session
from app.runtime.permissions import PERMISSION_MODES, PermissionRules, Rule, decide
from app.runtime.permissions.settings import load_settings

LEAD = "team-lead"
#: Tools a pane teammate's PreToolUse may hold (those Claude Code asks about).
HELD_TOOLS = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch"})
PLAN_TOOL = "ExitPlanMode"

Hold = Literal["permission", "plan"] | None
_SUBJECT_KEYS = {"Bash": "command", "NotebookEdit": "notebook_path", "WebFetch": "url"}


@dataclass(frozen=True)
class Sender:
    """The agent a hook event is about."""

    agent: str
    team: str | None
    session_id: str
    pane: bool = False  # a teammate running in a tmux pane (its own process)
    in_process: bool = False  # a teammate in the lead's process
    pid: int | None = None  # the Claude Code process that ran the hook (``CLAUDE_PID``)


#: An in-process teammate's ``agent_id``: ``a<name>-<16 hex>`` (its ``agent_type`` is the
#: teammate's name in some runs, its ``subagent_type``, e.g. ``general-purpose``, in others).
_IN_PROCESS_ID = re.compile(r"^a(.+)-[0-9a-f]{16}$")


def _command_line(pid: str | None) -> list[str]:
    if not pid or not pid.isdigit():
        return []
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _option(args: list[str], name: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def sender(data: dict[str, Any], env: dict[str, str]) -> Sender:
    """Who the event in ``data`` (a hook's stdin) is about; ``env`` is the hook's environment."""
    session = str(data.get("session_id") or env.get("CLAUDE_CODE_SESSION_ID") or "")
    pid_text = env.get("CLAUDE_PID") or ""
    pid = int(pid_text) if pid_text.isdigit() else None
    lead_team = team_of_session(session, env.get("CLAUDE_CONFIG_DIR"))
    if data.get("agent_id"):
        named = _IN_PROCESS_ID.match(str(data["agent_id"]))
        name = str(
            data.get("teammate_name")
            or (named.group(1) if named else None)
            or data.get("agent_type")
            or data["agent_id"]
        )
        team = str(data.get("team_name") or lead_team or "")
        return Sender(name, team, session, in_process=True, pid=pid)
    args = _command_line(env.get("CLAUDE_PID"))
    pane_name = _option(args, "--agent-name")
    if pane_name:
        return Sender(pane_name, _option(args, "--team-name"), session, pane=True, pid=pid)
    return Sender(LEAD, lead_team, session, pid=pid)


@dataclass(frozen=True)
class ToolSubject:
    """A Claude Code tool as the permission engine sees it (``PermissionSubject``)."""

    name: str

    @property
    def read_only(self) -> bool:
        return False

    @property
    def edits_files(self) -> bool:
        return self.name in ("Write", "Edit", "MultiEdit", "NotebookEdit")

    @property
    def coordination(self) -> bool:
        return False

    def is_read_only(self, tool_input: dict[str, Any]) -> bool:
        return False

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        value = tool_input.get(_SUBJECT_KEYS.get(self.name, "file_path"))
        return value if isinstance(value, str) else None

    def describe(self, tool_input: dict[str, Any]) -> str:
        subject = self.permission_subject(tool_input)
        return f"{self.name}({subject})" if subject else self.name


def _rules(cwd: Path, config_dir: str | None) -> PermissionRules:
    user = Path(config_dir) if config_dir else None
    return load_settings(cwd, user_dir=user).rules


def would_ask(
    tool: str, tool_input: dict[str, Any], mode: str, cwd: Path, config_dir: str | None
) -> bool:
    """Whether Claude Code would ask a person before this call (teamdeck's engine's view)."""
    if tool not in HELD_TOOLS:
        return False
    engine_mode = mode if mode in PERMISSION_MODES else "default"
    try:
        rules = _rules(cwd, config_dir)
    except (OSError, ValueError):
        rules = PermissionRules()
    with contextlib.suppress(ValueError):
        verdict = decide(ToolSubject(tool), tool_input, engine_mode, rules, cwd)
        return verdict.behavior == "ask"  # deny: Claude Code refuses it by itself
    return True


def kept_rule_for(
    tool: str,
    tool_input: dict[str, Any],
    mode: str,
    cwd: Path,
    config_dir: str | None,
    kept: list[str],
) -> str | None:
    """The first of ``kept`` (teamdeck's own rules, ``kept_rules``) under which Claude Code's
    rules would allow this call that they alone would ask about: deny and ask rules still win."""
    engine_mode = mode if mode in PERMISSION_MODES else "default"
    try:
        rules = _rules(cwd, config_dir)
    except (OSError, ValueError):
        rules = PermissionRules()
    for text in kept:
        trial = rules.copy()
        try:
            trial.add_allow(Rule.parse(text))
            verdict = decide(ToolSubject(tool), tool_input, engine_mode, trial, cwd)
        except ValueError:
            continue
        if verdict.behavior == "allow":
            return text
    return None


def hold(event: str, data: dict[str, Any], who: Sender, env: dict[str, str]) -> Hold:
    """What a person must answer for this event, if anything (see the module docstring)."""
    if event == "PermissionRequest":
        return "permission"
    if event != "PreToolUse" or not (who.pane or who.in_process):
        return None
    tool = str(data.get("tool_name") or "")
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    if who.in_process and tool != PLAN_TOOL:
        return None  # its other calls ask through the lead's PermissionRequest hook
    if tool == PLAN_TOOL:
        # Claude Code fills ``plan`` in from the plan file; with no file yet the call fails
        # by itself ("No plan file found"): nothing for a person to read.
        return "plan" if str(tool_input.get("plan") or "").strip() else None
    cwd = Path(str(data.get("cwd") or env.get("CLAUDE_PROJECT_DIR") or "."))
    mode = str(data.get("permission_mode") or "default")
    config = env.get("CLAUDE_CONFIG_DIR")
    return "permission" if would_ask(tool, tool_input, mode, cwd, config) else None

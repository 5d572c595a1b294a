"""``teamdeck permissions check``: the decision a tool call would get, and why.

For people who want to know what a rule does before trusting it, and for tests:

    teamdeck permissions check --tool Bash --input '{"command": "git -c x=y log"}' \\
        --allow 'Bash(git:*)'
    ask: Bash(git -c x=y log) needs approval: git -c can make git run another program ...

The rules are the settings files' for the current folder (``--no-settings`` leaves them out)
plus ``--allow``/``--deny``/``--ask``; the mode is ``--mode``, else the settings' default.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.output import emit_json
from app.core.errors import TeamdeckError

if TYPE_CHECKING:
    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]


class _NamedTool:
    """A tool teamdeck does not run (``WebFetch``, an MCP tool): rules apply by its name."""

    read_only = False
    edits_files = False
    coordination = False

    def __init__(self, name: str) -> None:
        self.name = name

    def is_read_only(self, tool_input: dict[str, Any]) -> bool:
        return False

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        return None

    def describe(self, tool_input: dict[str, Any]) -> str:
        return self.name


def cmd_check(home: Home, args: argparse.Namespace) -> int:
    from app.runtime.permissions import PERMISSION_MODES, PermissionRules, decide
    from app.runtime.permissions.settings import load_settings
    from app.runtime.tools import lead_tools, teammate_tools

    try:
        tool_input = json.loads(args.input)
    except ValueError as exc:
        raise TeamdeckError(f"--input is not JSON: {exc}") from None
    if not isinstance(tool_input, dict):
        raise TeamdeckError("--input must be a JSON object (the tool's input)")
    cwd = Path(args.cwd or ".").absolute()
    settings = None if args.no_settings else load_settings(cwd)
    rules = settings.rules if settings else PermissionRules()
    for kind, texts in (("allow", args.allow), ("ask", args.ask), ("deny", args.deny)):
        for text in texts:
            getattr(rules, f"add_{kind}")(text)
    mode = args.mode or (settings.default_mode if settings else None) or "default"
    if mode not in PERMISSION_MODES:
        raise TeamdeckError(f"unknown mode {mode!r} (use {', '.join(PERMISSION_MODES)})")
    known = {tool.name: tool for tool in [*teammate_tools(), *lead_tools()]}
    tool: Any = known.get(args.tool) or _NamedTool(args.tool)
    decision = decide(tool, tool_input, mode, rules, cwd)
    rule = str(decision.rule) if decision.rule is not None else None
    if args.json:
        emit_json(
            {"decision": decision.behavior, "reason": decision.reason, "rule": rule, "mode": mode}
        )
    else:
        print(f"{decision.behavior}: {decision.reason}")
    return 0


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``permissions check``; it reads no team files."""
    group = command(commands, "permissions", "check what the permission rules decide")
    actions = group.add_subparsers(dest="permissions_command", metavar="ACTION", required=True)
    sub = command(actions, "check", "the decision for one tool call, and why", cmd_check)
    sub.add_argument("--tool", metavar="NAME", required=True, help="Bash, Write, Edit, Read...")
    sub.add_argument("--input", metavar="JSON", required=True, help="the tool's input")
    sub.add_argument("--mode", metavar="M", help="the permission mode (default: the settings')")
    sub.add_argument("--allow", metavar="RULE", action="append", default=[])
    sub.add_argument("--ask", metavar="RULE", action="append", default=[])
    sub.add_argument("--deny", metavar="RULE", action="append", default=[])
    sub.add_argument("--cwd", metavar="DIR", help="the agent's folder (default: here)")
    sub.add_argument("--no-settings", action="store_true", help="leave the settings files out")
    sub.add_argument("--json", action="store_true", help="print JSON")
    return set()

"""The rules "always allow" offers for a Claude Code request: Claude Code's own choices.

Claude Code's prompt offers, for a shell command, that exact command or its prefix, and for a
file tool, the file's directory. teamdeck offers the same, each as the rule it adds, spelled as
Claude Code's settings spell it (observed in 2.1.332):

- ``Bash(<the command>)``: this exact command;
- ``Bash(<prefix>:*)``: commands that start with it (Claude Code's own ``addRules`` suggestion
  when it sent one, else teamdeck's, e.g. ``Bash(touch:*)``);
- ``Edit(//<dir>/**)`` (``Read(...)`` for Read): files in that directory and below. ``//`` is
  Claude Code's absolute path (a single ``/`` is relative to the settings file): a path outside
  the project is not asked again once this rule is added (an ``Edit`` rule covers Write,
  MultiEdit and NotebookEdit too, as in Claude Code);
- any other tool: Claude Code's suggestion, else teamdeck's (``WebFetch(domain:...)``), else the
  tool's name.

Each choice is ``(rule, words)``; the default (the one ``A`` adds unless the person picks
another) is the prefix for a command, the directory for a file tool.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from app.runtime.bridge.hold import ToolSubject
from app.runtime.permissions import suggest_rule

Choice = tuple[str, str]
#: Tools whose input names a file: the directory choice.
FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Read"})
_PATH_KEYS = ("file_path", "notebook_path")


def claude_suggestion(data: dict[str, Any]) -> str | None:
    """Claude Code's own ``addRules`` suggestion in a PermissionRequest's stdin, as a rule."""
    for suggestion in data.get("permission_suggestions") or []:
        if isinstance(suggestion, dict) and suggestion.get("type") == "addRules":
            for rule in suggestion.get("rules") or []:
                if isinstance(rule, dict) and isinstance(rule.get("toolName"), str):
                    content = rule.get("ruleContent")
                    return f"{rule['toolName']}({content})" if content else rule["toolName"]
    return None


def directory_rule(tool: str, path: str, cwd: Path) -> tuple[str, str]:
    """``("Edit(//abs/dir/**)", "/abs/dir")`` for a file tool's ``path``."""
    base = Path(os.path.expanduser(path))
    if not base.is_absolute():
        base = cwd / base
    full = Path(os.path.normpath(base))
    directory = full if full.is_dir() else full.parent
    family = "Read" if tool == "Read" else "Edit"
    text = directory.as_posix().rstrip("/")
    return f"{family}(/{text}/**)", text or "/"


def rule_choices(data: dict[str, Any], tool: str, tool_input: dict[str, Any]) -> list[Choice]:
    """The rules to offer, the default first (see the module docstring)."""
    cwd = Path(str(data.get("cwd") or "."))
    own = claude_suggestion(data)
    choices: list[Choice] = []
    command = tool_input.get("command")
    if tool == "Bash" and isinstance(command, str) and command.strip():
        try:
            prefix = suggest_rule(ToolSubject(tool), tool_input, cwd)
        except (OSError, ValueError):
            prefix = None
        exact = f"Bash({command.strip()})"
        for rule in (own, prefix):
            if rule and rule.startswith("Bash(") and rule.endswith(":*)"):
                choices.append((rule, "commands that start the same way"))
                break
        choices.append((exact, "this exact command"))
        if own and all(own != rule for rule, _ in choices):
            choices.append((own, "Claude Code's suggestion"))
        return choices
    path = next((tool_input[k] for k in _PATH_KEYS if isinstance(tool_input.get(k), str)), None)
    if tool in FILE_TOOLS and path:
        rule, directory = directory_rule(tool, path, cwd)
        choices.append((rule, f"files in {directory} and below"))
        if own and own != rule:
            choices.append((own, "Claude Code's suggestion"))
        return choices
    if own:
        return [(own, "Claude Code's suggestion")]
    try:
        return [(suggest_rule(ToolSubject(tool), tool_input, cwd), "teamdeck's suggestion")]
    except (OSError, ValueError):
        return [(tool, "every call of this tool")] if tool else []

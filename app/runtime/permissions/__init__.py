"""Permission modes and allow/ask/deny rules (Claude Code's syntax and semantics).

One idea per module:

- :mod:`~app.runtime.permissions.modes`: the modes and the tools each one offers;
- :mod:`~app.runtime.permissions.rules`: a rule (``Tool`` / ``Tool(pattern)``), what it
  matches, and the allow/ask/deny lists;
- :mod:`~app.runtime.permissions.paths` and :mod:`~app.runtime.permissions.shell`: how a
  rule's pattern meets a path (globs, symlinks) or a shell command (compound commands);
- :mod:`~app.runtime.permissions.decision`: allow, deny or ask for one tool call (the order
  is in that module's docstring), the rule "always allow" adds, and the extra roots allow
  rules open.

Everything public is importable from here.
"""

from app.runtime.permissions.decision import (
    Behavior,
    Decision,
    allowed_roots,
    decide,
    suggest_rule,
)
from app.runtime.permissions.modes import (
    DELEGATE_ALLOWED_TOOLS,
    PERMISSION_MODES,
    PermissionMode,
    parse_mode,
    tools_for_mode,
)
from app.runtime.permissions.paths import compile_glob, is_inside
from app.runtime.permissions.rules import (
    FILE_TOOL_NAMES,
    PermissionRules,
    Rule,
    RulesFeed,
    SubjectKind,
    subject_kind,
)
from app.runtime.permissions.shell import command_parts, is_compound_command, split_command

__all__ = [
    "DELEGATE_ALLOWED_TOOLS",
    "FILE_TOOL_NAMES",
    "PERMISSION_MODES",
    "Behavior",
    "Decision",
    "PermissionMode",
    "PermissionRules",
    "Rule",
    "RulesFeed",
    "SubjectKind",
    "allowed_roots",
    "command_parts",
    "compile_glob",
    "decide",
    "is_compound_command",
    "is_inside",
    "parse_mode",
    "split_command",
    "subject_kind",
    "suggest_rule",
    "tools_for_mode",
]

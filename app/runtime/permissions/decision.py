"""The decision for one tool call: allow, deny or ask, and what "always allow" would add.

Decision order (``decide``)
---------------------------
1. ``delegate`` mode: a tool outside ``DELEGATE_ALLOWED_TOOLS`` is denied (it is not even
   offered to the model, see ``tools_for_mode``).
2. A matching deny rule denies. Deny always wins, even over coordination tools and bypass;
   a command a deny rule cannot see through (inline code, ``eval``, ``git -c``...: see 7) is
   denied in ``bypassPermissions`` and ``dontAsk`` while deny rules for its tool exist.
3. Coordination tools (SendMessage, Task*, Team*...) are allowed.
4. ``bypassPermissions`` allows everything else.
5. ``plan`` mode denies every tool that is not read-only for this input
   (``tool.is_read_only(input)``), telling the model to call ExitPlanMode and wait.
6. A matching ask rule asks. So does a search (Glob, Grep: a read-only path tool on a
   directory) over a directory containing a path a deny rule protects: the search would read
   through it, so it is never allowed without the person.
7. A matching allow rule allows, except for a call that runs code or writes what configures
   code to run (``caution``: ``git -c``, ``python3 -c``, ``find -delete``, a write to
   ``.claude/``, ``.git/``...): only an allow rule naming it exactly allows that one.
8. A read-only file tool on a path inside the cwd (or an extra root) is allowed.
9. ``acceptEdits``: an ``edits_files`` tool on a path inside the cwd (or an extra root) is
   allowed (one without a path asks), unless it writes a protected path (7).
10. Everything else asks; in ``dontAsk`` mode every "ask" (from 6, 7 or 10) becomes a deny
    ("not pre-approved").

A path outside the cwd and the extra roots is never allowed automatically: only an allow rule
(or the person answering the ask) can allow it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from app.runtime.permissions.caution import command_caution, protected_name
from app.runtime.permissions.modes import DELEGATE_ALLOWED_TOOLS, PERMISSION_MODES, PermissionMode
from app.runtime.permissions.paths import is_inside, path_candidates, split_path_pattern
from app.runtime.permissions.rules import FILE_TOOL_NAMES, PermissionRules, Rule, subject_kind
from app.runtime.permissions.shell import is_compound_command

if TYPE_CHECKING:
    from app.runtime.permissions.subject import PermissionSubject

Behavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class Decision:
    behavior: Behavior
    reason: str
    rule: Rule | None = None

    @property
    def allowed(self) -> bool:
        return self.behavior == "allow"


# ---------------------------------------------------------------------------------- decide


def _subject_path_inside(
    tool: PermissionSubject, tool_input: dict[str, Any], cwd: Path, extra_roots: Sequence[Path]
) -> bool:
    if subject_kind(tool) != "path":
        return False
    subject = tool.permission_subject(tool_input)
    if subject is None:
        return False
    roots = [cwd, *extra_roots]
    return all(is_inside(c, roots) for c in path_candidates(subject, cwd))


def _denied_inside_search(
    tool: PermissionSubject, tool_input: dict[str, Any], rules: PermissionRules, cwd: Path
) -> tuple[Rule, str] | None:
    """For a search over a directory (Glob, Grep): a deny rule protecting something below
    that directory (the search would read through it), with the protected prefix."""
    if subject_kind(tool) != "path" or not tool.read_only or not rules.deny:
        return None
    subject = tool.permission_subject(tool_input)
    if subject is None:
        return None
    searched = [Path(c) for c in path_candidates(subject, cwd) if os.path.isdir(c)]
    if not searched:
        return None
    for rule in rules.deny:
        if rule.pattern is None or not rule.applies_to(tool):
            continue
        prefix = split_path_pattern(rule.pattern, cwd)[0]
        for form in {prefix, os.path.realpath(prefix)}:
            protected = Path(form)
            if any(protected == d or d in protected.parents for d in searched):
                return rule, form
    return None


@dataclass(frozen=True)
class Caution:
    """Why a call asks whatever a broad rule says, and the protected name it writes (if any)."""

    reason: str
    protected: str | None = None

    def overridden_by(self, rule: Rule) -> bool:
        """Whether ``rule`` names this very call: an exact command rule (no prefix, no
        wildcard: ``Bash(*)`` is as broad as ``Bash``), or a path rule whose pattern names the
        protected file or folder."""
        if rule.pattern is None:
            return False
        if self.protected is None:
            return not rule.is_prefix and not any(c in rule.pattern for c in "*?[")
        return self.protected in rule.pattern


def caution(tool: PermissionSubject, tool_input: dict[str, Any], cwd: Path) -> Caution | None:
    """The :class:`Caution` of one call (see :mod:`app.runtime.permissions.caution`)."""
    kind = subject_kind(tool)
    subject = tool.permission_subject(tool_input)
    if subject is None:
        return None
    if kind == "command":
        reason = command_caution(subject)
        return Caution(reason) if reason else None
    if kind == "path" and tool.edits_files:
        for candidate in path_candidates(subject, cwd):
            name = protected_name(candidate, str(cwd))
            if name is not None:
                return Caution(f"it writes {name}, which configures code to run", name)
    return None


def _hidden_from_deny_rules(
    tool: PermissionSubject, tool_input: dict[str, Any], rules: PermissionRules, cwd: Path
) -> str | None:
    """Why a command that deny rules for its tool cannot see through (inline code, ``git -c``
    ...) must not run unasked; ``None`` when there are no such rules or nothing is hidden."""
    if subject_kind(tool) != "command" or not any(r.applies_to(tool) for r in rules.deny):
        return None
    subject = tool.permission_subject(tool_input)
    return command_caution(subject, hidden_only=True) if subject else None


def decide(
    tool: PermissionSubject,
    tool_input: dict[str, Any],
    mode: PermissionMode,
    rules: PermissionRules,
    cwd: Path,
    extra_roots: Sequence[Path] = (),
) -> Decision:
    """Allow, deny or ask for one tool call (the order is in the module docstring)."""
    if mode not in PERMISSION_MODES:
        raise ValueError(f"unknown permission mode {mode!r} (use {', '.join(PERMISSION_MODES)})")
    what = tool.describe(tool_input)
    if mode == "delegate" and tool.name not in DELEGATE_ALLOWED_TOOLS:
        return Decision(
            "deny",
            f"{tool.name} is not available in delegate mode: only "
            f"{', '.join(sorted(DELEGATE_ALLOWED_TOOLS))} may be used. Coordinate through "
            "tasks and teammates instead.",
        )
    for rule in rules.deny:
        if rule.matches(tool, tool_input, cwd, any_part=True):
            return Decision("deny", f"{what} is denied by the rule {rule}", rule)
    if tool.coordination:
        return Decision("allow", f"{tool.name} is a coordination tool")
    unseen = _hidden_from_deny_rules(tool, tool_input, rules, cwd)
    if unseen is not None and mode in ("bypassPermissions", "dontAsk"):
        return Decision("deny", f"{what} cannot be checked against the deny rules: {unseen}")
    if mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode")
    if mode == "plan" and not tool.is_read_only(tool_input):
        return Decision(
            "deny",
            f"You are in plan mode: {what} is not read-only and cannot run until your plan is "
            "approved. Finish the plan, call ExitPlanMode with it and wait for approval.",
        )
    decision: Decision | None = None
    shadow = _denied_inside_search(tool, tool_input, rules, cwd)
    if shadow is not None:
        decision = Decision(
            "ask",
            f"{what} searches a directory that contains {shadow[1]}, which the rule "
            f"{shadow[0]} denies; it needs approval",
            shadow[0],
        )
    for rule in rules.ask if decision is None else ():
        if rule.matches(tool, tool_input, cwd, any_part=True):
            decision = Decision("ask", f"{what} needs approval (rule {rule})", rule)
            break
    careful = caution(tool, tool_input, cwd) if decision is None else None
    if decision is None:
        for rule in rules.allow:
            if rule.matches(tool, tool_input, cwd):
                if careful is not None and not careful.overridden_by(rule):
                    decision = Decision(
                        "ask", f"{what} needs approval: {careful.reason} (rule {rule})", rule
                    )
                    break
                return Decision("allow", f"{what} is allowed by the rule {rule}", rule)
    if decision is None:
        inside = _subject_path_inside(tool, tool_input, cwd, extra_roots)
        if careful is not None:
            decision = Decision("ask", f"{what} needs approval: {careful.reason}")
        elif inside and tool.is_read_only(tool_input):
            return Decision("allow", "read-only access inside the working directory")
        elif inside and mode == "acceptEdits" and tool.edits_files:
            return Decision("allow", "acceptEdits mode: file edit inside the working directory")
        elif subject_kind(tool) == "path" and not inside:
            reason = f"{what} is outside the working directory {cwd} and needs approval"
            decision = Decision("ask", reason)
        else:
            decision = Decision("ask", f"{what} needs approval")
    if mode == "dontAsk":
        return Decision(
            "deny",
            f"{what} was not pre-approved (dontAsk mode denies anything that would ask)",
            decision.rule,
        )
    return decision


# ---------------------------------------------------------------------------------- helpers


def suggest_rule(
    tool: PermissionSubject, tool_input: dict[str, Any], cwd: Path | None = None
) -> str:
    """The rule an "always allow" answer should add: ``Bash(git:*)`` for a simple command
    (the exact command for a compound one), ``Edit(src/**)``/``Read(src/**)`` for file tools
    (the file's directory; relative to ``cwd`` when inside it), the bare tool name otherwise."""
    kind = subject_kind(tool)
    subject = tool.permission_subject(tool_input)
    if kind == "command" and subject and subject.strip():
        command = subject.strip()
        if is_compound_command(command):
            return f"{tool.name}({command})"
        words = command.split()
        return f"{tool.name}({words[0]}:*)"
    if kind == "path" and subject:
        family = "Edit" if tool.edits_files else "Read" if tool.read_only else tool.name
        base = Path(os.path.expanduser(subject))
        if not base.is_absolute():
            base = (cwd or Path.cwd()) / base
        path = Path(os.path.normpath(base))
        directory = path if path.is_dir() else path.parent
        if cwd is not None:
            root = Path(os.path.normpath(cwd.absolute()))
            if directory == root:
                return f"{family}(./**)"
            if root in directory.parents:
                return f"{family}({directory.relative_to(root).as_posix()}/**)"
        text = directory.as_posix().rstrip("/")
        return f"{family}({text}/**)"
    return tool.name


def allowed_roots(rules: PermissionRules, cwd: Path) -> tuple[Path, ...]:
    """Directories (or files) that allow rules for file tools open outside the cwd: the
    literal part of each pattern (``Read(~/notes/**)`` -> ``~/notes``). Pass them as the
    tools' ``extra_roots`` so the tools' own confinement lets an allowed path through (the
    permission check still decides each call)."""
    cwd_abs = Path(os.path.normpath(cwd.absolute()))
    roots: list[Path] = []
    for rule in rules.allow:
        if rule.pattern is None or rule.pattern == "*":
            continue
        if rule.tool not in FILE_TOOL_NAMES:
            continue
        root = Path(split_path_pattern(rule.pattern, cwd)[0])
        if root != cwd_abs and cwd_abs not in root.parents and root not in roots:
            roots.append(root)
    return tuple(roots)

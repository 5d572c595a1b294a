"""Allow/ask/deny rules: ``Tool`` or ``Tool(pattern)`` (Claude Code's syntax and semantics).

A rule is ``Tool`` or ``Tool(pattern)``:

- ``Read``, ``Bash``: the whole tool, whatever its input.
- ``Bash(git:*)``: a *prefix* rule. Matches a simple command whose first words are ``git``
  (followed by whitespace or the end): ``git status`` yes, ``gitk`` no. ``Bash(npm run:*)``
  compares the first two words.
- ``Bash(npm test)``: an *exact* rule, the whole command (surrounding whitespace ignored).
- ``Edit(src/**)``, ``Read(~/**)``, ``Write(/abs/path/*)``: a glob on the (absolute) path of a
  file tool. Relative patterns are relative to the agent's cwd; a pattern with no ``/`` at all
  (``*.env``) matches at any depth below the cwd, as in ``.gitignore``; ``~`` expands; ``*``
  and ``?`` stay within one path segment, ``**`` crosses directories, ``dir/**`` also matches
  ``dir`` itself, a trailing ``/`` means ``/**``, ``//abs`` is accepted for ``/abs``.
  A path is matched both as written (normalised) and with symlinks resolved: a deny or ask
  rule matches if either form does; an allow rule only if both do, so a symlink cannot carry
  an allowed path somewhere else.
- ``Edit`` rules also cover the other file-editing tools (``Write``, any ``edits_files`` tool)
  and ``Read`` rules the read-only file tools (``Glob``, ``Grep``), as in Claude Code.

Compound shell commands: a prefix or exact rule never matches a command containing ``;``,
``&&``, ``||``, ``|``, a background ``&``, ``$(``, backticks, ``<``/``>`` redirection,
``(``/``)`` or a newline outside quotes (quote-aware: ``git commit -m "a; b"`` is simple,
``git log "$(rm x)"`` is not; an unterminated quote counts as compound). The one exception is
an exact rule whose own pattern is that very compound command, character for character (what
"always allow" suggests for a compound command): nothing can be chained onto it. Deny and ask
rules are checked against every part of a compound command as well (split on the operators,
inside ``$(...)``/backticks and ``sh -c '...'``, after stripping ``VAR=x``, ``sudo``, ``env``,
``command``... and a directory on the command name), so chaining cannot bypass them. That
split errs towards matching; it is best effort (``find -exec rm`` is still ``find``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from app.runtime.permissions.paths import path_candidates, path_pattern_regexes
from app.runtime.permissions.shell import command_parts, is_compound_command, prefix_matches

if TYPE_CHECKING:
    from app.runtime.permissions.subject import PermissionSubject

SubjectKind = Literal["command", "path", "text"]
#: Built-in tools whose subject is a path (tools may also say so with a ``subject_kind``).
FILE_TOOL_NAMES: frozenset[str] = frozenset(
    {"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"}
)
_COMMAND_TOOL_NAMES: frozenset[str] = frozenset({"Bash"})


def subject_kind(tool: PermissionSubject) -> SubjectKind | None:
    """What ``tool.permission_subject`` returns: a shell command, a path, other text, or
    ``None`` for a tool without a subject (a class may set ``subject_kind`` explicitly)."""
    kind = getattr(tool, "subject_kind", None)
    if kind in ("command", "path", "text"):
        return kind  # type: ignore[no-any-return]
    if tool.name in _COMMAND_TOOL_NAMES:
        return "command"
    if tool.name in FILE_TOOL_NAMES:
        return "path"
    return None


_RULE_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.\-]*)(?:\((.*)\))?$", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """One permission rule: a tool name and an optional pattern (see the module docstring)."""

    tool: str
    pattern: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        """``Read``, ``Bash(git:*)``, ``Bash(npm test)``, ``Edit(src/**)``...; ValueError for
        anything else."""
        if not isinstance(text, str):
            raise ValueError(f"a permission rule must be a string, not {type(text).__name__}")
        stripped = text.strip()
        match = _RULE_RE.match(stripped)
        if not match:
            raise ValueError(
                f"invalid permission rule {text!r}: expected Tool or Tool(pattern), "
                "e.g. Read, Bash(git:*), Edit(src/**)"
            )
        name, pattern = match.group(1), match.group(2)
        if pattern is not None:
            if not pattern.strip():
                raise ValueError(
                    f"invalid permission rule {text!r}: empty pattern (write just {name!r} "
                    "for the whole tool)"
                )
            if pattern.endswith(":*") and not pattern[:-2].strip():
                raise ValueError(f"invalid permission rule {text!r}: empty command prefix")
        return cls(name, pattern)

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    @property
    def is_prefix(self) -> bool:
        return self.pattern is not None and self.pattern.endswith(":*")

    def applies_to(self, tool: PermissionSubject) -> bool:
        """Whether the rule names this tool (``Edit`` covers every file-editing tool and
        ``Read`` every read-only file tool)."""
        if self.tool == tool.name:
            return True
        if self.tool == "Edit" and tool.edits_files:
            return True
        return self.tool == "Read" and tool.read_only and subject_kind(tool) == "path"

    def matches(
        self,
        tool: PermissionSubject,
        tool_input: dict[str, Any],
        cwd: Path,
        *,
        any_part: bool = False,
    ) -> bool:
        """Whether the rule covers this call. ``any_part`` (deny and ask rules): a compound
        command matches if any of its parts does; a path if any of its forms does."""
        if not self.applies_to(tool):
            return False
        if self.pattern is None or self.pattern == "*":
            return True
        subject = tool.permission_subject(tool_input)
        if subject is None:
            return False
        kind = subject_kind(tool) or "text"
        if kind == "command":
            return self._matches_command(subject, any_part=any_part)
        if kind == "path":
            regexes = path_pattern_regexes(self.pattern, cwd)
            candidates = path_candidates(subject, cwd)
            hits = [any(rx.fullmatch(c) for rx in regexes) for c in candidates]
            return any(hits) if any_part else all(hits)
        if self.is_prefix:
            return subject.startswith(self.pattern[:-2])
        return fnmatch.fnmatchcase(subject, self.pattern)

    def _matches_command(self, command: str, *, any_part: bool) -> bool:
        assert self.pattern is not None
        if any_part:
            return any(self._matches_simple(part) for part in command_parts(command))
        command = command.strip()
        if is_compound_command(command):
            # Only an exact rule that is this very compound command (nothing chained on).
            return not self.is_prefix and command == self.pattern.strip()
        return self._matches_simple(command)

    def _matches_simple(self, command: str) -> bool:
        assert self.pattern is not None
        if self.is_prefix:
            return prefix_matches(self.pattern[:-2], command)
        return command.strip() == self.pattern.strip()


def _as_rule(rule: Rule | str) -> Rule:
    return rule if isinstance(rule, Rule) else Rule.parse(rule)


@dataclass
class PermissionRules:
    """Allow, ask and deny rules (strings are parsed)."""

    allow: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.allow = [_as_rule(r) for r in self.allow]
        self.ask = [_as_rule(r) for r in self.ask]
        self.deny = [_as_rule(r) for r in self.deny]

    @classmethod
    def from_strings(
        cls, allow: Iterable[str] = (), ask: Iterable[str] = (), deny: Iterable[str] = ()
    ) -> PermissionRules:
        """Rules from their text (settings files, CLI flags); ValueError for a bad one."""
        return cls(
            [Rule.parse(r) for r in allow],
            [Rule.parse(r) for r in ask],
            [Rule.parse(r) for r in deny],
        )

    @staticmethod
    def _add(rules: list[Rule], rule: Rule | str) -> Rule:
        parsed = _as_rule(rule)
        if parsed not in rules:
            rules.append(parsed)
        return parsed

    def add_allow(self, rule: Rule | str) -> Rule:
        return self._add(self.allow, rule)

    def add_ask(self, rule: Rule | str) -> Rule:
        return self._add(self.ask, rule)

    def add_deny(self, rule: Rule | str) -> Rule:
        return self._add(self.deny, rule)

    def copy(self) -> PermissionRules:
        return PermissionRules(list(self.allow), list(self.ask), list(self.deny))

    def rebase(self, was: PermissionRules, now: PermissionRules) -> None:
        """The rules these follow (the run's) went from ``was`` to ``now``: drop what ``now``
        dropped, add what it added; a rule of their own (never in ``was``) stays."""
        for kind in ("allow", "ask", "deny"):
            into: list[Rule] = getattr(self, kind)
            old: list[Rule] = getattr(was, kind)
            new: list[Rule] = getattr(now, kind)
            into[:] = [r for r in into if r in new or r not in old] + [
                r for r in new if r not in into
            ]


class RulesFeed:
    """An agent's rules following the run's as the person changes them (accepted settings,
    an "always allow" answer): ``refresh`` before each tool call is decided takes what changed
    since the last one (:meth:`PermissionRules.rebase`). ``source`` is cheap when nothing
    changed (the rules of the same process; for a teammate process, a ``stat`` of the lead's
    snapshot file)."""

    def __init__(self, source: Callable[[], PermissionRules]) -> None:
        self.source = source
        self.seen = source().copy()

    def refresh(self, rules: PermissionRules) -> bool:
        """Bring ``rules`` up to date; whether anything changed."""
        now = self.source()
        if now == self.seen:
            return False
        rules.rebase(self.seen, now)
        self.seen = now.copy()
        return True

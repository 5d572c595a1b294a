"""Permission modes and allow/ask/deny rules (Claude Code's syntax and semantics).

Rules
-----
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

Decision order (``decide``)
---------------------------
1. ``delegate`` mode: a tool outside ``DELEGATE_ALLOWED_TOOLS`` is denied (it is not even
   offered to the model, see ``tools_for_mode``).
2. A matching deny rule denies. Deny always wins, even over coordination tools and bypass.
3. Coordination tools (SendMessage, Task*, Team*...) are allowed.
4. ``bypassPermissions`` allows everything else.
5. ``plan`` mode denies every tool that is not read-only for this input
   (``tool.is_read_only(input)``), telling the model to call ExitPlanMode and wait.
6. A matching ask rule asks. So does a search (Glob, Grep: a read-only path tool on a
   directory) over a directory containing a path a deny rule protects: the search would read
   through it, so it is never allowed without the person.
7. A matching allow rule allows.
8. A read-only file tool on a path inside the cwd (or an extra root) is allowed.
9. ``acceptEdits``: an ``edits_files`` tool on a path inside the cwd (or an extra root) is
   allowed (one without a path asks).
10. Everything else asks; in ``dontAsk`` mode every "ask" (from 6 or 10) becomes a deny
    ("not pre-approved").

A path outside the cwd and the extra roots is never allowed automatically: only an allow rule
(or the person answering the ask) can allow it.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from app.runtime.tools.base import Tool

PermissionMode = Literal[
    "default", "acceptEdits", "bypassPermissions", "plan", "delegate", "dontAsk"
]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
    "delegate",
    "dontAsk",
)


def parse_mode(value: str) -> PermissionMode:
    """A permission mode by its seeds' name; ValueError (one line) for anything else."""
    for mode in PERMISSION_MODES:
        if mode == value:
            return mode
    modes = ", ".join(PERMISSION_MODES)
    raise ValueError(f"unknown permission mode {value!r} (use {modes})")


Behavior = Literal["allow", "deny", "ask"]

#: The only tools a lead in delegate mode may use (seeds 000 + ``Task`` to spawn teammates).
DELEGATE_ALLOWED_TOOLS: frozenset[str] = frozenset(
    {
        "TeamCreate",
        "TeamDelete",
        "SendMessage",
        "TaskCreate",
        "TaskGet",
        "TaskUpdate",
        "TaskList",
        "Task",
    }
)

SubjectKind = Literal["command", "path", "text"]
#: Built-in tools whose subject is a path (tools may also say so with a ``subject_kind``).
FILE_TOOL_NAMES: frozenset[str] = frozenset(
    {"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"}
)
_COMMAND_TOOL_NAMES: frozenset[str] = frozenset({"Bash"})


def subject_kind(tool: Tool) -> SubjectKind | None:
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


# ---------------------------------------------------------------------------------- globs

_GLOB_CHARS = frozenset("*?[{")


def _translate_glob(pattern: str, *, braces: bool) -> str:
    """Regex source for a ``/``-separated glob (no anchors)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        seg_start = i == 0 or pattern[i - 1] == "/"
        if c == "/" and pattern[i:] == "/**":
            out.append("(?:/.*)?")  # dir/** also matches dir itself
            break
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                if seg_start and pattern.startswith("/", j):
                    out.append("(?:.*/)?")  # **/ : zero or more directories
                    i = j + 1
                else:
                    out.append(".*")
                    i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        elif c == "{" and braces:
            depth, j = 0, i
            parts: list[str] = []
            start = i + 1
            while j < n:
                if pattern[j] == "{":
                    depth += 1
                elif pattern[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif pattern[j] == "," and depth == 1:
                    parts.append(pattern[start:j])
                    start = j + 1
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                parts.append(pattern[start:j])
                alts = "|".join(_translate_glob(p, braces=True) for p in parts)
                out.append(f"(?:{alts})")
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(pattern: str, *, braces: bool = False) -> re.Pattern[str]:
    """Compile a glob over ``/``-separated paths (use ``.fullmatch``): ``*``/``?`` stay in one
    segment, ``**`` crosses them, ``[...]`` classes, ``{a,b}`` alternatives if ``braces``."""
    return re.compile("(?s:" + _translate_glob(pattern, braces=braces) + ")")


def _has_glob(text: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in text)


def _split_path_pattern(pattern: str, cwd: Path) -> tuple[str, str]:
    """A rule's path pattern as (absolute literal directory prefix, glob rest)."""
    text = pattern
    if text.startswith("//"):
        text = text[1:]
    if text == "~" or text.startswith("~/"):
        text = os.path.expanduser("~") + text[1:]
    if text.endswith("/") and len(text) > 1:
        text += "**"
    if not text.startswith("/"):
        anchored = "/" in text
        if text.startswith("./"):
            text = text[2:]
        if not anchored:
            text = "**/" + text
        text = cwd.absolute().as_posix().rstrip("/") + "/" + text
    segments = text.split("/")
    literal: list[str] = []
    for seg in segments:
        if _has_glob(seg):
            break
        literal.append(seg)
    rest = "/".join(segments[len(literal) :])
    return os.path.normpath("/".join(literal) or "/"), rest


def _path_pattern_regexes(pattern: str, cwd: Path) -> list[re.Pattern[str]]:
    """The absolute-path regexes of a rule's path pattern: as written, and with the literal
    directory prefix resolved through symlinks (when that differs)."""
    prefix, rest = _split_path_pattern(pattern, cwd)
    prefixes = [prefix]
    real = os.path.realpath(prefix)
    if real != prefix:
        prefixes.append(real)
    regexes = []
    for pre in prefixes:
        if rest:
            src = re.escape(pre.rstrip("/")) + _translate_glob("/" + rest, braces=False)
        else:
            src = re.escape(pre)
        regexes.append(re.compile("(?s:" + src + ")"))
    return regexes


def _path_candidates(subject: str, cwd: Path) -> list[str]:
    """The subject path made absolute and normalised, plus its symlink-resolved form."""
    expanded = os.path.expanduser(subject)
    joined = os.path.join(cwd.absolute(), expanded)
    lexical = os.path.normpath(joined)
    real = os.path.realpath(lexical)
    return [lexical] if real == lexical else [lexical, real]


def is_inside(path: str | Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` (symlinks resolved) is one of ``roots`` (resolved) or below one."""
    real = Path(os.path.realpath(path))
    for root in roots:
        base = Path(os.path.realpath(root))
        if real == base or base in real.parents:
            return True
    return False


# ---------------------------------------------------------------------------------- shell

_OPERATOR_CHARS = frozenset(";&|<>()\n")


def is_compound_command(command: str) -> bool:
    """Whether a shell command chains, pipes, backgrounds, substitutes or redirects (outside
    quotes, quote-aware). An unterminated quote or trailing backslash counts as compound."""
    quote: str | None = None
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote == "'":
            if c == "'":
                quote = None
        elif c == "\\":
            if i + 1 >= n:
                return True
            i += 2
            continue
        elif c == "`" or (c == "$" and command.startswith("$(", i)):
            return True  # command substitution, also inside double quotes
        elif quote == '"':
            if c == '"':
                quote = None
        elif c in ("'", '"'):
            quote = c
        elif c in _OPERATOR_CHARS:
            return True
        i += 1
    return quote is not None


def _matching_paren(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` at ``start`` (naive nesting); ``len`` if none."""
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def split_command(command: str) -> list[str]:
    """The simple commands inside a (possibly compound) shell command: split on ``;``,
    ``&&``, ``||``, ``|``, ``&``, newlines, parentheses and redirections outside quotes, plus
    the commands inside ``$(...)`` and backticks (recursively). Errs towards more parts."""
    parts: list[str] = []
    buf: list[str] = []

    def flush() -> None:
        text = "".join(buf).strip()
        if text:
            parts.append(text)
        buf.clear()

    quote: str | None = None
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote == "'":
            buf.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            buf.append(command[i : i + 2])
            i += 2
            continue
        if c == "$" and command.startswith("$(", i):
            end = _matching_paren(command, i + 1)
            parts.extend(split_command(command[i + 2 : end]))
            buf.append(command[i : end + 1])
            i = end + 1
            continue
        if c == "`":
            end = command.find("`", i + 1)
            end = n if end == -1 else end
            parts.extend(split_command(command[i + 1 : end]))
            buf.append(command[i : end + 1])
            i = end + 1
            continue
        if quote == '"':
            if c == '"':
                quote = None
            buf.append(c)
        elif c in ("'", '"'):
            quote = c
            buf.append(c)
        elif c in _OPERATOR_CHARS:
            flush()
        else:
            buf.append(c)
        i += 1
    flush()
    return parts


_WRAPPERS = frozenset(
    {"sudo", "env", "command", "builtin", "exec", "nohup", "time", "nice", "doas", "xargs"}
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _normalised_variants(part: str, depth: int = 0) -> list[str]:
    """Forms of one simple command a deny rule should also see: without ``VAR=x`` prefixes,
    without a wrapper (``sudo``, ``env``...: every later word may be the real command), with
    no directory on the command name, and the commands inside ``sh -c '...'``."""
    try:
        words = shlex.split(part)
    except ValueError:
        words = part.split()
    return _word_variants(words, depth, scan=True)


def _word_variants(words: list[str], depth: int, *, scan: bool) -> list[str]:
    start = 0
    while start < len(words) and (
        words[start] in ("{", "}", "!") or _ASSIGNMENT.match(words[start])
    ):
        start += 1
    words = words[start:]
    if not words:
        return []
    words = [os.path.basename(words[0]) or words[0], *words[1:]]
    variants = [" ".join(words)]
    if scan and words[0] in _WRAPPERS:
        for j in range(1, len(words)):
            if not words[j].startswith("-"):
                variants.extend(_word_variants(words[j:], depth, scan=False))
    if depth < 3 and words[0] in _SHELLS and "-c" in words[1:]:
        idx = words.index("-c", 1)
        if idx + 1 < len(words):
            for inner in split_command(words[idx + 1]):
                variants.append(inner)
                variants.extend(_normalised_variants(inner, depth + 1))
    return variants


def command_parts(command: str) -> list[str]:
    """Every form of every simple command in ``command`` (for deny and ask rules)."""
    seen: list[str] = []
    for part in [command.strip(), *split_command(command)]:
        for form in [part, *_normalised_variants(part)]:
            if form and form not in seen:
                seen.append(form)
    return seen


def _prefix_matches(prefix: str, command: str) -> bool:
    want = prefix.split()
    have = command.split()
    return bool(want) and have[: len(want)] == want


# ---------------------------------------------------------------------------------- rules

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

    def applies_to(self, tool: Tool) -> bool:
        """Whether the rule names this tool (``Edit`` covers every file-editing tool and
        ``Read`` every read-only file tool)."""
        if self.tool == tool.name:
            return True
        if self.tool == "Edit" and tool.edits_files:
            return True
        return self.tool == "Read" and tool.read_only and subject_kind(tool) == "path"

    def matches(
        self, tool: Tool, tool_input: dict[str, Any], cwd: Path, *, any_part: bool = False
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
            regexes = _path_pattern_regexes(self.pattern, cwd)
            candidates = _path_candidates(subject, cwd)
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
            return _prefix_matches(self.pattern[:-2], command)
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
    tool: Tool, tool_input: dict[str, Any], cwd: Path, extra_roots: Sequence[Path]
) -> bool:
    if subject_kind(tool) != "path":
        return False
    subject = tool.permission_subject(tool_input)
    if subject is None:
        return False
    roots = [cwd, *extra_roots]
    return all(is_inside(c, roots) for c in _path_candidates(subject, cwd))


def _denied_inside_search(
    tool: Tool, tool_input: dict[str, Any], rules: PermissionRules, cwd: Path
) -> tuple[Rule, str] | None:
    """For a search over a directory (Glob, Grep): a deny rule protecting something below
    that directory (the search would read through it), with the protected prefix."""
    if subject_kind(tool) != "path" or not tool.read_only or not rules.deny:
        return None
    subject = tool.permission_subject(tool_input)
    if subject is None:
        return None
    searched = [Path(c) for c in _path_candidates(subject, cwd) if os.path.isdir(c)]
    if not searched:
        return None
    for rule in rules.deny:
        if rule.pattern is None or not rule.applies_to(tool):
            continue
        prefix = _split_path_pattern(rule.pattern, cwd)[0]
        for form in {prefix, os.path.realpath(prefix)}:
            protected = Path(form)
            if any(protected == d or d in protected.parents for d in searched):
                return rule, form
    return None


def decide(
    tool: Tool,
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
    if decision is None:
        for rule in rules.allow:
            if rule.matches(tool, tool_input, cwd):
                return Decision("allow", f"{what} is allowed by the rule {rule}", rule)
        inside = _subject_path_inside(tool, tool_input, cwd, extra_roots)
        if inside and tool.is_read_only(tool_input):
            return Decision("allow", "read-only access inside the working directory")
        if inside and mode == "acceptEdits" and tool.edits_files:
            return Decision("allow", "acceptEdits mode: file edit inside the working directory")
        if subject_kind(tool) == "path" and not inside:
            reason = f"{what} is outside the working directory {cwd} and needs approval"
        else:
            reason = f"{what} needs approval"
        decision = Decision("ask", reason)
    if mode == "dontAsk":
        return Decision(
            "deny",
            f"{what} was not pre-approved (dontAsk mode denies anything that would ask)",
            decision.rule,
        )
    return decision


# ---------------------------------------------------------------------------------- helpers


def suggest_rule(tool: Tool, tool_input: dict[str, Any], cwd: Path | None = None) -> str:
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
        root = Path(_split_path_pattern(rule.pattern, cwd)[0])
        if root != cwd_abs and cwd_abs not in root.parents and root not in roots:
            roots.append(root)
    return tuple(roots)


T = TypeVar("T", bound="Tool")


def tools_for_mode(tools: Iterable[T], mode: PermissionMode) -> list[T]:
    """The tools offered to the model in ``mode``: only DELEGATE_ALLOWED_TOOLS in delegate."""
    if mode == "delegate":
        return [t for t in tools if t.name in DELEGATE_ALLOWED_TOOLS]
    return list(tools)

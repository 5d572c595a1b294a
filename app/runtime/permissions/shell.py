"""Shell commands as rules see them: compound or simple (quote-aware), split into their
simple commands (inside ``$(...)``, backticks and ``sh -c '...'`` too), and the normalised
forms a deny or ask rule must also match (``VAR=x``, ``sudo``, ``env``... stripped)."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex

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


#: Commands that run another command given as their later words.
_WRAPPERS = frozenset(
    {
        "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "xargs",
        "timeout", "stdbuf", "setsid", "ionice", "chrt", "taskset", "busybox", "unbuffer",
        "flock", "watch", "catchsegv", "chroot", "nsenter", "unshare", "strace", "ltrace",
    }
)  # fmt: skip
#: A command word with these is a pattern the shell expands (``/bin/r?``, ``$CMD``).
_EXPANDS = re.compile(r"[*?\[$`]")
#: Places whose executables a glob in a command word may name.
_BIN_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
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
    if _EXPANDS.search(words[0]):
        variants += [" ".join([name, *words[1:]]) for name in _expansions(words[0])]
    if words[0] == "eval" and depth < 3:
        for inner in split_command(" ".join(words[1:])):
            variants.append(inner)
            variants.extend(_normalised_variants(inner, depth + 1))
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


def _expansions(word: str) -> list[str]:
    """The executables a glob in a command word could run (``r?`` -> ``rm``, ``rg``...), from
    the usual bin folders and ``$PATH``; a word with a variable could run anything, which the
    caller treats as such (see ``caution``)."""
    pattern = os.path.basename(word)
    if "$" in pattern or "`" in pattern:
        return []
    folders = dict.fromkeys([*os.environ.get("PATH", "").split(os.pathsep), *_BIN_DIRS])
    names: set[str] = set()
    for folder in folders:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        names.update(name for name in entries if fnmatch.fnmatchcase(name, pattern))
    return sorted(names)[:200]


def command_parts(command: str) -> list[str]:
    """Every form of every simple command in ``command`` (for deny and ask rules)."""
    seen: list[str] = []
    for part in [command.strip(), *split_command(command)]:
        for form in [part, *_normalised_variants(part)]:
            if form and form not in seen:
                seen.append(form)
    return seen


def prefix_matches(prefix: str, command: str) -> bool:
    want = prefix.split()
    have = command.split()
    return bool(want) and have[: len(want)] == want

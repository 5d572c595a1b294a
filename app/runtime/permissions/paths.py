"""Path patterns of file-tool rules: globs over ``/``-separated paths, a rule's pattern made
absolute (relative to the agent's cwd, ``~`` expanded, no ``/``: any depth), and whether a
path lies inside some roots. Symlinks are resolved where a rule's meaning depends on them."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

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


def split_path_pattern(pattern: str, cwd: Path) -> tuple[str, str]:
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


def path_pattern_regexes(pattern: str, cwd: Path) -> list[re.Pattern[str]]:
    """The absolute-path regexes of a rule's path pattern: as written, and with the literal
    directory prefix resolved through symlinks (when that differs)."""
    prefix, rest = split_path_pattern(pattern, cwd)
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


def path_candidates(subject: str, cwd: Path) -> list[str]:
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

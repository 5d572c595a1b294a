"""Glob and Grep: searches below the agent's cwd (or a folder inside its roots).

Glob sorts its matches by modification time, newest first (like Claude Code; ties by name).
Both skip ``.git``, ``.venv``, ``node_modules``, ``__pycache__`` and a few other tool caches
(``confinement.SKIP_DIRS``). Grep uses Python's ``re`` syntax.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, ClassVar

from app.runtime.permissions import compile_glob
from app.runtime.tools.base import ToolContext, ToolError, ToolResult
from app.runtime.tools.workspace.confinement import (
    FileTool,
    cap,
    in_thread,
    int_arg,
    is_binary,
    mtime,
    resolve_path,
    roots_of,
    sniff,
    str_arg,
    walk_files,
)

GLOB_MAX_RESULTS = 100
GREP_MAX_FILE_BYTES = 20 * 1024 * 1024
GREP_MAX_LINE_CHARS = 500


class SearchTool(FileTool):
    """Glob/Grep: the subject is the directory searched (``.``, the cwd, if not given)."""

    path_key: ClassVar[str] = "path"

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        raw = tool_input.get("path")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return "."
        return super().permission_subject(tool_input)

    def describe(self, tool_input: dict[str, Any]) -> str:
        pattern = tool_input.get("pattern", "")
        where = tool_input.get("path")
        return f"{self.name}({pattern!r}" + (f" in {where})" if where else ")")


# ---------------------------------------------------------------------------------- Glob


def _split_absolute_pattern(pattern: str) -> tuple[str, str]:
    """``/a/b/**/*.py`` -> (``/a/b``, ``**/*.py``): the literal directory and the glob."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts:
        if any(ch in part for ch in "*?[{"):
            break
        literal.append(part)
    if len(literal) == len(parts):  # no glob at all: a literal path
        literal = literal[:-1]
    base = "/".join(literal) or "/"
    rest = "/".join(parts[len(literal) :])
    return base, rest


class Glob(SearchTool):
    name = "Glob"
    description = (
        "Fast file pattern matching: finds files by glob pattern such as '**/*.py' or "
        "'src/**/*.{ts,tsx}' ('*' stays in one directory, '**' crosses directories). "
        "Searches your working directory, or path if given. Returns matching file paths "
        f"sorted by modification time, newest first (at most {GLOB_MAX_RESULTS}). Skips .git, "
        ".venv, node_modules and __pycache__."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob pattern to match files"},
            "path": {
                "type": "string",
                "description": "The directory to search in (defaults to the working directory)",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    read_only = True

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        """The directory searched: ``path``, the literal directory of an absolute pattern,
        or ``.`` (the cwd)."""
        pattern = tool_input.get("pattern")
        if not tool_input.get("path") and isinstance(pattern, str) and pattern.startswith("/"):
            return os.path.normpath(_split_absolute_pattern(pattern)[0])
        return super().permission_subject(tool_input)

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = str_arg(tool_input, "pattern")
        assert pattern is not None
        raw_path = str_arg(tool_input, "path", required=False)
        if not pattern.strip():
            raise ToolError("pattern must not be empty")
        if os.path.isabs(pattern):
            if raw_path:
                raise ToolError("give either an absolute pattern or path, not both")
            raw_path, pattern = _split_absolute_pattern(pattern)
        if ".." in pattern.split("/"):
            raise ToolError("the pattern must not contain '..'; set path instead")
        pattern = pattern.removeprefix("./")
        base = resolve_path(ctx, raw_path or ".")
        if not base.is_dir():
            raise ToolError(f"{raw_path} is not a directory")
        return await in_thread(raw_path or ".", self._glob, base, pattern, roots_of(ctx))

    def _glob(self, base: Path, pattern: str, roots: list[Path]) -> ToolResult:
        regex = compile_glob(pattern, braces=True)
        started = time.monotonic()
        matches = [
            p for p in walk_files(base, roots) if regex.fullmatch(p.relative_to(base).as_posix())
        ]
        if not matches:
            return ToolResult("No files found", data={"filenames": [], "truncated": False})
        matches.sort(key=lambda p: (-mtime(p), p.as_posix()))
        truncated = len(matches) > GLOB_MAX_RESULTS
        shown = [str(p) for p in matches[:GLOB_MAX_RESULTS]]
        body = "\n".join(shown)
        if truncated:
            body += (
                f"\n(Results are truncated: {len(matches)} files matched, showing the "
                f"{GLOB_MAX_RESULTS} newest. Use a more specific path or pattern.)"
            )
        data = {
            "filenames": shown,
            "numFiles": len(matches),
            "truncated": truncated,
            "durationMs": int((time.monotonic() - started) * 1000),
        }
        return ToolResult(body, data=data)


# ---------------------------------------------------------------------------------- Grep


class Grep(SearchTool):
    name = "Grep"
    description = (
        "Searches file contents with a regular expression (Python re syntax). Searches your "
        "working directory, or path (a directory or a file). Filter files with glob "
        "(e.g. '*.py', '*.{ts,tsx}'; without '/' it matches the file name). output_mode: "
        "'files_with_matches' (default: matching file paths, newest first), 'content' "
        "(matching lines, as path:line:text) or 'count' (path:count). '-i' ignores case, "
        "'-n' shows line numbers in content mode (default true), head_limit keeps the first "
        "N lines/entries. Skips binary files, .git, .venv, node_modules and __pycache__."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regular expression to search for"},
            "path": {
                "type": "string",
                "description": "File or directory to search (defaults to the working directory)",
            },
            "glob": {"type": "string", "description": "Glob pattern to filter files"},
            "output_mode": {
                "type": "string",
                "enum": ["content", "files_with_matches", "count"],
                "description": "What to show (default files_with_matches)",
            },
            "-i": {"type": "boolean", "description": "Case insensitive search"},
            "-n": {"type": "boolean", "description": "Show line numbers (content mode)"},
            "head_limit": {
                "type": "integer",
                "description": "Only the first N lines / entries of the output",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    read_only = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = str_arg(tool_input, "pattern")
        assert pattern is not None
        raw_path = str_arg(tool_input, "path", required=False)
        file_glob = str_arg(tool_input, "glob", required=False)
        mode = tool_input.get("output_mode") or "files_with_matches"
        if mode not in ("content", "files_with_matches", "count"):
            raise ToolError("output_mode must be 'content', 'files_with_matches' or 'count'")
        head_limit = int_arg(tool_input, "head_limit")
        if head_limit is not None and head_limit <= 0:
            head_limit = None
        flags = re.IGNORECASE if tool_input.get("-i") else 0
        try:
            regex = re.compile(pattern, flags)
        except re.error as exc:
            raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
        base = resolve_path(ctx, raw_path or ".")
        if not base.exists():
            raise ToolError(f"Path does not exist: {raw_path}")
        line_numbers = bool(tool_input.get("-n", True))
        return await in_thread(
            raw_path or ".",
            self._grep,
            regex,
            base,
            file_glob,
            mode,
            head_limit,
            line_numbers,
            roots_of(ctx),
        )

    def _grep(
        self,
        regex: re.Pattern[str],
        base: Path,
        file_glob: str | None,
        mode: str,
        head_limit: int | None,
        line_numbers: bool,
        roots: list[Path],
    ) -> ToolResult:
        if base.is_dir():
            files: list[Path] = list(walk_files(base, roots))
        else:
            files = [base]
        if file_glob:
            glob_rx = compile_glob(file_glob.removeprefix("./"), braces=True)
            by_name = "/" not in file_glob
            files = [
                f
                for f in files
                if glob_rx.fullmatch(f.name if by_name else f.relative_to(base).as_posix())
            ]
        out: list[str] = []
        matched: list[tuple[Path, int]] = []
        for path in files:
            hits = self._search_file(path, regex)
            if not hits:
                continue
            matched.append((path, len(hits)))
            if mode == "content":
                for number, text in hits:
                    if len(text) > GREP_MAX_LINE_CHARS:
                        text = text[:GREP_MAX_LINE_CHARS] + "..."
                    out.append(f"{path}:{number}:{text}" if line_numbers else f"{path}:{text}")
        if mode == "files_with_matches":
            matched.sort(key=lambda item: (-mtime(item[0]), item[0].as_posix()))
            out = [str(p) for p, _ in matched]
        elif mode == "count":
            out = [f"{p}:{n}" for p, n in matched]
        if not out:
            empty = "No files found" if mode == "files_with_matches" else "No matches found"
            return ToolResult(empty, data={"numFiles": 0})
        total = len(out)
        if head_limit is not None:
            out = out[:head_limit]
        body = "\n".join(out)
        if mode == "files_with_matches":
            body = f"Found {len(matched)} file{'s' if len(matched) != 1 else ''}\n{body}"
        elif mode == "count":
            hits_total = sum(n for _, n in matched)
            body += f"\n\nFound {hits_total} matches across {len(matched)} files."
        if head_limit is not None and total > head_limit:
            body += f"\n(showing the first {head_limit} of {total} entries)"
        body, _ = cap(body)
        return ToolResult(body, data={"numFiles": len(matched)})

    @staticmethod
    def _search_file(path: Path, regex: re.Pattern[str]) -> list[tuple[int, str]]:
        try:
            if not path.is_file() or path.stat().st_size > GREP_MAX_FILE_BYTES:
                return []
            if is_binary(sniff(path)):
                return []
            hits = []
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    text = line.rstrip("\n")
                    if regex.search(text):
                        hits.append((number, text))
            return hits
        except OSError:
            return []

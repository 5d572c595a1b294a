"""Workspace tools with Claude Code's names and input schemas: Read, Write, Edit, Glob, Grep,
Bash.

Confinement: every file tool resolves its path against the agent's cwd and refuses (ToolError)
a path that is outside the cwd and ``ctx.extra_roots``, either as written or once symlinks are
resolved, so a symlink never leads out of a root. Searches (Glob, Grep) do not descend into
symlinked directories and skip symlinked files that point outside the roots. Whether a call may
run at all is the permission layer's business (``app.runtime.permissions``); this is the tool's
own fence. Bash cannot be confined: it runs in the cwd and relies on the permission layer.

Glob sorts its matches by modification time, newest first (like Claude Code; ties by name).
Glob and Grep skip ``.git``, ``.venv``, ``node_modules``, ``__pycache__`` and a few other
tool caches (``SKIP_DIRS``). Grep uses Python's ``re`` syntax.

Bash runs through ``asyncio.create_subprocess_shell`` (bash when available) in its own process
group with stdin closed and an environment without Anthropic credentials
(``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, any other ``ANTHROPIC_*`` key/token/secret
and ``CLAUDE_CODE_OAUTH_TOKEN``): the agent's commands never see the team's API key.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from app.core.errors import TeamdeckError
from app.core.paths import LEAD_NAME
from app.runtime.permissions import compile_glob, is_compound_command, is_inside
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult

SKIP_DIRS: frozenset[str] = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
READ_MAX_LINES = 2000
READ_MAX_LINE_CHARS = 2000
READ_MAX_CHARS = 100_000
READ_MAX_BYTES = 10 * 1024 * 1024  # without offset/limit
GLOB_MAX_RESULTS = 100
GREP_MAX_FILE_BYTES = 20 * 1024 * 1024
GREP_MAX_LINE_CHARS = 500
OUTPUT_MAX_CHARS = 30_000
BASH_DEFAULT_TIMEOUT_MS = 120_000
BASH_MAX_TIMEOUT_MS = 600_000
_BINARY_SNIFF = 8192

#: Environment variables never passed to a Bash child (besides ANTHROPIC_* credentials).
SECRET_ENV_VARS: frozenset[str] = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}
)
_SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


# ---------------------------------------------------------------------------------- helpers


def _str_arg(tool_input: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = tool_input.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing required parameter {key!r}")
        return None
    if not isinstance(value, str):
        raise ToolError(f"parameter {key!r} must be a string")
    return value


def _int_arg(tool_input: dict[str, Any], key: str) -> int | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ToolError(f"parameter {key!r} must be an integer")
    return int(value)


def _roots(ctx: ToolContext) -> list[Path]:
    return [Path(ctx.agent.cwd), *ctx.extra_roots]


def _lexically_inside(path: str, roots: list[Path]) -> bool:
    for root in roots:
        base = os.path.normpath(os.path.abspath(root))
        if path == base or path.startswith(base.rstrip("/") + "/"):
            return True
    return False


def resolve_path(ctx: ToolContext, raw: str) -> Path:
    """The absolute path of ``raw`` (relative to the agent's cwd, ``~`` expanded), refused with
    a ToolError unless it is inside the cwd or an extra root once symlinks are resolved (so a
    symlink never leads out). Returns the symlink-resolved path."""
    if not raw.strip():
        raise ToolError("the path is empty")
    if "\x00" in raw:
        raise ToolError("the path contains a NUL character")
    cwd = Path(ctx.agent.cwd)
    lexical = os.path.normpath(os.path.join(os.path.abspath(cwd), os.path.expanduser(raw)))
    roots = _roots(ctx)
    real = os.path.realpath(lexical)
    if not is_inside(real, roots):
        where = " (through a symlink)" if _lexically_inside(lexical, roots) else ""
        raise ToolError(
            f"{lexical} is outside the working directory {cwd}{where}; "
            "file tools only work inside it"
        )
    return Path(real)


def _is_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return True
    return False


def _sniff(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(_BINARY_SNIFF)


def _check_regular_file(path: Path, shown: str) -> None:
    if not path.exists():
        raise ToolError(f"File does not exist: {shown}")
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file (use Glob, or Bash with ls)")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file")


def _read_text(path: Path, shown: str) -> str:
    _check_regular_file(path, shown)
    if path.stat().st_size > READ_MAX_BYTES:
        raise ToolError(f"{shown} is too large to edit ({path.stat().st_size} bytes)")
    data = path.read_bytes()
    if _is_binary(data[:_BINARY_SNIFF]):
        raise ToolError(f"{shown} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not valid UTF-8 text") from None


def _cap(text: str, limit: int = OUTPUT_MAX_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    half = limit // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n\n... [{omitted} characters truncated] ...\n\n{text[-half:]}", True


def _walk_files(base: Path, roots: list[Path]) -> Iterator[Path]:
    """Files below ``base``: skips SKIP_DIRS, never enters a symlinked directory, and skips
    symlinked files that resolve outside the roots."""
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                if not path.is_file() or not is_inside(path, roots):
                    continue
            elif not path.is_file():
                continue
            yield path


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


async def _in_thread(shown: str, func: Callable[..., ToolResult], *args: Any) -> ToolResult:
    """Run blocking file work in a thread; an OSError becomes a one-line ToolError."""
    try:
        return await asyncio.to_thread(func, *args)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ToolError(f"{shown}: {reason}") from None


class _FileTool(Tool):
    subject_kind: ClassVar[str] = "path"
    path_key: ClassVar[str] = "file_path"

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        raw = tool_input.get(self.path_key)
        if not isinstance(raw, str) or not raw.strip():
            return None
        expanded = os.path.expanduser(raw)
        return os.path.normpath(expanded) if os.path.isabs(expanded) else raw


class _SearchTool(_FileTool):
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


# ---------------------------------------------------------------------------------- Read


class Read(_FileTool):
    name = "Read"
    description = (
        "Reads a file from the local filesystem. file_path should be an absolute path (a "
        "relative one is resolved against your working directory). By default it reads up to "
        f"{READ_MAX_LINES} lines from the start; use offset (1-based line number to start at) "
        "and limit (number of lines) for long files. Lines longer than "
        f"{READ_MAX_LINE_CHARS} characters are truncated. Output is numbered like cat -n. "
        "Binary files cannot be read. Use Glob to list a directory."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The absolute path to the file"},
            "offset": {
                "type": "integer",
                "description": "The line number to start reading from (1-based)",
            },
            "limit": {"type": "integer", "description": "The number of lines to read"},
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }
    read_only = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = _str_arg(tool_input, "file_path")
        assert raw is not None
        offset = _int_arg(tool_input, "offset")
        limit = _int_arg(tool_input, "limit")
        if offset is not None and offset < 0:
            raise ToolError("offset must be a positive line number")
        if limit is not None and limit <= 0:
            raise ToolError("limit must be a positive number of lines")
        path = resolve_path(ctx, raw)
        return await _in_thread(raw, self._read, path, raw, offset, limit)

    def _read(self, path: Path, shown: str, offset: int | None, limit: int | None) -> ToolResult:
        _check_regular_file(path, shown)
        size = path.stat().st_size
        if size > READ_MAX_BYTES and offset is None and limit is None:
            raise ToolError(
                f"{shown} is too large to read at once ({size} bytes); use offset and limit "
                "to read part of it, or Grep to search it"
            )
        if _is_binary(_sniff(path)):
            raise ToolError(f"{shown} is a binary file and cannot be read as text")
        if size == 0:
            return ToolResult(f"(the file {shown} exists but is empty)")
        start = max(offset or 1, 1)
        count = min(limit or READ_MAX_LINES, READ_MAX_LINES)
        lines: list[str] = []
        total = 0
        chars = 0
        char_capped = False
        with path.open("r", encoding="utf-8", errors="replace", newline=None) as fh:
            for number, line in enumerate(fh, 1):
                total = number
                if number < start or len(lines) >= count or char_capped:
                    continue
                text = line.rstrip("\n")
                if len(text) > READ_MAX_LINE_CHARS:
                    text = text[:READ_MAX_LINE_CHARS] + "... [line truncated]"
                entry = f"{number:6}\t{text}"
                if chars + len(entry) > READ_MAX_CHARS and lines:
                    char_capped = True
                    continue
                chars += len(entry) + 1
                lines.append(entry)
        if not lines:
            raise ToolError(f"offset {start} is past the end of {shown} ({total} lines)")
        last = start + len(lines) - 1
        body = "\n".join(lines)
        if last < total:
            body += (
                f"\n\n[showing lines {start}-{last} of {total}; use offset={last + 1} to read more]"
            )
        return ToolResult(body)


# ---------------------------------------------------------------------------------- Write


class Write(_FileTool):
    name = "Write"
    description = (
        "Writes a file to the local filesystem, replacing it if it exists (parent directories "
        "are created). file_path should be an absolute path inside your working directory. "
        "Prefer Edit for changing part of an existing file."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "The absolute path to the file to write",
            },
            "content": {"type": "string", "description": "The content to write to the file"},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    }
    edits_files = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = _str_arg(tool_input, "file_path")
        content = _str_arg(tool_input, "content")
        assert raw is not None and content is not None
        path = resolve_path(ctx, raw)
        return await _in_thread(raw, self._write, path, content, ctx)

    def _write(self, path: Path, content: str, ctx: ToolContext) -> ToolResult:
        if path.is_dir():
            raise ToolError(f"{path} is a directory")
        existed = path.exists()
        if existed and not path.is_file():
            raise ToolError(f"{path} is not a regular file")
        path.parent.mkdir(parents=True, exist_ok=True)
        # Re-check after creating directories: nothing may have been swapped for a symlink.
        resolve_path(ctx, str(path))
        path.write_text(content, encoding="utf-8")
        if existed:
            return ToolResult(f"The file {path} has been updated.")
        return ToolResult(f"File created successfully at: {path}")


# ---------------------------------------------------------------------------------- Edit


class Edit(_FileTool):
    name = "Edit"
    description = (
        "Performs an exact string replacement in a file. old_string must match the file "
        "exactly (including indentation) and be unique in it, unless replace_all is true, "
        "which replaces every occurrence. new_string must differ from old_string. An empty "
        "old_string creates a new file with new_string as its content."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "The absolute path to the file to modify",
            },
            "old_string": {"type": "string", "description": "The text to replace"},
            "new_string": {"type": "string", "description": "The text to replace it with"},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace all occurrences of old_string (default false)",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    edits_files = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = _str_arg(tool_input, "file_path")
        old = _str_arg(tool_input, "old_string")
        new = _str_arg(tool_input, "new_string")
        assert raw is not None and old is not None and new is not None
        replace_all = bool(tool_input.get("replace_all", False))
        path = resolve_path(ctx, raw)
        return await _in_thread(raw, self._edit, path, raw, old, new, replace_all)

    def _edit(self, path: Path, shown: str, old: str, new: str, replace_all: bool) -> ToolResult:
        if old == new:
            raise ToolError("No changes to make: old_string and new_string are exactly the same.")
        if old == "":
            if path.exists() and (not path.is_file() or path.stat().st_size > 0):
                raise ToolError(
                    f"Cannot create {shown}: the file already exists (old_string is empty)"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(new, encoding="utf-8")
            return ToolResult(f"File created successfully at: {path}")
        text = _read_text(path, shown)
        count = text.count(old)
        if count == 0:
            raise ToolError(f"String to replace not found in {shown}.")
        if count > 1 and not replace_all:
            raise ToolError(
                f"Found {count} matches of the string to replace, but replace_all is false. "
                "To replace all occurrences, set replace_all to true. To replace only one, "
                "provide more surrounding context so that old_string is unique."
            )
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        path.write_text(updated, encoding="utf-8")
        suffix = f" ({count} replacements)" if replace_all and count > 1 else ""
        return ToolResult(f"The file {path} has been updated{suffix}.")


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


class Glob(_SearchTool):
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
        pattern = _str_arg(tool_input, "pattern")
        assert pattern is not None
        raw_path = _str_arg(tool_input, "path", required=False)
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
        return await _in_thread(raw_path or ".", self._glob, base, pattern, _roots(ctx))

    def _glob(self, base: Path, pattern: str, roots: list[Path]) -> ToolResult:
        regex = compile_glob(pattern, braces=True)
        started = time.monotonic()
        matches = [
            p for p in _walk_files(base, roots) if regex.fullmatch(p.relative_to(base).as_posix())
        ]
        if not matches:
            return ToolResult("No files found", data={"filenames": [], "truncated": False})
        matches.sort(key=lambda p: (-_mtime(p), p.as_posix()))
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


class Grep(_SearchTool):
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
        pattern = _str_arg(tool_input, "pattern")
        assert pattern is not None
        raw_path = _str_arg(tool_input, "path", required=False)
        file_glob = _str_arg(tool_input, "glob", required=False)
        mode = tool_input.get("output_mode") or "files_with_matches"
        if mode not in ("content", "files_with_matches", "count"):
            raise ToolError("output_mode must be 'content', 'files_with_matches' or 'count'")
        head_limit = _int_arg(tool_input, "head_limit")
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
        return await _in_thread(
            raw_path or ".",
            self._grep,
            regex,
            base,
            file_glob,
            mode,
            head_limit,
            line_numbers,
            _roots(ctx),
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
            files: list[Path] = list(_walk_files(base, roots))
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
            matched.sort(key=lambda item: (-_mtime(item[0]), item[0].as_posix()))
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
        body, _ = _cap(body)
        return ToolResult(body, data={"numFiles": len(matched)})

    @staticmethod
    def _search_file(path: Path, regex: re.Pattern[str]) -> list[tuple[int, str]]:
        try:
            if not path.is_file() or path.stat().st_size > GREP_MAX_FILE_BYTES:
                return []
            if _is_binary(_sniff(path)):
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


# ---------------------------------------------------------------------------------- Bash


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment without Anthropic credentials (see SECRET_ENV_VARS)."""
    env = dict(os.environ if base is None else base)
    for key in list(env):
        upper = key.upper()
        if upper in SECRET_ENV_VARS or (
            upper.startswith("ANTHROPIC_") and any(m in upper for m in _SECRET_MARKERS)
        ):
            del env[key]
    return env


#: Claude Code's teammate variables (seed 001); set from the agent running the command.
TEAMMATE_ENV_VARS: frozenset[str] = frozenset(
    {
        "CLAUDE_CODE_TEAM_NAME",
        "CLAUDE_CODE_AGENT_ID",
        "CLAUDE_CODE_AGENT_NAME",
        "CLAUDE_CODE_AGENT_TYPE",
        "CLAUDE_CODE_PLAN_MODE_REQUIRED",
    }
)


def _command_env(agent: dict[str, str] | None) -> dict[str, str]:
    """The environment of a command: teamdeck's without credentials; with an agent's
    variables, none of the teammate variables teamdeck itself inherited (e.g. when started
    from inside a Claude Code teammate) is left behind to misname the agent."""
    env = child_env()
    if agent is not None:
        for key in TEAMMATE_ENV_VARS - agent.keys():
            env.pop(key, None)
        env.update(agent)
    return env


def agent_env(ctx: ToolContext) -> dict[str, str]:
    """Claude Code's teammate variables for a command run by ``ctx.agent`` (seed 001: e.g.
    ``CLAUDE_CODE_PLAN_MODE_REQUIRED`` is ``"true"``/``"false"``). What the identity does not
    carry comes from the agent's entry in the team config."""
    agent = ctx.agent
    team = agent.team or (ctx.services.current_team() if ctx.services else None)
    member = None
    if team and (agent.agent_type is None or agent.plan_mode_required is None):
        with contextlib.suppress(TeamdeckError, OSError):
            config = ctx.home.teams.get(team)
            members = config.members if config else []
            member = next((m for m in members if m.name == agent.name), None)
    agent_type = agent.agent_type or (member.agent_type if member else None)
    plan = agent.plan_mode_required
    if plan is None:
        plan = bool(member.plan_mode_required) if member else False
    env = {
        "CLAUDE_CODE_AGENT_NAME": agent.name,
        "CLAUDE_CODE_AGENT_ID": f"{agent.name}@{team}" if team else agent.name,
        "CLAUDE_CODE_AGENT_TYPE": agent_type or (LEAD_NAME if agent.is_lead else "general-purpose"),
        "CLAUDE_CODE_PLAN_MODE_REQUIRED": "true" if plan else "false",
    }
    if team:
        env["CLAUDE_CODE_TEAM_NAME"] = team
    return env


#: First words of commands that only read (used by ``Bash.is_read_only`` for simple
#: commands; nothing with an option that can write, like ``sort -o`` or ``find -delete``).
READ_ONLY_COMMANDS: frozenset[str] = frozenset(
    {"ls", "pwd", "cat", "head", "tail", "wc", "echo", "which", "stat", "du", "df", "grep"}
)
READ_ONLY_GIT: frozenset[str] = frozenset({"status"})


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


class Bash(Tool):
    name = "Bash"
    description = (
        "Executes a shell command in your working directory and returns its output (stdout "
        "and stderr together) and exit code. timeout is in milliseconds (default "
        f"{BASH_DEFAULT_TIMEOUT_MS}, max {BASH_MAX_TIMEOUT_MS}); on timeout the command and "
        f"its children are killed. Output over {OUTPUT_MAX_CHARS} characters is truncated in "
        "the middle. There is no terminal and no stdin: do not run interactive commands. Use "
        "Read, Grep and Glob rather than cat, grep and find."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to execute"},
            "timeout": {
                "type": "number",
                "description": f"Optional timeout in milliseconds (max {BASH_MAX_TIMEOUT_MS})",
            },
            "description": {
                "type": "string",
                "description": "Clear, concise description of what this command does (5-10 words)",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    subject_kind: ClassVar[str] = "command"

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        command = tool_input.get("command")
        return command if isinstance(command, str) else None

    def is_read_only(self, tool_input: dict[str, Any]) -> bool:
        command = self.permission_subject(tool_input)
        if not command or is_compound_command(command):
            return False
        words = command.split()
        if not words:
            return False
        if words[0] == "git":
            return len(words) == 2 and words[1] in READ_ONLY_GIT
        return words[0] in READ_ONLY_COMMANDS

    def describe(self, tool_input: dict[str, Any]) -> str:
        command = self.permission_subject(tool_input) or ""
        if len(command) > 200:
            command = command[:200] + "..."
        return f"Bash({command})"

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = _str_arg(tool_input, "command")
        assert command is not None
        if not command.strip():
            raise ToolError("the command is empty")
        timeout_arg = tool_input.get("timeout")
        if timeout_arg is None:
            timeout_ms = BASH_DEFAULT_TIMEOUT_MS
        elif isinstance(timeout_arg, bool) or not isinstance(timeout_arg, int | float):
            raise ToolError("timeout must be a number of milliseconds")
        else:
            timeout_ms = int(timeout_arg)
            if timeout_ms <= 0:
                raise ToolError("timeout must be a positive number of milliseconds")
            timeout_ms = min(timeout_ms, BASH_MAX_TIMEOUT_MS)
        cwd = Path(ctx.agent.cwd)
        try:
            return await run_command(command, cwd, timeout_ms / 1000, agent_env(ctx))
        except (FileNotFoundError, NotADirectoryError):
            raise ToolError(f"the working directory {cwd} does not exist") from None


async def run_command(
    command: str,
    cwd: Path,
    timeout: float,  # noqa: ASYNC109
    extra_env: dict[str, str] | None = None,
) -> ToolResult:
    """Run ``command`` in a shell in ``cwd`` (own process group, no stdin, no credentials,
    ``extra_env`` added) and report its merged output (capped), exit code and any timeout."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_shell(
            command,
            cwd=str(cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=_command_env(extra_env),
            start_new_session=True,
            executable=shutil.which("bash") or None,
        )
    )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Cancelled while starting: the child may already run; kill it once it exists.
        with contextlib.suppress(Exception):
            _kill_group(await spawn)
        raise
    head = bytearray()
    tail = bytearray()
    total = 0
    keep = OUTPUT_MAX_CHARS * 4  # enough bytes for OUTPUT_MAX_CHARS // 2 characters each end

    async def pump() -> None:
        nonlocal total
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            total += len(chunk)
            room = keep - len(head)
            if room > 0:
                head.extend(chunk[:room])
                chunk = chunk[room:]
            if chunk:
                tail.extend(chunk)
                if len(tail) > keep:
                    del tail[: len(tail) - keep]

    reader = asyncio.ensure_future(pump())

    async def finish() -> None:
        await asyncio.shield(reader)
        await proc.wait()

    timed_out = False
    try:
        await asyncio.wait_for(finish(), timeout)
    except TimeoutError:
        timed_out = True
        _kill_group(proc)
        # A child that left the process group may hold the pipe: do not wait long for it.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), 2)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 2)
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        if not reader.done():
            reader.cancel()
            # The pipe is still held (by a child that escaped the group): let it go.
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
        with contextlib.suppress(BaseException):
            await reader

    half = OUTPUT_MAX_CHARS // 2
    truncated = False
    if total == len(head) + len(tail):
        output, truncated = _cap(bytes(head + tail).decode("utf-8", "replace"))
    else:
        truncated = True
        head_text = bytes(head).decode("utf-8", "replace")[:half]
        tail_text = bytes(tail).decode("utf-8", "replace")[-half:]
        output = (
            f"{head_text}\n\n... [output truncated: {total} bytes in all, the middle was "
            f"omitted] ...\n\n{tail_text}"
        )
    output = output.rstrip("\n")
    code = proc.returncode
    notes = []
    if timed_out:
        notes.append(f"Command timed out after {timeout:g}s and was killed.")
    elif code:
        notes.append(f"Exit code: {code}")
    text = output if output else "(no output)"
    if notes:
        text += "\n\n" + "\n".join(notes)
    data = {"exit_code": code, "timed_out": timed_out, "truncated": truncated}
    return ToolResult(text, is_error=timed_out or bool(code), data=data)


WORKSPACE_TOOLS: tuple[type[Tool], ...] = (Read, Write, Edit, Glob, Grep, Bash)

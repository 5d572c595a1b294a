"""Read, Write and Edit: one file at a time, confined to the agent's roots (see
:mod:`.confinement`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from app.runtime.tools.base import ToolContext, ToolError, ToolResult
from app.runtime.tools.workspace.confinement import (
    BINARY_SNIFF,
    FileTool,
    check_regular_file,
    in_thread,
    int_arg,
    is_binary,
    resolve_path,
    sniff,
    str_arg,
)

READ_MAX_LINES = 2000
READ_MAX_LINE_CHARS = 2000
READ_MAX_CHARS = 100_000
READ_MAX_BYTES = 10 * 1024 * 1024  # without offset/limit


def _read_text(path: Path, shown: str) -> str:
    check_regular_file(path, shown)
    if path.stat().st_size > READ_MAX_BYTES:
        raise ToolError(f"{shown} is too large to edit ({path.stat().st_size} bytes)")
    data = path.read_bytes()
    if is_binary(data[:BINARY_SNIFF]):
        raise ToolError(f"{shown} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not valid UTF-8 text") from None


# ---------------------------------------------------------------------------------- Read


class Read(FileTool):
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
        raw = str_arg(tool_input, "file_path")
        assert raw is not None
        offset = int_arg(tool_input, "offset")
        limit = int_arg(tool_input, "limit")
        if offset is not None and offset < 0:
            raise ToolError("offset must be a positive line number")
        if limit is not None and limit <= 0:
            raise ToolError("limit must be a positive number of lines")
        path = resolve_path(ctx, raw)
        return await in_thread(raw, self._read, path, raw, offset, limit)

    def _read(self, path: Path, shown: str, offset: int | None, limit: int | None) -> ToolResult:
        check_regular_file(path, shown)
        size = path.stat().st_size
        if size > READ_MAX_BYTES and offset is None and limit is None:
            raise ToolError(
                f"{shown} is too large to read at once ({size} bytes); use offset and limit "
                "to read part of it, or Grep to search it"
            )
        if is_binary(sniff(path)):
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


class Write(FileTool):
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
        raw = str_arg(tool_input, "file_path")
        content = str_arg(tool_input, "content")
        assert raw is not None and content is not None
        path = resolve_path(ctx, raw)
        return await in_thread(raw, self._write, path, content, ctx)

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


class Edit(FileTool):
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
        raw = str_arg(tool_input, "file_path")
        old = str_arg(tool_input, "old_string")
        new = str_arg(tool_input, "new_string")
        assert raw is not None and old is not None and new is not None
        replace_all = bool(tool_input.get("replace_all", False))
        path = resolve_path(ctx, raw)
        return await in_thread(raw, self._edit, path, raw, old, new, replace_all)

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

"""Where a workspace tool may reach, and what every one of them shares.

Every file tool resolves its path against the agent's cwd and refuses (ToolError) a path that is
outside the cwd and ``ctx.extra_roots``, either as written or once symlinks are resolved, so a
symlink never leads out of a root (:func:`resolve_path`). Searches walk below a root without
descending into symlinked directories (:func:`walk_files`). Whether a call may run at all is the
permission layer's business (``app.runtime.permissions``); this is the tool's own fence.

Also here, for every workspace tool: reading its arguments, telling text from binary, cutting
long output, running blocking file work in a thread, and the path-subject base class.
"""

from __future__ import annotations

import asyncio
import codecs
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from app.runtime.permissions import is_inside
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult

#: Folders the searches never enter (version control data, environments, tool caches).
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
#: Tool output longer than this is cut in the middle (``cap``).
OUTPUT_MAX_CHARS = 30_000
#: How much of a file is looked at to tell text from binary.
BINARY_SNIFF = 8192


# ---------------------------------------------------------------------------------- helpers


def str_arg(tool_input: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = tool_input.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing required parameter {key!r}")
        return None
    if not isinstance(value, str):
        raise ToolError(f"parameter {key!r} must be a string")
    return value


def int_arg(tool_input: dict[str, Any], key: str) -> int | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ToolError(f"parameter {key!r} must be an integer")
    return int(value)


def roots_of(ctx: ToolContext) -> list[Path]:
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
    roots = roots_of(ctx)
    real = os.path.realpath(lexical)
    if not is_inside(real, roots):
        where = " (through a symlink)" if _lexically_inside(lexical, roots) else ""
        raise ToolError(
            f"{lexical} is outside the working directory {cwd}{where}; "
            "file tools only work inside it"
        )
    return Path(real)


def is_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return True
    return False


def sniff(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(BINARY_SNIFF)


def check_regular_file(path: Path, shown: str) -> None:
    if not path.exists():
        raise ToolError(f"File does not exist: {shown}")
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file (use Glob, or Bash with ls)")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file")


def cap(text: str, limit: int = OUTPUT_MAX_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    half = limit // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n\n... [{omitted} characters truncated] ...\n\n{text[-half:]}", True


def walk_files(base: Path, roots: list[Path]) -> Iterator[Path]:
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


def mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


async def in_thread(shown: str, func: Callable[..., ToolResult], *args: Any) -> ToolResult:
    """Run blocking file work in a thread; an OSError becomes a one-line ToolError."""
    try:
        return await asyncio.to_thread(func, *args)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ToolError(f"{shown}: {reason}") from None


class FileTool(Tool):
    """A workspace tool whose permission subject is a path (``file_path``, or ``path``)."""

    subject_kind: ClassVar[str] = "path"
    path_key: ClassVar[str] = "file_path"

    def permission_subject(self, tool_input: dict[str, Any]) -> str | None:
        raw = tool_input.get(self.path_key)
        if not isinstance(raw, str) or not raw.strip():
            return None
        expanded = os.path.expanduser(raw)
        return os.path.normpath(expanded) if os.path.isabs(expanded) else raw

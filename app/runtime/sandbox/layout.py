"""What a sandboxed command sees besides its project: the folders hidden from it (where the
desk keeps sockets and secrets) and, for a git worktree, which parts of the main repository's
``.git`` it may write."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

#: Paths in a project that hold configuration which runs code (hooks, git's fsmonitor,
#: aliases, submodules, MCP servers): read-only inside the sandbox, whatever the command, and
#: sealed (an empty read-only stand-in) where they do not exist, so a command cannot create
#: them either. Folders first, then files (the stand-in's kind).
SEALED_DIRS: tuple[str, ...] = (".claude", ".git")
SEALED_FILES: tuple[str, ...] = (".gitmodules", ".mcp.json")
PROTECTED_NAMES: tuple[str, ...] = (*SEALED_DIRS, *SEALED_FILES)

#: In a teamdeck home: the per-team signing keys and the Claude Code bridge (socket, secret).
HOME_SECRETS: tuple[str, ...] = ("keys", "bridge")
#: In the main ``.git`` of a worktree: what runs code or names other repositories.
GIT_READ_ONLY: tuple[str, ...] = ("config", "hooks", "info", "worktrees", "commondir")
#: In a worktree's administrative folder: what points git elsewhere (read-only again after
#: its folder is made writable).
WORKTREE_POINTERS: tuple[str, ...] = ("commondir", "gitdir", "config.worktree")


def protected_paths(root: Path) -> list[Path]:
    """The code-running configuration under ``root`` that exists (made read-only)."""
    return [root / name for name in PROTECTED_NAMES if (root / name).exists()]


def teamdeck_home() -> Path:
    env = os.environ.get("TEAMDECK_HOME")
    return Path(env).expanduser() if env else Path.home() / ".teamdeck"


def claude_home() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def hidden_paths(homes: Iterable[Path] = ()) -> list[Path]:
    """Folders replaced by an empty one inside the sandbox: each teamdeck home's ``keys`` and
    ``bridge``, Claude Code's home (credentials, sessions) and ``/run/user`` (session bus,
    keyring, agents' sockets). Only those that exist (a mount needs a place)."""
    found: list[Path] = []
    for home in dict.fromkeys([teamdeck_home(), *homes]):
        found += [home / name for name in HOME_SECRETS]
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    found += [claude_home(), Path("/run/user")]
    if runtime_dir:
        found.append(Path(runtime_dir))
    out: list[Path] = []
    for path in found:
        try:
            real = path.resolve()
        except OSError:
            continue
        if real.is_dir() and real not in out and real != Path("/"):
            out.append(real)
    return out


def worktree_git(cwd: Path) -> tuple[Path, Path] | None:
    """For a teammate working in a worktree under ``<repo>/.claude/worktrees/``: (the main
    repository's ``.git``, the worktree's administrative folder in it), the latter found by its
    ``gitdir`` file pointing back at ``cwd`` (read-only to commands, unlike the worktree's own
    ``.git`` file). ``None`` when ``cwd`` is not such a worktree."""
    parent = cwd.parent
    if parent.name != "worktrees" or parent.parent.name != ".claude":
        return None
    main_git = parent.parent.parent / ".git"
    if not main_git.is_dir():
        return None
    admin: Path | None = None
    try:
        entries = sorted((main_git / "worktrees").iterdir())
    except OSError:
        entries = []
    want = os.path.normpath(cwd / ".git")
    for entry in entries:
        try:
            points = (entry / "gitdir").read_text().strip()
        except OSError:
            continue
        if os.path.normpath(points) == want:
            admin = entry
            break
    return (main_git, admin) if admin is not None else (main_git, main_git / "worktrees" / "-")


def git_mounts(main_git: Path, admin: Path | None) -> tuple[list[Path], list[Path]]:
    """(read-only, read-write again) inside a writable main ``.git``: its config, hooks, info
    and every worktree's administrative folder read-only; the teammate's own folder (its HEAD,
    index, logs, a rebase under way) writable again except the files pointing git elsewhere."""
    read_only = [main_git / name for name in GIT_READ_ONLY if (main_git / name).exists()]
    writable: list[Path] = []
    if admin is not None and admin.is_dir():
        writable.append(admin)
        read_only += [admin / n for n in WORKTREE_POINTERS if (admin / n).exists()]
    return read_only, writable


def sealed_names(roots: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """(folders, files) among the protected names that do not exist in the project roots."""
    dirs: list[Path] = []
    files: list[Path] = []
    for root in roots:
        if root.name == ".git" or not root.is_dir():
            continue
        dirs += [root / n for n in SEALED_DIRS if not os.path.lexists(root / n)]
        files += [root / n for n in SEALED_FILES if not os.path.lexists(root / n)]
    return dirs, files

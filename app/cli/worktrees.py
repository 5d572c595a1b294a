"""``--worktrees`` on ``teamdeck tui|demo|run``: each teammate in its own git worktree.

Checked before anything starts: outside a git repository (or in one without a commit) the
command fails with one line (``WorktreeError``, exit 1).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.runtime.team.git_worktrees import repository_root


def add_worktrees_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--worktrees",
        action="store_true",
        help="each teammate works in its own git worktree (branch teamdeck/<team>/<name>); "
        "removed at shutdown when clean, kept when it has changes; needs a git repository",
    )


def worktree_options(args: argparse.Namespace, *, demo: bool = False) -> dict[str, Any]:
    """Keyword options for the runtime (``{}`` without ``--worktrees``). The demo then works
    on the current repository instead of teamdeck's own files."""
    if not getattr(args, "worktrees", False):
        return {}
    cwd = Path.cwd()
    repository_root(cwd)  # WorktreeError: one line
    return {"worktrees": True, **({"cwd": cwd} if demo else {})}

"""The diffs the dialogs show, computed off the UI thread (git and the files are read in a
thread): what an edit request would change, and what an agent changed so far.

An agent's folder is its worktree (``--worktrees``) or the project's folder (the runtime's
working directory; this process's for a viewer). Its work so far is measured from the last
commit made before it started.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.runtime.api import AgentSnapshot, Approval, RuntimeAPI
from app.runtime.review.diffs import FileDiff, ReviewError, proposed_diff, work_diff


def project_folder(runtime: RuntimeAPI | None) -> Path:
    """The project the team works in."""
    cwd = getattr(runtime, "cwd", None)
    return Path(cwd) if isinstance(cwd, str | Path) else Path.cwd()


def agent_folder(agent: AgentSnapshot | None, project: Path) -> Path:
    return Path(agent.worktree) if agent is not None and agent.worktree else project


async def edit_diff(
    approval: Approval, agent: AgentSnapshot | None, project: Path
) -> FileDiff | None:
    """What ``approval`` (an Edit/Write/MultiEdit request) would change; ``None`` for other
    requests. A failure is the diff's one-line note, never an exception."""
    if approval.kind != "permission":
        return None
    folder = agent_folder(agent, project)
    try:
        return await asyncio.to_thread(
            proposed_diff, approval.tool_name, approval.tool_input, folder
        )
    except ReviewError as exc:
        path = str((approval.tool_input or {}).get("file_path", "the file"))
        return FileDiff(path, note=str(exc))


async def agent_work(agent: AgentSnapshot, project: Path) -> list[FileDiff] | str:
    """``agent``'s work so far, file by file, or one line saying why it cannot be had."""
    folder = agent_folder(agent, project)
    worktree = project if agent.worktree else None
    try:
        return await asyncio.to_thread(work_diff, folder, agent.started_at, worktree)
    except ReviewError as exc:
        return str(exc)

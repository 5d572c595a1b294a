"""The offline lead on a resumed team (``teamdeck --team NAME``, ``teamdeck attach``).

The runtime tells the lead it leads a team again (a note starting with :data:`RESUMED`: the
team as it was left on disk, its teammates that no longer ran gone, their unfinished tasks back
on the board). The lead then carries on with the open work as a person expects: a teammate for
each open task nobody owns once it is unblocked (later ones as their blockers complete), and
when all are completed the usual shutdown and clean-up.
"""

from __future__ import annotations

from typing import Any

from app.runtime.offline.history import History
from app.runtime.offline.plans import Block, tool_use

#: How the runtime's note on a resumed team starts (``app.runtime.team.runtime``).
RESUMED = "[resumed team "


def resumed_at(history: History) -> int | None:
    """Where the latest resume note reached the lead (``None``: never resumed)."""
    notes = [m.index for m in history.incoming if m.sender is None and RESUMED in m.text]
    return notes[-1] if notes else None


def resume_spawns(history: History, tasks: list[dict[str, Any]]) -> list[Block]:
    """The Task spawns for the open tasks of a resumed team that nobody owns and nothing
    blocks, one teammate each (none twice for a task since the resume)."""
    since = resumed_at(history)
    if since is None:
        return []
    taken = {_task_in(str(c.input.get("prompt", ""))) for c in history.calls_named("Task", since)}
    # Numbered in the order they are spawned (worker-1, worker-2, ...), not by task id: named
    # after their tasks' ids (worker-1, worker-3) they read as if one had gone missing.
    used = {str(c.input.get("name", "")) for c in history.calls_named("Task")}
    number = 0
    spawns: list[Block] = []
    for task in tasks:
        task_id = str(task.get("id"))
        if task.get("status") == "completed" or task.get("owner") or task.get("blockedBy"):
            continue
        if task_id in taken:
            continue
        subject = str(task.get("subject", ""))
        number += 1
        while f"worker-{number}" in used:
            number += 1
        name = f"worker-{number}"
        spawns.append(
            tool_use(
                "Task",
                {
                    "description": subject,
                    "name": name,
                    "subagent_type": "general-purpose",
                    "prompt": f"You are {name}. Your task is #{task_id}: {subject}. "
                    "The team was resumed: carry on with it.",
                },
            )
        )
    return spawns


def _task_in(prompt: str) -> str:
    marker = "Your task is #"
    if marker not in prompt:
        return ""
    return prompt.split(marker, 1)[1].split(":", 1)[0]

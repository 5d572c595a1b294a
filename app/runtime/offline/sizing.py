"""A sized team for the offline lead: ``N teammates`` and ``M tasks`` said in the goal.

``teamdeck run GOAL --teammates N --tasks M`` says the size in the goal's words (``(use 50
teammates and 200 tasks)``), which a real model reads too. Without a size the offline lead makes
its three roles; with one it makes ``M`` tasks (the roles' three actions in turn, none blocked)
and ``N`` teammates ``worker-1..N``, gives each one a first task, and leaves the rest on the board
for whoever is idle to claim. No teammate is in plan mode: a sized run is a throughput run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.runtime.offline.plans import ResponsePlan, reply, text, tool_use

#: The most teammates or tasks a goal may ask the offline lead for.
MOST = 1000
_TEAMMATES = re.compile(r"\b(\d{1,5})\s+(?:teammates|workers|agents)\b", re.IGNORECASE)
_TASKS = re.compile(r"\b(\d{1,5})\s+tasks\b", re.IGNORECASE)
#: When only the task count is said.
DEFAULT_TEAMMATES = 3
#: The work of the ``k``-th task: (subject, action), in turn.
WORK = (
    ("Inventory the files", "inventory"),
    ("Map the definitions", "definitions"),
    ("Summarize what each file does", "summarize"),
)


@dataclass(frozen=True)
class Size:
    teammates: int
    tasks: int


def team_size(goal: str) -> Size | None:
    """The size the goal asks for (``None``: it says none); each count from 1 to ``MOST``."""
    mates = _TEAMMATES.search(goal)
    tasks = _TASKS.search(goal)
    if mates is None and tasks is None:
        return None
    n = int(mates.group(1)) if mates else None
    m = int(tasks.group(1)) if tasks else None
    n = n if n is not None else DEFAULT_TEAMMATES
    m = m if m is not None else n
    return Size(max(1, min(n, MOST)), max(1, min(m, MOST)))


def create_tasks(size: Size, goal: str, pattern: str) -> ResponsePlan:
    """One response creating every task."""
    blocks = []
    for k in range(size.tasks):
        subject, action = WORK[k % len(WORK)]
        blocks.append(
            tool_use(
                "TaskCreate",
                {
                    "subject": f"{subject} (part {k + 1})",
                    "description": (
                        f"Part {k + 1} of {size.tasks} (action: {action}, files: {pattern}). "
                        f"Goal: {goal}"
                    ),
                    "activeForm": f"Working on part {k + 1}",
                },
            )
        )
    return reply(*blocks)


def spawn_workers(size: Size, ids: list[str], goal: str, pattern: str) -> ResponsePlan:
    """One response spawning every teammate, each with a first task while there are some."""
    blocks = []
    for k in range(size.teammates):
        name = f"worker-{k + 1}"
        if k < len(ids):
            _, action = WORK[k % len(WORK)]
            first = f"Your task is #{ids[k]} (action: {action}, files: {pattern}). "
        else:
            first = "Take tasks from the shared task list as they come free. "
        blocks.append(
            tool_use(
                "Task",
                {
                    "description": f"worker {k + 1}",
                    "name": name,
                    "subagent_type": "worker",
                    "prompt": f"You are {name}. {first}Goal: {goal}",
                },
            )
        )
    return reply(text(f"Spawning {size.teammates} teammates."), *blocks)


def assign_owners(ids: list[str], names: list[str]) -> ResponsePlan:
    """One response giving each teammate its first task."""
    return reply(
        *(
            tool_use("TaskUpdate", {"taskId": i, "owner": n})
            for i, n in zip(ids, names, strict=False)
        )
    )

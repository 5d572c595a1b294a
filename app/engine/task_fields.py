"""A task's fields as the engine's ``teamdeck.tasks`` row holds them, and their stamp (what a
relay compares to see whether a side changed a task since its last pass). Shared by the board
(``board``) and its one-call claims (``board_claims``)."""

from __future__ import annotations

import json
from typing import Any

from app.core.models import Task

FIELDS = ("subject", "description", "active_form", "status", "owner", "blocks", "blocked_by",
          "metadata")  # fmt: skip


def fields_of(task: Task) -> dict[str, Any]:
    return {
        "subject": task.subject,
        "description": task.description,
        "active_form": task.active_form,
        "status": task.status,
        "owner": task.owner or None,
        "blocks": list(task.blocks),
        "blocked_by": list(task.blocked_by),
        "metadata": task.metadata,
    }


def stamp(fields: dict[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, default=str)

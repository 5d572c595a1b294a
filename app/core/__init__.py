"""The on-disk team protocol: files, locks and frames compatible with Claude Code's agent teams.

Pure Python + pydantic + filelock + watchfiles; never imports Textual.

The names below are imported lazily (on first use), so that importing one light module of the
package (``app.core.errors``, ``app.core.paths``) does not load the pydantic models, the
locks and the watcher: ``teamdeck --help`` stays quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.errors import (
        CorruptFileError,
        DependencyCycleError,
        InvalidNameError,
        LockTimeoutError,
        NameCollisionError,
        NotFoundError,
        TeamdeckError,
        TeamNotEmptyError,
        UnknownRecipientError,
        UnsafePathError,
    )
    from app.core.events import (
        ChangeEvent,
        InboxChanged,
        InboxRead,
        TaskChanged,
        TaskState,
        TeamChanged,
        TeamRemoved,
    )
    from app.core.home import Home
    from app.core.mailbox import Mailbox
    from app.core.models import InboxMessage, Task, TeamConfig, TeamMember
    from app.core.paths import LEAD_NAME, USER_NAME, agent_id, parse_agent_id, sanitize_name
    from app.core.tasks import ClaimResult, TaskList, UnassignResult
    from app.core.teams import Teams

_WHERE = {
    "CorruptFileError": "app.core.errors",
    "DependencyCycleError": "app.core.errors",
    "InvalidNameError": "app.core.errors",
    "LockTimeoutError": "app.core.errors",
    "NameCollisionError": "app.core.errors",
    "NotFoundError": "app.core.errors",
    "TeamdeckError": "app.core.errors",
    "TeamNotEmptyError": "app.core.errors",
    "UnknownRecipientError": "app.core.errors",
    "UnsafePathError": "app.core.errors",
    "ChangeEvent": "app.core.events",
    "InboxChanged": "app.core.events",
    "InboxRead": "app.core.events",
    "TaskChanged": "app.core.events",
    "TaskState": "app.core.events",
    "TeamChanged": "app.core.events",
    "TeamRemoved": "app.core.events",
    "Home": "app.core.home",
    "Mailbox": "app.core.mailbox",
    "InboxMessage": "app.core.models",
    "Task": "app.core.models",
    "TeamConfig": "app.core.models",
    "TeamMember": "app.core.models",
    "LEAD_NAME": "app.core.paths",
    "USER_NAME": "app.core.paths",
    "agent_id": "app.core.paths",
    "parse_agent_id": "app.core.paths",
    "sanitize_name": "app.core.paths",
    "ClaimResult": "app.core.tasks",
    "TaskList": "app.core.tasks",
    "UnassignResult": "app.core.tasks",
    "Teams": "app.core.teams",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'app.core' has no attribute {name!r}")


__all__ = [
    "LEAD_NAME",
    "USER_NAME",
    "ChangeEvent",
    "ClaimResult",
    "CorruptFileError",
    "DependencyCycleError",
    "Home",
    "InboxChanged",
    "InboxRead",
    "InboxMessage",
    "InvalidNameError",
    "LockTimeoutError",
    "Mailbox",
    "NameCollisionError",
    "NotFoundError",
    "Task",
    "TaskChanged",
    "TaskList",
    "TaskState",
    "TeamChanged",
    "TeamConfig",
    "TeamMember",
    "TeamNotEmptyError",
    "TeamRemoved",
    "Teams",
    "TeamdeckError",
    "UnassignResult",
    "UnknownRecipientError",
    "UnsafePathError",
    "agent_id",
    "parse_agent_id",
    "sanitize_name",
]

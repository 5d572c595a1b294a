"""The on-disk team protocol: files, locks and frames compatible with Claude Code's agent teams.

Pure Python + pydantic + filelock + watchfiles; never imports Textual.
"""

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

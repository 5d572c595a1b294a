"""Errors raised by the on-disk protocol layer.

Every error carries a one-line, user-facing message that names the file or the name at fault,
so the CLI and the dashboard can show it as is (no traceback for a user error).
"""

from __future__ import annotations

from pathlib import Path


class TeamdeckError(Exception):
    """Base class: a failed operation with a one-line explanation."""


class InvalidNameError(TeamdeckError, ValueError):
    """A team or agent name that cannot be used (empty, a path, sanitises to nothing...)."""


class NameCollisionError(TeamdeckError):
    """A name that collides with an existing member after sanitising and lower-casing."""


class NotFoundError(TeamdeckError, LookupError):
    """A team, task or member that does not exist."""


class UnknownRecipientError(NotFoundError):
    """A message addressed to a name that is not a member of the team."""


class CorruptFileError(TeamdeckError):
    """A file that does not parse (after retries). A copy was moved aside; nothing was replaced."""

    def __init__(self, path: Path, reason: str, saved_copy: Path | None = None) -> None:
        self.path = path
        self.reason = reason
        self.saved_copy = saved_copy
        where = f"; a copy was saved as {saved_copy.name}" if saved_copy else ""
        super().__init__(f"{path} is corrupt ({reason}){where}; repair or remove it")


class UnsafePathError(TeamdeckError):
    """A path that escapes the home or is a symlink where a regular file is expected."""


class UnreadableFileError(CorruptFileError, UnsafePathError):
    """A file that is not a regular file (a symlink, a FIFO, a folder...) where one is expected.
    A CorruptFileError too, so a listing warns about it and goes on, as for a corrupt file."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        self.saved_copy = None
        TeamdeckError.__init__(self, f"{reason}; remove it or replace it with a regular file")


class TooLargeError(TeamdeckError):
    """A message over the size limit, or one that would take an inbox over its cap."""


class LockTimeoutError(TeamdeckError, TimeoutError):
    """A lock that could not be taken in time. Never reported as an empty result."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        super().__init__(f"could not lock {path} within {timeout:g}s (another writer holds it)")


class DependencyCycleError(TeamdeckError):
    """A task dependency that would make a cycle."""


class TaskBlockedError(TeamdeckError):
    """A task cannot start: tasks it is blocked by are unfinished."""

    def __init__(self, task_id: str, blockers: list[str]) -> None:
        self.task_id = task_id
        self.blockers = blockers
        listing = ", ".join(f"#{b}" for b in blockers)
        super().__init__(
            f"task #{task_id} cannot start: it is blocked by unfinished task(s) {listing}"
        )


class TeamNotEmptyError(TeamdeckError):
    """TeamDelete refused: members other than the lead remain."""


class DiskFullError(TeamdeckError, OSError):
    """A write that failed because the disk (or the user's quota) is full: one line naming the
    path, ``No space left on device: {path}``. Still an OSError (errno ENOSPC/EDQUOT), so code
    that degrades on any OSError keeps doing so."""

    def __init__(self, errno_: int, path: Path | str) -> None:
        super().__init__(errno_, "No space left on device", str(path))
        self.path = Path(path)

    def __str__(self) -> str:
        return f"No space left on device: {self.path}"


def clip(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters with "…" (an error line never echoes a 5,000-character
    input in full)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"

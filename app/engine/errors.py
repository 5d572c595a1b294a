"""The engine's errors: each says in one line what went wrong."""

from __future__ import annotations

from app.core.errors import TeamdeckError


class EngineError(TeamdeckError):
    """The engine could not do what was asked (the message says why)."""


class EngineUnavailableError(EngineError):
    """The server could not be reached within the retry deadline."""


class EngineVersionError(EngineError):
    """The database's schema is not the one this teamdeck speaks."""


class AccessRefusedError(EngineError, PermissionError):
    """The server refused: this role may not do that (row-level security or a grant)."""


class AlreadyAnsweredError(EngineError):
    """The request has an answer already: the first answer won."""

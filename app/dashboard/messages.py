"""Messages the views and the command palette post up; the app (or the screen, for the ones
that need a dialog) acts on them. Nothing here calls anything: a view says what the person
asked for and the owner of that state decides.

Handled by ``TeamDeckApp`` (they change its reactives or its screens):
``SelectAgent``, ``OpenAgent``, ``ShowLeader``, ``FilterFeed``, ``ToggleBoard``, ``SwitchTeam``,
``ApprovalSettled``.

Handled by the active ``DeckScreen`` (they may ask the person first):
``AskShutdown``, ``AskKill``, ``AskInterrupt``, ``AskSpawn``.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class SelectAgent(Message):
    """Select ``name`` (the feed filter, if on, follows the selection)."""

    name: str


@dataclass
class OpenAgent(Message):
    """Select ``name`` and show its view."""

    name: str


class ShowLeader(Message):
    """Back to the leader view (closes any agent view)."""


@dataclass
class FilterFeed(Message):
    """Show only what ``agent`` sent or received (``None``: everything)."""

    agent: str | None


class ToggleBoard(Message):
    """Show or hide the task board."""


@dataclass
class SwitchTeam(Message):
    """Show another team of the home (everything is read again)."""

    team: str | None


@dataclass
class ApprovalSettled(Message):
    """The request ``request_id`` is no longer pending: stop showing it."""

    request_id: str


@dataclass
class AskShutdown(Message):
    """Ask ``name`` to shut down."""

    name: str


@dataclass
class AskKill(Message):
    """Kill ``name`` once the person confirms."""

    name: str


@dataclass
class AskInterrupt(Message):
    """Stop ``name``'s current turn."""

    name: str


class AskSpawn(Message):
    """Ask the person for a new teammate's name, prompt and permission mode, then spawn it."""

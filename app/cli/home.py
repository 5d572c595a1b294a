"""The home a ``teamdeck`` command works on, and the names typed into it.

Shared by every command module (``app.cli.main`` and the ones it registers), below all of them, so
that none of them has to import the CLI's entry point back.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.paths import (
    check_raw_name,
    claude_home,
    default_home,
    existing_team,
    strip_team_suffix,
)

if TYPE_CHECKING:
    from app.core.home import Home
    from app.core.mailbox import Mailbox


def home_location(args: argparse.Namespace) -> tuple[Path, bool]:
    """The home root the arguments select, and whether it is Claude Code's."""
    if getattr(args, "claude", False):
        return claude_home(), True
    home = getattr(args, "home", None)
    return (Path(home).expanduser() if home else default_home()), False


def open_home(args: argparse.Namespace) -> Home:
    from app.core.home import Home  # the files, locks and models: only once a command runs

    root, is_claude = home_location(args)
    return Home(root, lock_style="mkdir") if is_claude else Home(root)


def resolve_team(home: Home, name: str) -> str:
    """The on-disk name of a team given as typed (see :func:`app.core.paths.existing_team`)."""
    return existing_team(home.layout, name)


def resolve_inbox_agent(box: Mailbox, agent: str) -> str:
    """The agent whose inbox to read: an existing inbox file (former members included), else a
    current member (whose inbox may not exist yet); UnknownRecipientError otherwise."""
    name = strip_team_suffix(agent.strip())
    check_raw_name(name, "agent name")
    if box.path(name).is_file():
        return name
    for existing in box.agents():
        if existing.lower() == name.lower():
            return existing
    return box.resolve_recipient(name)

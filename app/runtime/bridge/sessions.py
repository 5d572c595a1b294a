"""Which team a Claude Code session leads, and how a request names where it comes from.

Claude Code 2.1.332 names a team after its lead's session (``session-<first 8 hex>``) unless
the lead chose a name (``TeamCreate``); the team's ``config.json`` names the session that leads
it (``leadSessionId``). Several sessions may run on one Claude Code home, so every request
carries its session, its team and its folder, and the dashboard answers only the team it
steers (``app.dashboard.claude_bridge``).
"""

from __future__ import annotations

import json
from pathlib import Path


def default_team(session: str) -> str | None:
    """The name Claude Code gives the team a session leads, until it names one itself."""
    return f"session-{session[:8]}" if session else None


def team_of_session(session: str, config_dir: str | None) -> str | None:
    """The team whose ``leadSessionId`` is ``session`` in the Claude Code home ``config_dir``
    (``None``: ``~/.claude``), else the name Claude Code gives it by default."""
    if not session:
        return None
    base = Path(config_dir) if config_dir else Path.home() / ".claude"
    try:
        configs = sorted((base / "teams").glob("*/config.json"))
    except OSError:
        configs = []
    for config in configs:
        try:
            data = json.loads(config.read_bytes())
        except (OSError, ValueError):
            continue  # unreadable now: the default name below, never another team's
        if isinstance(data, dict) and data.get("leadSessionId") == session:
            name = data.get("name")
            return name if isinstance(name, str) and name else config.parent.name
    return default_team(session)


def origin(session: str, team: str | None, folder: str) -> str:
    """``Claude Code session 510c9ba6 · team session-510c9ba6 · /home/me/project``."""
    parts = [f"Claude Code session {session[:8] or '?'}"]
    if team:
        parts.append(f"team {team}")
    if folder:
        parts.append(folder)
    return " · ".join(parts)

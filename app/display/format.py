"""Display helpers for the dashboard's text: colours, times, counts (no Textual).

Messages and frames are put into words by :mod:`app.core.frame_text` (the one vocabulary the
feed, the CLI and headless output share); its names are imported here for the views.
"""

from __future__ import annotations

from datetime import datetime

from app.core.frame_text import FeedLine, agent_name, describe, one_line
from app.runtime.api import AgentSnapshot
from app.runtime.model.pricing import format_usd

__all__ = [
    "FeedLine",
    "agent_name",
    "describe",
    "format_count",
    "format_elapsed",
    "one_line",
    "rich_color",
    "short_time",
]

#: Claude Code's teammate colour names -> Rich colour names.
RICH_COLORS: dict[str, str] = {
    "blue": "dodger_blue2",
    "green": "green3",
    "yellow": "yellow3",
    "magenta": "magenta",
    "cyan": "dark_cyan",
    "red": "red3",
    "orange": "dark_orange",
    "purple": "medium_purple",
    "pink": "hot_pink",
}


def rich_color(name: str | None, default: str = "default") -> str:
    """A Rich colour for a teammate colour name (unknown names pass through if Rich knows them)."""
    if not name:
        return default
    return RICH_COLORS.get(name.lower(), name.lower())


def short_time(timestamp: str, now: float | None = None) -> str:
    """``2026-01-02T03:04:05.678Z`` -> ``03:04:05`` in local time; the raw text if unparseable.

    With ``now`` (epoch seconds, the caller's clock), a moment of another day says which:
    ``Nov 20 14:02`` (another year: ``2025-11-20 14:02``), so a week-old event never reads as
    today's."""
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return timestamp[:8]
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    if now is not None:
        today = datetime.fromtimestamp(now, moment.tzinfo).date()
        if moment.date() != today:
            if moment.year != today.year:
                return moment.strftime("%Y-%m-%d %H:%M")
            return f"{moment.strftime('%b')} {moment.day} {moment.strftime('%H:%M')}"
    return moment.strftime("%H:%M:%S")


def agent_cost(agent: AgentSnapshot) -> str | None:
    """What an agent has cost so far (``$?`` once a call could not be priced); ``None`` for
    an agent whose calls are not counted here (another program's)."""
    if agent.cost_usd is None:
        return None
    return format_usd(None if agent.unpriced_calls else agent.cost_usd)


def format_count(n: int) -> str:
    """``950`` -> ``950``, ``12345`` -> ``12.3k``, ``2500000`` -> ``2.5M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def format_elapsed(seconds: float) -> str:
    """``75`` -> ``1:15``, ``3725`` -> ``1:02:05``; a day or more in days and hours
    (``31_950_000`` -> ``369d 19h``), never ``8875:00:00``."""
    total = max(0, int(seconds))
    days, in_day = divmod(total, 86_400)
    if days:
        return f"{days}d {in_day // 3600}h"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"

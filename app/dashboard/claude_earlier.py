"""A restarted ``teamdeck --claude`` rebuilds the feed of the team shown from the run archive.

Claude Code consumes its inboxes at once, so what its hooks told an earlier dashboard (who
started, asked, was answered, went idle) exists only in the archive's ``claude-hook`` rows
(``app.archive.from_hooks``). When a team is first shown, the lines of its earlier runs that
happened before this dashboard started are read (in a thread) and join the feed; everything
after comes live. Each event is a row of exactly one run, and only rows from before this start
are read, so no line shows twice.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.frame_text import FeedLine
from app.core.paths import USER_NAME
from app.dashboard.streams import HookLines
from app.display.values import FeedItem
from app.runtime.bridge.server import ANSWERED

#: How far back: the team's last runs, and at most this many lines of them.
EARLIER_RUNS = 5
EARLIER_LINES = 300


def _iso(at: float) -> str:
    moment = datetime.fromtimestamp(at, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def earlier_lines(path: Path, team: str, before: float) -> list[tuple[str | None, FeedItem]]:
    """The feed items of ``team``'s earlier runs' hook events that happened before ``before``
    (``[]`` when there is no archive yet, or it cannot be read)."""
    from app.archive.db import HistoryUnavailable
    from app.archive.query import events, list_runs, open_reader

    try:
        conn = open_reader(path)
    except (HistoryUnavailable, OSError, sqlite3.Error):
        return []
    found = []
    try:
        runs = [r for r in list_runs(conn) if r.team == team][:EARLIER_RUNS]
        for run in runs:
            for event in events(conn, run.id, kinds=("claude-hook",)):
                if event.at < before and event.text and event.text != event.frame:
                    found.append(event)
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    found.sort(key=lambda e: (e.at, e.id))
    items: list[tuple[str | None, FeedItem]] = []
    for event in found[-EARLIER_LINES:]:
        agent = USER_NAME if event.frame == ANSWERED else (event.agent or "?")
        words = FeedLine(agent, None, event.text, "hook")
        items.append(
            (team, FeedItem(_iso(event.at), -event.id, agent, (), event.text, None, words))
        )
    return items


def replay_earlier(app: Any, team: str, before: float) -> None:
    """Read ``team``'s earlier lines in a thread; they join ``app``'s feed when read."""
    path = getattr(app, "history_path", None)
    if not isinstance(path, Path):
        return

    def read() -> None:
        items = earlier_lines(path, team, before)
        if items:
            with contextlib.suppress(Exception):  # the app may be leaving
                app.call_from_thread(app.streamed.publish, HookLines(items))

    threading.Thread(target=read, name="claude-earlier", daemon=True).start()

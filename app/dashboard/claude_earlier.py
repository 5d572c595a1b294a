"""A restarted ``teamdeck --claude`` rebuilds the feed of the team shown from the run archive.

Claude Code consumes its inboxes at once, so what its hooks told an earlier dashboard (who
started, asked, was answered, went idle) exists only in the archive's ``claude-hook`` rows
(``app.archive.from_hooks``). When a team is first shown, the events of its earlier runs that
happened before this dashboard started are read (in a thread): their lines join the feed and
their statuses the hooks' facts (a teammate still waiting at Claude Code's prompt is "awaiting
approval", not "running"); everything after comes live. Each event is a row of exactly one run,
and only rows from before this start are read, so no line shows twice.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.frame_text import FeedLine
from app.core.paths import USER_NAME
from app.dashboard.streams import HookLines
from app.display.feed_facts import idle_fact
from app.display.values import FeedItem
from app.runtime.bridge.facts import IDLE_EVENTS, REQUEST_EVENTS, RUNNING_EVENTS, HookFacts
from app.runtime.bridge.hold import Sender
from app.runtime.bridge.server import ANSWERED, HookEvent

if TYPE_CHECKING:
    from app.archive.query import Event

#: Events whose status ``facts`` takes besides the running and idle ones.
STATUS_EVENTS = frozenset({"Stop", "SessionEnd", "Notification"})

#: How far back: the team's last runs, and at most this many lines of them.
EARLIER_RUNS = 5
EARLIER_LINES = 300


def _iso(at: float) -> str:
    moment = datetime.fromtimestamp(at, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def earlier_events(path: Path, team: str, before: float) -> list[Event]:
    """``team``'s earlier runs' hook events that happened before ``before``, oldest first
    (``[]`` when there is no archive yet, or it cannot be read)."""
    from app.archive.db import HistoryUnavailable
    from app.archive.query import events, list_runs, open_reader

    try:
        conn = open_reader(path)
    except (HistoryUnavailable, OSError, sqlite3.Error):
        return []
    found: list[Event] = []
    try:
        runs = [r for r in list_runs(conn) if r.team == team][:EARLIER_RUNS]
        for run in runs:
            found.extend(e for e in events(conn, run.id, kinds=("claude-hook",)) if e.at < before)
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    found.sort(key=lambda e: (e.at, e.id))
    return found


def feed_items(team: str, found: list[Event]) -> list[tuple[str | None, FeedItem]]:
    """The feed's lines of those events (the last ``EARLIER_LINES``)."""
    worded = [e for e in found if e.text and e.text != e.frame]
    items: list[tuple[str | None, FeedItem]] = []
    for event in worded[-EARLIER_LINES:]:
        agent = USER_NAME if event.frame == ANSWERED else (event.agent or "?")
        words = FeedLine(agent, None, event.text, "hook")
        item = FeedItem(_iso(event.at), -event.id, agent, (), event.text, None, words)
        if event.frame == "TeammateIdle":
            item.fact = idle_fact(agent)  # the lead's inbox tells it too (FeedItem.fact_key)
        items.append((team, item))
    return items


def hook_events(team: str, found: list[Event]) -> list[HookEvent]:
    """Those events again, for the statuses they imply (``facts``): who was waiting at Claude
    Code's prompt, idle, completed when the earlier dashboard stopped."""
    rebuilt = []
    for event in found:
        data = event.data or {}
        if event.frame and event.agent and status_of_frame(event.frame):
            who = Sender(event.agent, team, str(data.get("session_id") or ""))
            rebuilt.append(HookEvent(event.frame, data, who, at=event.at))
    return rebuilt


def status_of_frame(frame: str) -> bool:
    return (
        frame in RUNNING_EVENTS
        or frame in IDLE_EVENTS
        or frame in STATUS_EVENTS
        or frame in REQUEST_EVENTS
    )


def replay_earlier(
    app: Any, facts: HookFacts, team: str, before: float, changed: Callable[[], None]
) -> None:
    """Read ``team``'s earlier hook events in a thread: their statuses go into ``facts`` (a
    later live event wins; ``changed`` is told) and their lines join ``app``'s feed."""
    path = getattr(app, "history_path", None)
    if not isinstance(path, Path):
        return

    def read() -> None:
        found = earlier_events(path, team, before)
        noted = [facts.note(event) for event in hook_events(team, found)]
        items = feed_items(team, found)
        with contextlib.suppress(Exception):  # the app may be leaving
            if items:
                app.call_from_thread(app.streamed.publish, HookLines(items))
            if any(noted):
                changed()

    threading.Thread(target=read, name="claude-earlier", daemon=True).start()

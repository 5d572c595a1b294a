"""Calls the person when they are needed (``app.runtime.review.notify`` sends): a plan or
permission request that has waited ``notify.after`` seconds, the team's run ending (finished
or failed), the budget passing 80%. Each event once: a notification to the configured apprise
URLs (none: nothing leaves the machine), a ring of the terminal (BEL; OSC 9, a desktop
notification, where the terminal is known to show it), and a line in the feed saying what was
sent or why it failed.

The checks run on the app's one-second tick and only queue work; the sending is the
notifier's worker thread, which reports back through ``call_from_thread``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textual.app import App

from app.core.frame_text import FeedLine
from app.core.models import now_iso
from app.core.paths import default_home
from app.dashboard.streams import HookLines, RunEnded, Streamed
from app.display.values import FeedItem, request_label
from app.runtime.api import Approval
from app.runtime.permissions.settings import SettingsError, read_settings_file, settings_paths
from app.runtime.review.notify import Notifier, NotifySettings, notify_settings

#: Terminals that show OSC 9 as a desktop notification (others would print it or ignore it).
OSC9_TERMINALS = ("iTerm.app", "WezTerm", "ghostty")
SENDER = "teamdeck"


def load_notify_settings(cwd: Path, urls: Sequence[str]) -> tuple[NotifySettings, list[str]]:
    """The ``notify`` settings of ``cwd``'s settings files, plus ``--notify`` ``urls``."""
    files: list[dict[str, Any]] = []
    warnings: list[str] = []
    for _, path in settings_paths(cwd):
        try:
            data = read_settings_file(path)
        except (OSError, SettingsError) as exc:
            warnings.append(str(exc))  # said by the permission settings too; kept short here
            continue
        if data is not None:
            files.append(data)
    settings, bad = notify_settings(files, urls)
    return settings, warnings + bad


def answer_command(approval: Approval, home_root: Path, claude: bool) -> str:
    """The exact command that answers ``approval`` from another terminal."""
    where = " --claude" if claude else ""
    if not claude and home_root.resolve() != default_home().resolve():
        where = f" --home {home_root}"
    return f"teamdeck{where} approve {approval.request_id}"


class NotifyWatch:
    """See the module docstring; ``start`` it once the app is mounted."""

    def __init__(self, settings: NotifySettings, warnings: Sequence[str] = ()) -> None:
        self.settings = settings
        self.warnings = list(warnings)
        self.notifier = Notifier(settings, self._reported)
        self._app: Any = None
        self._seq = itertools.count(1_000_000)
        self.rang = 0  # times the terminal was rung (tests read it)

    def start(self, app: Any) -> None:
        self._app = app
        for line in self.warnings:
            app.notify(line, severity="warning", title="Notifications", markup=False)
        app.set_interval(1.0, self.check)
        app.streamed.subscribe(app, self._streamed)
        budget = getattr(app, "budget", None)
        if budget is not None and hasattr(budget, "listeners"):
            budget.listeners.append(self._budget)

    def stop(self) -> None:
        self.notifier.close()

    # ------------------------------------------------------------------ events

    def check(self) -> None:
        """Requests that have waited long enough for the person (run every second)."""
        app = self._app
        now = app.clock()
        for approval in app.approvals:
            if approval.kind == "shutdown" or approval.outcome is not None:
                continue  # a shutdown request is its teammate's to answer
            if now - approval.created_at < self.settings.after:
                continue
            waited = int(now - approval.created_at)
            command = answer_command(approval, app.home.root, app.home.is_claude)
            self._event(
                f"request:{approval.request_id}",
                f"teamdeck: {approval.agent} waits for you",
                f"{request_label(approval, detail=120)} has waited {waited}s for you. "
                f"Answer it in the dashboard, or run: {command}",
            )

    def _streamed(self, item: Streamed) -> None:
        if isinstance(item, RunEnded):
            team = self._app.files.team or "the team"
            verb = "finished" if item.ok else "failed"
            self._event(
                f"run:{team}:{next(self._seq)}",
                f"teamdeck: {team} {verb}",
                f"{team} {verb}: {item.reason}",
            )

    def _budget(self, budget: Any, what: str) -> None:
        if what == "warning":
            self._event(
                f"budget:{budget.limit}",
                "teamdeck: the budget passed 80%",
                f"Spent {budget.describe()}. Raise it from the palette (ctrl+p) or let the team "
                "stop at the limit.",
            )

    def _event(self, key: str, title: str, body: str) -> None:
        if not self.notifier.notify(key, title, body):
            return  # told before
        if self.settings.bell:
            self._ring(title)

    def _ring(self, title: str) -> None:
        app: App[Any] = self._app
        self.rang += 1
        app.bell()
        driver = getattr(app, "_driver", None)
        if driver is not None and not app.is_headless and osc9_supported():
            clean = "".join(c for c in title if c.isprintable())
            driver.write(f"\x1b]9;{clean}\x07")

    # ------------------------------------------------------------------ worker -> feed

    def _reported(self, key: str, ok: bool, line: str) -> None:  # the worker thread
        app = self._app
        if app is not None and app.is_running:
            app.call_from_thread(self._feed_line, line)

    def _feed_line(self, line: str) -> None:
        item = FeedItem(
            now_iso(),
            -next(self._seq),
            SENDER,
            (),
            line,
            None,
            FeedLine(SENDER, None, line, "notify"),
        )
        self._app.streamed.publish(HookLines([(self._app.files.team, item)]))


def osc9_supported() -> bool:
    return os.environ.get("TERM_PROGRAM", "") in OSC9_TERMINALS


def attach_notifications(app: Any, cwd: Path, urls: Sequence[str]) -> NotifyWatch:
    """Give ``app`` its ``NotifyWatch`` (started when the app mounts)."""
    settings, warnings = load_notify_settings(cwd, urls)
    watch = NotifyWatch(settings, warnings)
    app.notify_watch = watch
    return watch

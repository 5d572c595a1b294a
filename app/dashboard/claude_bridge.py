"""The dashboard's end of the hook bridge (``teamdeck --claude`` after ``teamdeck claude
setup``): it listens on the bridge's socket while it runs, so Claude Code's permission and plan
requests join its approvals queue (answered with its keys, or with ``teamdeck approve`` from
another terminal), and the hooks' lifecycle events reach it as they happen.

The listening itself is ``app.runtime.bridge.server`` (no Textual); this module turns its
callbacks, which come from the server's threads, into messages for the app. What the events say
(``app.runtime.bridge.facts``) goes where the files no longer can (Claude Code consumes its
inboxes): the panels' statuses (:meth:`BridgeLink.overlay`), a feed line, and the run archive.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.message import Message

from app.core.frame_text import FeedLine, one_line
from app.core.models import now_iso
from app.core.paths import USER_NAME
from app.dashboard.claude_earlier import replay_earlier
from app.dashboard.streams import HookLines
from app.display.feed_facts import idle_fact
from app.display.values import FeedItem, TeamFiles
from app.runtime.api import Approval
from app.runtime.bridge.facts import HookFacts, feed_text
from app.runtime.bridge.server import ANSWERED, Bridge, BridgeServer, HookEvent
from app.runtime.by_files.liveness import lead_alive, process_alive
from widgets.agent_text import agent_markup

#: Events worth a toast of their own (the others only update what is shown).
TOASTS = {
    "SessionStart": "a Claude Code session started",
    "SessionEnd": "a Claude Code session ended",
    "TeammateIdle": "{agent} is idle",
    "SubagentStop": "{agent} finished its turn",
}


#: How often the app's loop says it is alive, and how long that word holds: a held request is
#: acknowledged to its hook only while the loop keeps saying so (a stalled dashboard lets go).
BEAT_SECONDS = 0.25
ALIVE_SECONDS = 1.0

#: Events after which a transcript not found yet may exist (rare ones: each costs a search).
NEW_TRANSCRIPTS = frozenset(
    {"SessionStart", "SubagentStart", "SubagentStop", "TeammateIdle", "PermissionRequest"}
)


class BridgeChanged(Message):
    """The requests the bridge holds changed."""


@dataclass
class BridgeEventArrived(Message):
    """A hook reported an event."""

    event: HookEvent


class BridgeLink:
    """A :class:`Bridge` served on the socket while the app runs."""

    def __init__(self, bridge: Bridge | None = None, server: BridgeServer | None = None) -> None:
        self.bridge = bridge or Bridge()
        self.server = server or BridgeServer(self.bridge)
        self.facts = HookFacts()
        #: the statuses the files gave last (team, statuses, since): what :meth:`overlay`
        #: starts from, so a status the hooks no longer hold (an answered request) goes back
        self._base: tuple[str | None, dict[str, Any], dict[str, float]] = (None, {}, {})
        self._feed_seq = itertools.count(1_000_000)
        self._beat = time.monotonic()
        self._app: Any = None
        self._started = time.time()
        self._replayed: set[str] = set()  # teams whose earlier feed was read

    def beat(self) -> None:
        """The app's loop is alive (called every ``BEAT_SECONDS`` from it)."""
        self._beat = time.monotonic()

    def alive(self) -> bool:
        return time.monotonic() - self._beat < ALIVE_SECONDS

    def start(self, app: App[None]) -> str | None:
        """Listen, telling ``app``; a warning line when it cannot (another teamdeck does)."""

        def changed() -> None:
            app.post_message(BridgeChanged())

        def arrived(event: HookEvent) -> None:
            self.facts.note(event)
            app.post_message(BridgeEventArrived(event))

        self.bridge.on_change, self.bridge.on_event = changed, arrived
        self._app, self._started = app, time.time()
        self.beat()
        app.set_interval(BEAT_SECONDS, self.beat)
        self.bridge.alive = self.alive
        try:
            self.server.start()
        except OSError as exc:
            return f"Claude Code's hooks are not answered here: {exc}"
        return None

    def stop(self) -> None:
        """Stop listening: a request still waiting gets no decision (Claude Code asks)."""
        self.bridge.on_change = self.bridge.on_event = None
        self.server.stop()

    def pending(self) -> tuple[Approval, ...]:
        """The held requests: the team shown's first, then other sessions' apart, each
        labelled with its session, team and folder (never shown as this team's)."""
        team = self._base[0]
        mine: list[Approval] = []
        others: list[Approval] = []
        for approval in self.bridge.pending():
            if team is None or self.bridge.team_of(approval.request_id) == team:
                mine.append(approval)
            else:
                label = f"[other session: {approval.origin}] {approval.title}"
                others.append(dataclasses.replace(approval, title=one_line(label, 160)))
        return (*mine, *others)

    def overlay(self, files: TeamFiles, *, fresh: bool = False) -> TeamFiles:
        """``files`` with what the hooks say of its team's agents (``fresh``: ``files`` is the
        store's new word). The files' "gone" (left the config) stands; a request held here
        is "awaiting approval"; a pane teammate whose process is gone, or every agent once
        the config's ``leadProcess`` is, is "gone" (``app.runtime.by_files.liveness``) unless
        the person ended its session first (``/exit``): then it "completed"."""
        if fresh or self._base[0] != files.team:
            self._base = (files.team, dict(files.statuses), dict(files.status_since))
            self.bridge.steered = files.team
            if files.team and files.team not in self._replayed and self._app is not None:
                self._replayed.add(files.team)  # a restarted dashboard: the earlier feed
                app = self._app
                replay_earlier(
                    app,
                    self.facts,
                    files.team,
                    self._started,
                    lambda: app.post_message(BridgeChanged()),
                )
        statuses, since = dict(self._base[1]), dict(self._base[2])
        config = files.config
        members = {m.name for m in config.members} if config is not None else None
        for agent, fact in self.facts.of(files.team).items():
            if statuses.get(agent) == "gone":
                continue
            status = fact.status
            if not fact.ended and fact.pid is not None and process_alive(fact.pid) is False:
                status = "gone"  # a pane teammate's own process ended, not by the person's word
            if members is not None and agent not in members:
                if status not in ("completed", "gone"):
                    continue  # not in the config yet
                status = "gone"  # its session ended and Claude Code took it out: it left
            if statuses.get(agent) != status:
                statuses[agent], since[agent] = status, fact.since
        for agent in self.bridge.asking(files.team):
            statuses[agent] = "awaiting approval"
        if config is not None and lead_alive(config.extra_fields()) is False:
            # the lead's process ended: every agent is gone, but one whose session the person
            # ended (SessionEnd: /exit, /clear, logout) completed
            names = [m.name for m in config.members] + list(statuses)
            ended = {a for a, fact in self.facts.of(files.team).items() if fact.ended}
            statuses = {
                name: "completed" if statuses.get(name) == "completed" and name in ended else "gone"
                for name in names
            }
        if statuses == files.statuses and since == files.status_since:
            return files
        return dataclasses.replace(files, statuses=statuses, status_since=since)

    def arrived(self, app: Any, event: HookEvent) -> None:
        """An event reached the app: a toast for a few, a feed line, a row of the archive."""
        text = toast_text(event)
        if text:
            team = event.sender.team  # what the team did: not over another team's view
            app.notify_background(agent_markup(text), title="Claude Code", team=team, timeout=4)
        line = feed_text(event)
        if line:
            # a held request is only ever answered by the person: credited as everywhere else
            agent = USER_NAME if event.event == ANSWERED else event.sender.agent
            words = FeedLine(agent, None, line, "hook")
            fact = idle_fact(agent) if event.event == "TeammateIdle" else None
            item = FeedItem(now_iso(), -next(self._feed_seq), agent, (), line, None, words)
            item.fact = fact  # the lead's inbox tells it too (FeedItem.fact_key)
            app.streamed.publish(HookLines([(event.sender.team, item)]))
        files = getattr(app, "session_files", None)
        if event.event in NEW_TRANSCRIPTS and files is not None:
            look_again = getattr(files.source, "look_again", None)
            if look_again is not None:
                look_again()  # an agent's transcript may exist now
        recorder = getattr(app, "recorder", None)
        if recorder is not None:
            recorder.claude_hook(event)


def toast_text(event: HookEvent) -> str | None:
    template = TOASTS.get(event.event)
    return template.format(agent=event.sender.agent) if template else None

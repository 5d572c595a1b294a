"""The lead's inbox, scanned for the requests it holds (plan approvals, permissions).

Teammates of any mode ask the lead through its inbox file; every change to that file (the
watcher's ``InboxChanged``) asks for a scan, and each plan or permission request found is queued
in the runtime's approvals (:class:`app.runtime.approvals.Approvals`, idempotent per request),
where the person, the lead model or ``teamdeck approve`` answers it
(:mod:`app.runtime.team.answers`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from app.core import Home, authority
from app.core.errors import TeamdeckError
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME
from app.core.protocol import parse_frame
from app.runtime.api import AgentSnapshot
from app.runtime.approvals import Approvals, approval_from_frame
from app.runtime.scheduling import offload

log = logging.getLogger(__name__)


class LeadInbox:
    """Queues the requests found in the lead's inbox.

    Args:
        home: the home the team lives in.
        queue: the runtime's approvals queue.
        departed: the teammates that left the team (their requests are void).
        team: the team the lead leads now (``None``: none, nothing to scan).
        key: the team's key: only a request a teammate's runtime signed is queued (a
            frame-shaped text an agent sends is only text; ``app.core.authority``).
        queued: called when a new request is queued (the lead reads its mail without the
            hold that spaces out a flood: ``app.runtime.agent.mail_hold``).
    """

    def __init__(
        self,
        home: Home,
        queue: Approvals,
        departed: Mapping[str, AgentSnapshot],
        team: Callable[[], str | None],
        key: Callable[[], authority.TeamKey | None] = lambda: None,
        queued: Callable[[], None] = lambda: None,
    ) -> None:
        self._key = key
        self._queued = queued
        self.home = home
        self.queue = queue
        self.departed = departed
        self._team = team
        #: The read under way off the loop, and whether the inbox changed meanwhile.
        self._scan: asyncio.Future[None] | None = None
        self._rescan = False

    def observe(self, message: InboxMessage, frame: Any) -> None:
        """Queue a plan/permission request found in the lead's inbox (idempotent)."""
        approval = approval_from_frame(frame, sender=message.sender, timestamp=message.timestamp)
        if approval is None or authority.origin_of(self._key(), message.text, to=LEAD_NAME) is None:
            return
        if approval.agent not in self.departed and self.queue.add(approval):
            self._queued()  # ours, or a member another process runs

    def scan(self) -> None:
        """Queue the requests found in the lead's inbox. Reading it parses the whole inbox,
        which grows with the team and changes at every message: off the loop (the
        dashboard's keys wait behind it otherwise), one read at a time, and once more if it
        changed while being read."""
        team = self._team()
        if not team:
            return
        if self._scan is not None and not self._scan.done():
            self._rescan = True
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): read here
            self._observe_all(self._read(team))
            return
        self._scan = asyncio.ensure_future(self._scan_off_loop(team))

    async def _scan_off_loop(self, team: str) -> None:
        while True:
            self._rescan = False
            unread = await offload.off_loop(self._read, team)
            if team != self._team():
                return
            self._observe_all(unread)
            if not self._rescan:
                return

    def _read(self, team: str) -> list[InboxMessage] | None:
        try:
            return [message for _, message in self.home.mailbox(team).unread(LEAD_NAME)]
        except TeamdeckError as exc:
            log.warning("cannot read the lead's inbox: %s", exc)
            return None

    def _observe_all(self, unread: list[InboxMessage] | None) -> None:
        for message in unread or ():
            self.observe(message, parse_frame(message.text))

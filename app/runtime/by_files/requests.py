"""Requests and answers as the files hold them (no runtime needed: any team, e.g. Claude Code's).

A plan or permission request is *pending* while no response with its id exists in any inbox of
the team, whoever wrote it (the lead in Claude Code, teamdeck in another terminal, a script). A
shutdown request is pending while no ``shutdown_approved``/``shutdown_rejected`` carries its id.
Reading never writes: a team is scanned by reading its inbox files only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from app.core import authority
from app.core.errors import CorruptFileError, NotFoundError, TeamdeckError
from app.core.files import parse_with_retry
from app.core.frame_text import agent_name
from app.core.home import Home
from app.core.mailbox import parse_raw_inbox
from app.core.protocol import (
    Frame,
    PermissionRequest,
    PlanApprovalRequest,
    ShutdownApproved,
    ShutdownRejected,
    ShutdownRequest,
    parse_frame,
)
from app.runtime.api import Approval
from app.runtime.approvals import answered_id, approval_from_frame

#: Frames worth parsing here (any other text, frames like task_completed included, is only a
#: message): requests, their answers, shutdowns and idle notifications.
_TRACKED = re.compile(r'"type"\s*:\s*"(?:plan_approval_|permission_|shutdown_|idle_notification)')


@dataclass(frozen=True)
class FileRequest:
    """A plan or permission request found in a team's inboxes."""

    team: str
    approval: Approval
    frame: PlanApprovalRequest | PermissionRequest
    inbox: str  # whose inbox holds it (normally team-lead)
    timestamp: str

    @property
    def requester(self) -> str:
        """The teammate that asked: its inbox gets the answer."""
        return self.approval.agent


@dataclass(frozen=True)
class ShutdownAsk:
    """A shutdown request to a teammate, and its answer if there is one."""

    request_id: str
    agent: str  # who is asked to stop
    timestamp: str
    answer: str | None = None  # "approved" / "rejected" / None while pending
    answered_at: str = ""  # the answer's timestamp


@dataclass
class TeamRequests:
    """Everything request-shaped in one team's inboxes, built message by message (:meth:`note`):
    :func:`scan_team` reads a whole team at once, the dashboard's store notes each new message
    as it reads it (one tracker, kept up to date incrementally)."""

    team: str
    requests: dict[str, FileRequest] = field(default_factory=dict)  # by request id, file order
    #: The team's key: only answers and shutdowns signed with it count (None: an unsigned
    #: team, e.g. Claude Code's, where every frame counts). See ``app.core.authority``.
    key: authority.TeamKey | None = field(default=None, repr=False)
    answered: set[str] = field(default_factory=set)  # ids some response closes
    shutdowns: dict[str, ShutdownAsk] = field(default_factory=dict)
    idle_at: dict[str, str] = field(default_factory=dict)  # agent -> last idle notification time
    last_message_at: dict[str, str] = field(default_factory=dict)  # sender -> newest non-idle
    errors: dict[str, str] = field(default_factory=dict)  # inbox -> one-line error
    inboxes: list[str] = field(default_factory=list)  # every agent with an inbox file

    @property
    def pending(self) -> list[FileRequest]:
        """Unanswered plan and permission requests, oldest first."""
        waiting = [r for rid, r in self.requests.items() if rid not in self.answered]
        return sorted(waiting, key=lambda r: r.approval.created_at)

    def pending_shutdowns(self) -> list[ShutdownAsk]:
        return [s for s in self.shutdowns.values() if s.answer is None]

    def saw_inbox(self, inbox: str) -> None:
        """``inbox``'s file exists (it was read, even if it holds no message)."""
        if inbox not in self.inboxes:
            self.inboxes.append(inbox)

    @classmethod
    def of(cls, home: Home, team: str) -> TeamRequests:
        """An empty tracker for ``team``, with its key when it has one (a key file that
        cannot be read: a warning, and the tracker takes no answer as signed)."""
        if not team:
            return cls(team)
        try:
            return cls(team, key=authority.load_key(home.root, team))
        except TeamdeckError as exc:
            found = cls(team, key=authority.TeamKey(team, b"\0" * 32))
            found.errors["keys"] = str(exc)
            return found

    def signed(self, inbox: str, text: str, *, decides: bool) -> bool:
        """Whether ``text`` in ``inbox`` is a frame the team's runtime or desk wrote (not a
        frame-shaped text an agent sent); ``decides``: an answer, signed by a decider."""
        origin = authority.origin_of(self.key, text, to=inbox)
        if origin is None:
            return False
        return not decides or origin in authority.DECIDERS or origin == authority.UNSIGNED

    def note(self, inbox: str, entry: dict[str, Any]) -> None:
        """Take in one message of ``inbox`` (a raw inbox entry; any order of inboxes and
        messages gives the same result)."""
        _note(self, inbox, entry)


def inbox_names(home: Home, team: str) -> list[str]:
    """The agents with an inbox file in ``team`` (nothing created if the folder is missing)."""
    folder = home.layout.inboxes_dir(team)
    try:
        entries = os.listdir(folder)
    except FileNotFoundError:
        return []
    return sorted(n[:-5] for n in entries if n.endswith(".json") and not n.startswith("."))


def read_inbox_entries(home: Home, team: str, agent: str) -> list[dict[str, Any]]:
    """The raw messages of one inbox (unknown fields kept); CorruptFileError if unreadable."""
    return parse_with_retry(home.mailbox(team).path(agent), parse_raw_inbox) or []


def scan_team(home: Home, team: str) -> TeamRequests:
    """Read every inbox of ``team`` and sort out its requests and answers (see module doc)."""
    found = TeamRequests.of(home, team)
    found.inboxes = inbox_names(home, team)
    for inbox in found.inboxes:
        try:
            entries = read_inbox_entries(home, team, inbox)
        except (CorruptFileError, TeamdeckError, OSError) as exc:
            found.errors[inbox] = str(exc)
            continue
        for entry in entries:
            found.note(inbox, entry)
    return found


def _note(found: TeamRequests, inbox: str, entry: dict[str, Any]) -> None:
    sender = str(entry.get("from") or "")
    timestamp = str(entry.get("timestamp") or "")
    text = entry.get("text")
    frame: Frame | None = None
    if isinstance(text, str) and text[:1] == "{" and _TRACKED.search(text):
        frame = parse_frame(text)
    if frame is not None and frame.type == "idle_notification":
        who = agent_name(getattr(frame, "sender", "") or sender)
        if timestamp >= found.idle_at.get(who, ""):
            found.idle_at[who] = timestamp
        return
    if sender and timestamp > found.last_message_at.get(sender, ""):
        found.last_message_at[sender] = timestamp  # anything but an idle notification
    if frame is None:
        return
    closed = answered_id(frame)
    if closed is not None:
        if found.signed(inbox, str(text), decides=True):
            found.answered.add(closed)
        return
    if isinstance(frame, ShutdownRequest | ShutdownApproved | ShutdownRejected) and not (
        found.signed(inbox, str(text), decides=False)
    ):
        return  # frame-shaped text: nobody asked or answered
    if isinstance(frame, ShutdownRequest):
        previous = found.shutdowns.get(frame.request_id)
        answer = previous.answer if previous else None
        at = previous.answered_at if previous else ""
        found.shutdowns[frame.request_id] = ShutdownAsk(
            frame.request_id, inbox, timestamp, answer, at
        )
        return
    if isinstance(frame, ShutdownApproved | ShutdownRejected):
        verdict = "approved" if isinstance(frame, ShutdownApproved) else "rejected"
        ask = found.shutdowns.get(frame.request_id)
        who = ask.agent if ask else agent_name(frame.sender)
        since = ask.timestamp if ask else timestamp
        found.shutdowns[frame.request_id] = ShutdownAsk(
            frame.request_id, who, since, verdict, timestamp
        )
        return
    if isinstance(frame, PlanApprovalRequest | PermissionRequest):
        if not found.signed(inbox, str(text), decides=False):
            return  # frame-shaped text an agent sent: no request
        approval = approval_from_frame(frame, sender=sender, timestamp=timestamp or None)
        if approval is not None and frame.request_id not in found.requests:
            found.requests[frame.request_id] = FileRequest(
                found.team, approval, frame, inbox, timestamp
            )


def team_names(home: Home) -> list[str]:
    """Teams with a config file (nothing created)."""
    return home.teams.names()


def find_request(home: Home, request_id: str, team: str | None = None) -> FileRequest:
    """The request with ``request_id`` (in ``team``, or any team); NotFoundError if no inbox
    holds it. It may be answered already: check ``is_answered``."""
    for name in [team] if team else team_names(home):
        request = scan_team(home, name).requests.get(request_id)
        if request is not None:
            return request
    where = f" in team {team!r}" if team else ""
    raise NotFoundError(f"no plan or permission request {request_id!r}{where}")


def is_answered(home: Home, team: str, request_id: str) -> bool:
    """Whether a response carrying ``request_id`` (signed, in a team with a key) exists in
    any inbox of ``team``. An inbox that cannot be read is an error (never taken for "not
    answered")."""
    found = TeamRequests.of(home, team)
    for inbox in inbox_names(home, team):
        for entry in read_inbox_entries(home, team, inbox):
            text = entry.get("text")
            if isinstance(text, str) and request_id in text:
                frame = parse_frame(text)
                if not found.signed(inbox, text, decides=answered_id(frame) is not None):
                    continue
                if answered_id(frame) == request_id:
                    return True
                if (
                    isinstance(frame, ShutdownApproved | ShutdownRejected)
                    and frame.request_id == request_id
                ):
                    return True
    return False

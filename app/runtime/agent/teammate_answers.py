"""Which of a teammate's messages act, and the answers its runtime hands it (authority).

A frame in the inbox acts only if the desk signed it for this teammate: a shutdown request
(any signature of the team), a permission or plan answer (signed by a decider: the person, the
lead, the rules). Anything else frame-shaped is text, delivered to the model as such.

An in-process teammate takes its answers from its runtime only (:meth:`TeammateAnswers.give`,
kept for the request it waits for now); the answer frames in its inbox are the record. A
teammate process has no runtime at hand: it reads its inbox and acts on signed answers only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core import authority
from app.core.protocol import Frame, PermissionResponse, PlanApprovalResponse, parse_frame
from app.runtime.permissions.modes import PERMISSION_MODES

if TYPE_CHECKING:
    from app.core.models import InboxMessage
    from app.runtime.agent.channel import TeamChannel
    from app.runtime.agent.session import AgentSession
    from app.runtime.agent.wakeup import Wakeup

BYPASS = "bypassPermissions"
#: Modes an unsigned answer (a team without a key: a Claude Code home) may switch to.
UNSIGNED_MODES = frozenset({"default", "acceptEdits", "plan"})


class TeammateAnswers:
    """One teammate's door for answers (see the module docstring).

    ``bypass_allowed``: whether the person allowed bypassPermissions for the run (an answer can
    switch to it only then; a teammate process is never told so)."""

    def __init__(
        self,
        channel: TeamChannel,
        session: AgentSession,
        wake: Wakeup,
        bypass_allowed: Callable[[], bool] = lambda: False,
    ) -> None:
        self.channel = channel
        self.session = session
        self.wake = wake
        self.bypass_allowed = bypass_allowed
        #: In-process: the answers handed over, by request id. ``None``: a teammate process.
        self.direct: dict[str, tuple[Frame, str]] | None = None
        #: The permission request whose answer is awaited now.
        self.awaited: str | None = None

    def acting(self, message: InboxMessage) -> tuple[Frame | None, str]:
        """The frame ``message`` carries and who signed it, or ``(None, "")`` when it is to be
        taken as text: not a frame, not signed by the desk for this teammate (a frame-shaped
        text any agent can send), or an answer no decider signed."""
        frame = None if message.plain_text else parse_frame(message.text)
        if frame is None:
            return None, ""
        origin = authority.origin_of(self.channel.key, message.text, to=self.channel.name)
        if origin is None:
            return None, ""
        answer = isinstance(frame, PermissionResponse | PlanApprovalResponse)
        if answer and origin not in authority.DECIDERS and origin != authority.UNSIGNED:
            return None, ""
        return frame, origin

    def give(self, frame: Frame, origin: str) -> bool:
        """An answer the runtime hands over (the desk's, or one found signed in the files):
        kept only for the request this teammate waits for now. True if kept."""
        if self.direct is None or origin not in authority.DECIDERS:
            return False
        if isinstance(frame, PermissionResponse):
            waiting = self.awaited
        elif isinstance(frame, PlanApprovalResponse):
            waiting = self.session.pending_plan_request
        else:
            return False
        if waiting is None or frame.request_id != waiting:
            return False
        self.direct[frame.request_id] = (frame, origin)
        self.wake.set()
        return True

    def take_permission(self, request_id: str) -> tuple[PermissionResponse, str] | None:
        """The answer handed over for permission request ``request_id`` (now awaited)."""
        self.awaited = request_id
        got = self.direct.pop(request_id, None) if self.direct is not None else None
        if got is None or not isinstance(got[0], PermissionResponse):
            return None
        self.awaited = None
        return got[0], got[1]

    def take_plan(self) -> tuple[PlanApprovalResponse, str] | None:
        """The answer handed over for the pending plan."""
        pending = self.session.pending_plan_request
        if self.direct is None or pending is None:
            return None
        got = self.direct.pop(pending, None)
        if got is None or not isinstance(got[0], PlanApprovalResponse):
            return None
        return got[0], got[1]

    def approved_mode(self, asked: str | None, origin: str) -> str:
        """The mode an approved plan leaves the teammate in: ``default`` unless the person's
        answer named another (a team without keys: any but bypassPermissions), and
        bypassPermissions only if the person allowed it for the run."""
        if not asked or asked == "plan":
            return "default"
        givable = origin == authority.PERSON or (
            origin == authority.UNSIGNED and asked in UNSIGNED_MODES
        )
        if givable and asked in PERMISSION_MODES and (asked != BYPASS or self.bypass_allowed()):
            return asked
        if asked != "default":
            self.session.record(
                "notice", f"the approval asked for {asked} mode: not the person's to give; default"
            )
        return "default"

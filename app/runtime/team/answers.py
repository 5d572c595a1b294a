"""The lead's side of plan and permission requests: answering them, exactly once.

Requests reach the queue from the lead's inbox (``TeamRuntime`` scans it) or, for the lead's own
tool calls, from :class:`~app.runtime.agent.permission_flow.LeadPermissions`. An answer claims the
request in the queue first (the first answer wins, whoever gives it), then is written as a frame
into the requester's inbox as ``team-lead``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from app.core import authority
from app.core.errors import TeamdeckError
from app.core.paths import LEAD_NAME, USER_NAME
from app.core.protocol import (
    Frame,
    PermissionResponse,
    PlanApprovalResponse,
    parse_frame,
    permission_response,
    plan_approval_response,
)
from app.runtime.agent.channel import TeamChannel
from app.runtime.agent.permission_flow import LeadPermissions
from app.runtime.api import Answer, AnswerStatus, Approval
from app.runtime.approvals import Approvals, answered_id
from app.runtime.permissions import PermissionRules, Rule
from app.runtime.permissions.settings import add_allow_rule

log = logging.getLogger(__name__)
#: Why a teammate's waiting request is answered "no" when it is asked to shut down.
SHUTTING_DOWN = "Denied: teammate shutting down"


class RequestDesk:
    """Answers plan and permission requests for the lead.

    Args:
        queue: the runtime's approvals queue.
        lead_permissions: the lead's own pending permission requests.
        channel: the lead's channel (``None`` while there is no team).
        add_rule: ``add_rule(agent, rule)`` remembers an "always allow" rule for ``agent``.
        hand_over: ``hand_over(agent, frame, origin)`` gives a signed answer to an in-process
            teammate directly (it takes none from message text).
    """

    def __init__(
        self,
        queue: Approvals,
        lead_permissions: LeadPermissions,
        channel: Callable[[], TeamChannel | None],
        add_rule: Callable[[str, str], str | None],
        hand_over: Callable[[str, Frame, str], None] | None = None,
    ) -> None:
        self.queue = queue
        self._hand_over = hand_over
        self.lead_permissions = lead_permissions
        self._channel = channel
        self._add_rule = add_rule

    def answer_plan(
        self, request_id: str, approve: bool, feedback: str | None, *, by: str = LEAD_NAME
    ) -> Answer:
        """``by``: who answers (the lead's model, or ``user``: the person), for the record; the
        frame comes from ``team-lead`` either way, as the protocol wants."""
        verdict = "approved" if approve else "rejected"
        claimed = self.queue.claim(request_id, verdict, "plan", by)
        if isinstance(claimed, Answer):
            return claimed
        frame = plan_approval_response(
            request_id, approve, feedback=feedback or None, permission_mode="default"
        )
        failure = self._send(claimed, frame, by)
        text = f"Plan {verdict} for {claimed.agent}"
        return failure or Answer(AnswerStatus.DONE, text, claimed.agent, request_id)

    def answer_permission(
        self,
        request_id: str,
        allow: bool,
        reason: str | None = None,
        *,
        always: bool = False,
        by: str = LEAD_NAME,
    ) -> Answer:
        outcome = ("always allowed" if always else "allowed") if allow else "denied"
        claimed = self.queue.claim(request_id, outcome, "permission", by)
        if isinstance(claimed, Answer):
            return claimed
        note = ""
        rule = claimed.suggestion if always and allow else None
        if rule:
            problem = self._add_rule(claimed.agent, rule)
            note = f"rule {rule}: {problem}" if problem else f"rule {rule} added"
        if self.lead_permissions.owns(request_id):
            self.lead_permissions.resolve(request_id, allow, reason or "denied by the person")
        else:
            frame = permission_response(
                request_id,
                allow,
                updated_input=claimed.tool_input if claimed.tool_input is not None else {},
                permission_updates=[rule] if rule else [],
                error=reason or "Denied by team-lead",
            )
            failure = self._send(claimed, frame, by)
            if failure:
                return failure
        verdict = "allowed" if allow else "denied"
        text = f"Permission {verdict} for {claimed.agent}" + (f" ({note})" if note else "")
        return Answer(AnswerStatus.DONE, text, claimed.agent, request_id, note=note)

    def refuse_waiting(self, agent: str, *, by: str) -> None:
        """``agent`` is asked to shut down: its plan or permission request still waiting is
        answered "no" at once (``SHUTTING_DOWN``): a teammate blocked in a tool call on a
        permission would otherwise never get to the shutdown request, and the request would
        stay queued for an agent that is leaving. A plan is only dropped from the queue
        ("cancelled: teammate shutting down"): its teammate waits between turns, so it reads
        the shutdown request next, where a rejection would have it revise the plan first."""
        for waiting in self.queue.pending_for(agent):
            if waiting.kind == "permission":
                self.answer_permission(waiting.request_id, False, SHUTTING_DOWN, by=by)
            elif waiting.kind == "plan":
                self.queue.claim(waiting.request_id, "cancelled: teammate shutting down")

    def note_answers(self, agent: str) -> None:
        """``agent``'s inbox changed: its requests answered there by another process
        (``teamdeck approve``) are closed in the queue, credited to whoever the message names
        (``answeredBy``: the person), else its sender. Without this they stayed queued until
        the teammate left ("cancelled: agent left"). Only a signed answer closes one: a
        frame-shaped text from an agent leaves the request in the person's queue."""
        waiting = {a.request_id: a for a in self.queue.pending_for(agent)}
        channel = self._channel()
        if not waiting or channel is None:
            return
        try:
            messages = channel.home.mailbox(channel.team).read(agent)
        except TeamdeckError as exc:
            log.warning("cannot read %s's inbox for answers: %s", agent, exc)
            return
        for message in messages:
            frame = parse_frame(message.text) if message.text.startswith("{") else None
            origin = authority.origin_of(channel.key, message.text, to=agent)
            if origin not in authority.DECIDERS and origin != authority.UNSIGNED:
                continue  # frame-shaped text (anyone can send it): no answer
            approval = waiting.pop(answered_id(frame) or "", None)
            if approval is not None:
                by = message.answered_by or message.sender
                self.queue.claim(approval.request_id, _outcome(frame), approval.kind, by)
                if self._hand_over is not None and frame is not None and origin:
                    self._hand_over(agent, frame, origin)

    def _send(self, approval: Approval, frame: Frame, by: str) -> Answer | None:
        """Write the answer into the requester's inbox: ``None``, or why it could not be. The
        frame comes from ``team-lead``; an answer not the lead's names who gave it (``by``), and
        it is signed as who decided it: the person, else the lead (``app.core.authority``)."""
        origin = authority.PERSON if by == USER_NAME else authority.LEAD
        channel = self._channel()
        if channel is None:
            text = f"no team: cannot answer {approval.agent}"
        else:
            try:
                channel.send_frame(
                    approval.agent,
                    frame,
                    answered_by=by if by != LEAD_NAME else None,
                    origin=origin,
                )
                if self._hand_over is not None:
                    self._hand_over(approval.agent, frame, origin)
                return None
            except (TeamdeckError, OSError) as exc:
                log.warning("answer to %s not delivered: %s", approval.request_id, exc)
                text = f"answer to {approval.agent} not delivered: {exc}"
        return Answer(AnswerStatus.UNDELIVERED, text, approval.agent, approval.request_id)


def _outcome(frame: Frame | None) -> str:
    """What a response frame decided, in the queue's words."""
    if isinstance(frame, PlanApprovalResponse):
        return "approved" if frame.approved else "rejected"
    if isinstance(frame, PermissionResponse) and frame.allowed:
        return "always allowed" if frame.permission_updates else "allowed"
    return "denied"


def keep_allow_rule(rule: str, into: Iterable[PermissionRules], rules_file: Path) -> str | None:
    """An "always allow" answer's rule: added to the rule sets ``into`` (the agent's, and the
    run's, which every teammate follows: a running one from its next tool call, one spawned
    later from its start) and to ``rules_file`` (so that the next run in this folder reads it
    too). A one-line problem, else ``None``."""
    try:
        Rule.parse(rule)
    except ValueError as exc:
        return str(exc)
    for rules in into:
        rules.add_allow(rule)
    try:
        add_allow_rule(rules_file, rule)
    except (ValueError, OSError) as exc:
        return f"kept for this run only, not in {rules_file}: {exc}"
    return None

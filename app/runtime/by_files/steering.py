"""Steering a team through its files only: answers are frames appended to inboxes.

This is how teamdeck steers a live Claude Code team (``teamdeck --claude``, and the CLI's
``approve``/``reject``): there is no runtime in this process, so every lever is a message in
Claude Code's own shapes, written with the inbox's lock (``mkdir`` locks in a Claude Code home):

* plan approval -> ``plan_approval_response`` (``requestId``, ``approved``, ``feedback`` on a
  reject, ``permissionMode`` on approve, ``timestamp``) from ``team-lead`` into the requester's
  inbox (seed 000, "PlanApprovalResponse"; the seeds' teammate leaves plan mode for
  ``"default"``, so that is the mode an approval switches it to);
* permission request -> ``permission_response`` (see :func:`permission_response_text` for the
  shape and why);
* shutdown -> ``shutdown_request`` from ``team-lead`` into the teammate's inbox;
* a message the person types -> a plain message from ``user`` (the seeds' name for the person:
  the teammate's model then sees ``teammate_id="user"`` and knows the person is speaking, not
  the lead).

Answering twice is impossible: under the requester's inbox lock (which every writer of an answer
to that teammate takes, Claude Code's lead included) the whole team is re-checked for a response
with the request's id before the answer is appended.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

from app.core import authority
from app.core.answer_credits import note_answer
from app.core.errors import CorruptFileError, NotFoundError, TeamdeckError
from app.core.home import Home
from app.core.models import InboxMessage, now_iso
from app.core.paths import LEAD_NAME, USER_NAME
from app.core.protocol import PermissionRequest, make_request_id, plan_approval_response
from app.core.protocol import shutdown_request as shutdown_frame
from app.runtime.api import Approval
from app.runtime.by_files.requests import FileRequest, find_request, is_answered, scan_team
from app.runtime.steering import Outcome, describe_request

#: The mode an approved plan switches the teammate to (see the module docstring).
APPROVED_PLAN_MODE = "default"
DEFAULT_DENIAL = "Permission denied by the user"
NOT_FROM_HERE = (
    "not possible from here: {agent} is a Claude Code teammate; "
    "stop it in its own terminal (or ask it to shut down with s)"
)
#: What the levers a Claude Code team keeps to itself say, before anything is asked.
CANNOT = {
    "kill": "K: not possible from here: Claude Code runs its teammates; stop one in its own "
    "terminal (or ask it to shut down with s)",
    "interrupt": "not possible from here: Claude Code runs its agents; interrupt one in its "
    "own terminal",
    "spawn": "not possible from here: the Claude Code lead spawns teammates",
}


class AlreadyAnsweredError(TeamdeckError):
    """The request has a response already (from anyone): nothing was written."""


def compact(data: dict[str, Any]) -> str:
    """``JSON.stringify(data)``: how frames travel in an inbox message's ``text``."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


_RULE = re.compile(r"^([A-Za-z0-9_.:-]+)(?:\((.*)\))?$", re.DOTALL)


def rule_value(rule: str) -> dict[str, str]:
    """``"Bash(git:*)"`` -> ``{"toolName": "Bash", "ruleContent": "git:*"}`` (a
    ``PermissionRuleValue`` as Claude Code's settings and permission updates spell it)."""
    match = _RULE.match(rule.strip())
    if not match:
        return {"toolName": rule.strip()}
    name, content = match.group(1), match.group(2)
    return {"toolName": name, "ruleContent": content} if content else {"toolName": name}


def always_allow_updates(frame: PermissionRequest, approval: Approval) -> list[Any]:
    """The permission updates "always allow" answers with.

    Claude Code's teammate sends its own suggestions with the request
    (``permission_suggestions``: ``{"type": "addRules", "rules": [{"toolName",
    "ruleContent"}], "behavior": "allow", "destination": "localSettings"}``, or ``setMode`` for
    edits); its lead's "don't ask again" applies exactly those, so they are echoed as they are.
    A request without usable suggestions gets one ``addRules`` for its tool (the rule teamdeck
    shows, e.g. ``Bash(git:*)``), in the same shape (the Agent SDK's ``PermissionUpdate``)."""
    own = [s for s in frame.permission_suggestions if isinstance(s, dict) and s.get("type")]
    if own:
        return own
    rule = approval.suggestion or frame.tool_name
    return [
        {
            "type": "addRules",
            "rules": [rule_value(rule)],
            "behavior": "allow",
            "destination": "localSettings",
        }
    ]


def permission_response_text(
    frame: PermissionRequest,
    approval: Approval,
    *,
    allow: bool,
    always: bool = False,
    feedback: str | None = None,
) -> str:
    """The ``permission_response`` frame answering ``frame``.

    Shape chosen: the blueprint's (seed 000, ``PermissionResponse``) -- snake_case,
    ``{"type", "request_id", "subtype": "success", "response": {"updated_input",
    "permission_updates"}}`` to allow, ``{"type", "request_id", "subtype": "error", "error"}``
    to deny -- and not the reference's (seed 001) ``decision``/``resolvedBy``/``updatedInput``/
    ``permissionUpdates``/``feedback``. Why (researched with ``search``, 2026-11):

    * The two seed shapes are two different records, not two eras of one frame. Seed 001's
      fields are those of the permission *resolution* kept as a file under
      ``teams/{team}/permissions/resolved/{id}.json`` (next to ``pending/``), as a public Rust
      re-implementation of the swarm permission sync shows ("Synchronized Permission Prompts
      for Agent Swarms": ``PermissionResolution {decision, resolved_by, feedback,
      updated_input, permission_updates}``); the message that same code puts in the worker's
      inbox is seed 000's frame (``create_permission_response_success`` / ``_error``, the
      denial's ``error`` being the feedback, else "Permission denied").
    * The inbox reader accepts a ``permission_response`` by its string ``request_id`` and
      ``subtype`` (and a string ``error`` when ``subtype`` is ``"error"``); a frame without
      ``subtype`` is not recognised (a public TypeScript re-implementation of the mailbox
      helpers: ``isPermissionResponse``). Extra keys are ignored, so adding seed 001's would
      change nothing for the reader, and the file they belong to is not an inbox: teamdeck
      answers through inbox frames only.
    * Tools that answer real Claude Code teammates write this frame and see it accepted, in
      the seed era and the per-session era alike: 777genius/agent-teams-ai
      ``src/main/services/team/provisioning/TeamProvisioningTeammatePermissionResponse.ts``
      (2026-08: ``updated_input`` is the request's input, ``permission_updates`` the request's
      own suggestions, ``error`` the person's message on a deny); anthropics/claude-code#87581
      (2.1.2xx: a rejection's message reaches the teammate's tool result as "The user said:
      ...") and #50310/#55446 (2.1.123: the lead model has no SendMessage variant for it, the
      answer is written for it).
    * An allow without an updated input breaks the teammate (the same tool's fix "missing
      updatedInput"; purplefish-ai/factory-factory#384: the CLI's control protocol requires it
      in an allow), so
      ``updated_input`` always echoes the request's ``input`` (``{}`` if it had none; never
      ``null``); ``permission_updates`` is ``[]`` for allow-once (see
      :func:`always_allow_updates` for "always")."""
    if not allow:
        return compact(
            {
                "type": "permission_response",
                "request_id": frame.request_id,
                "subtype": "error",
                "error": (feedback or "").strip() or DEFAULT_DENIAL,
            }
        )
    updated = frame.input if frame.input is not None else {}
    updates = always_allow_updates(frame, approval) if always else []
    return compact(
        {
            "type": "permission_response",
            "request_id": frame.request_id,
            "subtype": "success",
            "response": {"updated_input": updated, "permission_updates": updates},
        }
    )


def plan_response_text(request_id: str, approved: bool, feedback: str | None = None) -> str:
    if approved:
        frame = plan_approval_response(request_id, True, permission_mode=APPROVED_PLAN_MODE)
    else:
        frame = plan_approval_response(request_id, False, (feedback or "").strip() or "Rejected")
    return frame.to_text()


def answer_request(home: Home, team: str | None, request_id: str, text_for: Any) -> FileRequest:
    """Append the answer ``text_for(request)`` to the requester's inbox as ``team-lead``; in
    teamdeck's own homes the message also says the person answered (``answeredBy: "user"``:
    the CLI and a dashboard steering through the files are the person's hands). A Claude Code
    home's inbox keeps Claude Code's shape: there the person's answer is noted in teamdeck's
    own home instead (``app.core.answer_credits``), under the inbox's lock once the request is
    known to be open, before the message is written (a reader that sees it finds the note).

    NotFoundError for an unknown id, AlreadyAnsweredError if a response exists (checked again
    under the requester's inbox lock, so two deciders cannot both answer)."""
    request = find_request(home, request_id, team)

    def still_open() -> None:
        if is_answered(home, request.team, request_id):
            raise AlreadyAnsweredError(f"request {request_id} was already answered")

    # An early "already answered", before any lock is taken. An inbox caught mid-write by an
    # in-place writer (Claude Code) is no answer either way: the check under the lock decides.
    with contextlib.suppress(CorruptFileError):
        still_open()
    # Signed as the person's with the team's key when it has one (``app.core.authority``): a
    # teamdeck teammate acts on no other answer. A Claude Code team has none: plain frames.
    text = authority.sign_text(
        authority.load_key(home.root, request.team), text_for(request),
        to=request.requester, origin=authority.PERSON,
    )  # fmt: skip
    message = InboxMessage(sender=LEAD_NAME, text=text, timestamp=now_iso())
    if not home.is_claude:
        message.answered_by = USER_NAME

    def guard() -> None:
        still_open()
        if home.is_claude:
            note_answer(home.root, request.team, request.requester, request_id, message.timestamp)

    home.mailbox(request.team).append(request.requester, message, guard=guard)
    return request


class FileSteering:
    """The dashboard's levers on a team it does not run (see the module docstring)."""

    read_only = False
    denial_feedback = True  # a denial's ``error`` is what the teammate reads

    def unavailable(self, lever: str) -> str | None:
        return CANNOT.get(lever)

    def __init__(self, home: Home, team: str | Callable[[], str | None]) -> None:
        """``team``: the team's name, or a callable giving the team shown right now (a
        dashboard switches teams)."""
        self.home = home
        self._team = team

    @property
    def team(self) -> str:
        team = self._team() if callable(self._team) else self._team
        if not team:
            raise NotFoundError("no team is shown")
        return team

    # ------------------------------------------------------------------ requests

    def approve(self, approval: Approval) -> Outcome:
        if approval.kind == "permission":
            return self.allow(approval)
        if approval.kind != "plan":
            return Outcome(False, f"{approval.agent} answers its own shutdown request")
        rid = approval.request_id
        return self._answer(approval, "approved", lambda r: plan_response_text(rid, True))

    def reject(self, approval: Approval, feedback: str) -> Outcome:
        if approval.kind == "permission":
            return self.deny(approval, feedback)
        if approval.kind != "plan":
            return Outcome(False, f"{approval.agent} answers its own shutdown request")
        rid = approval.request_id
        return self._answer(
            approval, "rejected", lambda r: plan_response_text(rid, False, feedback)
        )

    def allow(self, approval: Approval, always: bool = False) -> Outcome:
        if approval.kind != "permission":
            return self.approve(approval)
        verb = "always allowed" if always else "allowed"
        return self._answer(
            approval,
            verb,
            lambda r: permission_response_text(r.frame, r.approval, allow=True, always=always),
        )

    def deny(self, approval: Approval, feedback: str | None = None) -> Outcome:
        if approval.kind != "permission":
            return self.reject(approval, feedback or "")
        return self._answer(
            approval,
            "denied",
            lambda r: permission_response_text(r.frame, r.approval, allow=False, feedback=feedback),
        )

    def _answer(self, approval: Approval, verb: str, text_for: Any) -> Outcome:
        what = describe_request(approval)
        try:
            answer_request(self.home, self.team, approval.request_id, text_for)
        except AlreadyAnsweredError:
            return Outcome(False, f"{what} was already answered", settled=True)
        except NotFoundError:
            return Outcome(False, f"{what} is no longer in the files", settled=True)
        except (TeamdeckError, OSError) as exc:
            return Outcome(False, f"{what}: {exc}", failed=True)
        return Outcome(True, f"{what} {verb}", settled=True)

    # ------------------------------------------------------------------ agents

    def shutdown(self, agent: str) -> Outcome:
        """Ask a teammate to stop: a ``shutdown_request`` from the lead (it answers itself)."""
        try:
            config = self.home.teams.require(self.team)
            member = config.member(agent)
            if member is None or member.name == LEAD_NAME:
                return Outcome(False, f"shutdown {agent}: not a teammate of {self.team}")
            asked = [s for s in scan_team(self.home, self.team).pending_shutdowns()]
            if any(s.agent == member.name for s in asked):
                return Outcome(False, f"{member.name} was already asked to shut down")
            frame = shutdown_frame(
                make_request_id("shutdown", member.name), LEAD_NAME, "The user asked you to stop."
            )
            text = authority.sign_text(
                authority.load_key(self.home.root, self.team), frame.to_text(),
                to=member.name, origin=authority.PERSON,
            )  # fmt: skip
            message = InboxMessage(sender=LEAD_NAME, text=text, timestamp=now_iso())
            self.home.mailbox(self.team).append(member.name, message)
        except (TeamdeckError, OSError) as exc:
            return Outcome(False, f"shutdown {agent}: {exc}", failed=True)
        return Outcome(True, f"shutdown requested from {member.name}")

    def kill(self, agent: str) -> Outcome:
        return Outcome(False, NOT_FROM_HERE.format(agent=agent))

    def interrupt(self, agent: str) -> Outcome:
        return Outcome(False, NOT_FROM_HERE.format(agent=agent))

    def send(self, agent: str, text: str) -> Outcome:
        """The person's message, from ``user`` (see the module docstring)."""
        if not text.strip():
            return Outcome(False, "nothing to send")
        try:
            message = InboxMessage(sender=USER_NAME, text=text, timestamp=now_iso())
            to = self.home.mailbox(self.team).send(agent, message)
        except (TeamdeckError, OSError) as exc:
            return Outcome(False, f"send to {agent}: {exc}", failed=True)
        return Outcome(True, f"message sent to {to}")

    async def spawn(self, name: str, prompt: str, mode: str | None = None) -> Outcome:
        return Outcome(False, CANNOT["spawn"])

    def set_lead_mode(self, mode: str) -> Outcome:
        return Outcome(False, "not possible from here: change the lead's mode in Claude Code")

    def set_teammate_permission_mode(self, mode: str) -> Outcome:
        return Outcome(False, "not possible from here: Claude Code's lead spawns the teammates")

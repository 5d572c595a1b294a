"""Steering: everything a person can tell a running team, as one small typed interface.

Screens call a :class:`Steering` and show the :class:`Outcome` it returns; they never call
runtime methods by name. :class:`RuntimeSteering` steers an in-process ``TeamRuntime`` (any
``RuntimeAPI``); :class:`ReadOnlySteering` refuses everything (a viewer of someone else's
files). Another implementation (e.g. one that writes answer frames into a Claude Code home's
inboxes) only has to implement the same methods.

Every answer is one line in words (no request ids): it goes straight into a notification.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from app.core.paths import LEAD_NAME, USER_NAME
from app.runtime.api import Answer, AnswerStatus, Approval, RuntimeAPI

READ_ONLY = "Read-only viewer: there is no runtime here to answer that."
NO_TEAM_TO_SPAWN = (
    "no team to spawn a teammate into: the lead's team has ended (send the lead a goal)"
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What came of one steering call.

    Attributes:
        ok: the team was told (``False``: nothing was sent).
        message: one line for the person, in words.
        failed: the call raised (an error, not merely a stale or refused request).
        settled: the request named in the call is no longer pending, answered now or
            before; a view may drop it at once instead of waiting for the runtime's event.
    """

    ok: bool
    message: str
    failed: bool = False
    settled: bool = False


class Steering(Protocol):
    """The person's levers on a team (see the module docstring)."""

    @property
    def read_only(self) -> bool:
        """True when every call is refused (nothing to steer)."""

    @property
    def denial_feedback(self) -> bool:
        """True when a denied permission can carry the person's words to the teammate."""

    def unavailable(self, lever: str) -> str | None:
        """Why ``lever`` (``kill``, ``interrupt``, ``spawn``) cannot act on this team at all, in
        one line; None when it can. The dashboard says it at once instead of asking first, and
        neither its footer nor its palette offers the lever."""

    def approve(self, approval: Approval) -> Outcome:
        """Approve a plan, or allow a permission once."""

    def reject(self, approval: Approval, feedback: str) -> Outcome:
        """Reject a plan with ``feedback`` (a permission is denied)."""

    def allow(self, approval: Approval, always: bool = False) -> Outcome:
        """Allow a permission request; ``always`` also keeps its rule for the session."""

    def deny(self, approval: Approval, feedback: str | None = None) -> Outcome:
        """Deny a permission request (any other request is rejected with ``feedback``)."""

    def shutdown(self, agent: str) -> Outcome:
        """Ask a teammate to shut down (it answers, and may refuse)."""

    def kill(self, agent: str) -> Outcome:
        """Stop a teammate now; its unfinished tasks go back to pending."""

    def interrupt(self, agent: str) -> Outcome:
        """Stop an agent's current turn."""

    def send(self, agent: str, text: str) -> Outcome:
        """The person's message: the lead gets it as a prompt, a teammate before other mail."""

    async def spawn(self, name: str, prompt: str, mode: str | None = None) -> Outcome:
        """Start a new teammate called ``name`` working on ``prompt``."""

    def set_lead_mode(self, mode: str) -> Outcome:
        """Switch the lead's permission mode (shift+tab)."""

    def set_teammate_permission_mode(self, mode: str) -> Outcome:
        """The permission mode teammates spawned from now on start in."""


def describe_request(approval: Approval) -> str:
    """``engineer's plan``, ``researcher's Bash request``, ``tester's shutdown``."""
    if approval.kind == "permission":
        return f"{approval.agent}'s {approval.tool_name or 'permission'} request"
    return f"{approval.agent}'s {approval.kind}"


def denied_by_the_person(feedback: str | None) -> str:
    """The reason a teammate reads when the person denies its request: credited to the person
    (``user``, as a Claude Code team names them), never to the lead the frame comes from."""
    words = (feedback or "").strip()
    return f"Denied by {USER_NAME}: {words}" if words else f"Denied by {USER_NAME}"


def _not_the_persons(approval: Approval) -> Outcome:
    """A shutdown request is answered by the teammate it is addressed to, never the person."""
    return Outcome(False, f"{approval.agent} answers its own shutdown request")


class RuntimeSteering:
    """Steers a runtime in this process through its ``RuntimeAPI`` methods."""

    read_only = False
    denial_feedback = True  # the denial's reason is what the teammate's tool call returns

    def unavailable(self, lever: str) -> str | None:
        """The runtime runs its teammates: every lever acts, except a spawn with no team (the
        lead's team ended): said before the spawn dialog asks anything."""
        if lever == "spawn" and self.runtime.team is None:
            return NO_TEAM_TO_SPAWN
        return None

    def __init__(self, runtime: RuntimeAPI) -> None:
        self.runtime = runtime

    # ------------------------------------------------------------------ requests

    def approve(self, approval: Approval) -> Outcome:
        rid = approval.request_id
        match approval.kind:
            case "plan":
                return self._answer(approval, "approved", lambda: self.runtime.approve_plan(rid))
            case "shutdown":
                return _not_the_persons(approval)
            case _:
                return self.allow(approval)

    def reject(self, approval: Approval, feedback: str) -> Outcome:
        rid = approval.request_id
        match approval.kind:
            case "plan":
                return self._answer(
                    approval, "rejected", lambda: self.runtime.reject_plan(rid, feedback)
                )
            case "shutdown":
                return _not_the_persons(approval)
            case _:
                return self.deny(approval, feedback)

    def allow(self, approval: Approval, always: bool = False) -> Outcome:
        if approval.kind != "permission":
            return self.approve(approval)
        rid = approval.request_id
        verb = "always allowed" if always else "allowed"
        return self._answer(
            approval, verb, lambda: self.runtime.answer_permission(rid, True, always)
        )

    def deny(self, approval: Approval, feedback: str | None = None) -> Outcome:
        if approval.kind != "permission":
            return self.reject(approval, feedback or "no reason given")
        rid = approval.request_id
        reason = denied_by_the_person(feedback)
        return self._answer(
            approval,
            "denied",
            lambda: self.runtime.answer_permission(rid, False, False, feedback=reason),
        )

    def _answer(self, approval: Approval, verb: str, call: Callable[[], Answer]) -> Outcome:
        what = describe_request(approval)
        try:
            answer = call()
        except Exception as exc:  # the runtime's error is the person's information
            return Outcome(False, f"{what}: {exc}", failed=True)
        match answer.status:
            case AnswerStatus.DONE:
                note = f" ({answer.note})" if answer.note else ""
                return Outcome(True, f"{what} {verb}{note}", settled=True)
            case AnswerStatus.ALREADY:
                how = f" ({answer.previous})" if answer.previous else ""
                return Outcome(False, f"{what} was already resolved{how}", settled=True)
            case AnswerStatus.UNKNOWN:
                return Outcome(False, f"{what} is no longer pending", settled=True)
            case AnswerStatus.WRONG_KIND:
                kinds = f"{answer.kind} request, not a {approval.kind} request"
                return Outcome(False, f"{what}: {kinds}")
            case AnswerStatus.UNDELIVERED:  # answered here, but the teammate never heard
                line = f"{what} {verb}, but {answer.text}"
                return Outcome(False, line, failed=True, settled=True)

    # ------------------------------------------------------------------ agents

    def shutdown(self, agent: str) -> Outcome:
        return self._call(f"shutdown {agent}", lambda: self.runtime.request_shutdown(agent))

    def kill(self, agent: str) -> Outcome:
        return self._call(f"kill {agent}", lambda: self.runtime.kill(agent))

    def interrupt(self, agent: str) -> Outcome:
        return self._void(
            f"interrupt {agent}", f"interrupted {agent}", lambda: self.runtime.interrupt(agent)
        )

    def send(self, agent: str, text: str) -> Outcome:
        if agent == LEAD_NAME:
            call: Callable[[], None] = lambda: self.runtime.submit(text)  # noqa: E731
        else:
            call = lambda: self.runtime.inject_message(agent, text)  # noqa: E731
        return self._void(f"send to {agent}", f"message sent to {agent}", call)

    async def spawn(self, name: str, prompt: str, mode: str | None = None) -> Outcome:
        try:
            await self.runtime.spawn_teammate(name, prompt, mode=mode)
        except Exception as exc:
            return Outcome(False, f"spawn {name}: {exc}", failed=True)
        return Outcome(True, f"spawned {name}" + (f" in {mode} mode" if mode else ""))

    @staticmethod
    def _call(what: str, call: Callable[[], Answer]) -> Outcome:
        """A call on an agent: the runtime's line, or ``what: error`` if it raised."""
        try:
            answer = call()
        except Exception as exc:  # the runtime's error is the person's information
            return Outcome(False, f"{what}: {exc}", failed=True)
        return Outcome(answer.ok, answer.text, failed=not answer.ok)

    @staticmethod
    def _void(what: str, done: str, call: Callable[[], None]) -> Outcome:
        """A call that returns nothing: ``done``, or ``what: error`` if it raised."""
        try:
            call()
        except Exception as exc:
            return Outcome(False, f"{what}: {exc}", failed=True)
        return Outcome(True, done)

    # ------------------------------------------------------------------ modes

    def set_lead_mode(self, mode: str) -> Outcome:
        try:
            self.runtime.set_lead_mode(mode)
        except ValueError as exc:
            return Outcome(False, str(exc), failed=True)
        return Outcome(True, f"{LEAD_NAME}: {mode} mode")

    def set_teammate_permission_mode(self, mode: str) -> Outcome:
        try:
            self.runtime.set_teammate_permission_mode(mode)
        except ValueError as exc:
            return Outcome(False, str(exc), failed=True)
        return Outcome(True, f"teammates spawned from now on: {mode} mode")


class ReadOnlySteering:
    """For a viewer with no runtime: every call is refused with the same line."""

    read_only = True
    denial_feedback = False

    def _refuse(self, *_: object, **__: object) -> Outcome:
        return Outcome(False, READ_ONLY)

    def unavailable(self, lever: str) -> str | None:
        return READ_ONLY

    approve = reject = allow = deny = shutdown = kill = interrupt = send = _refuse
    set_lead_mode = set_teammate_permission_mode = _refuse

    async def spawn(self, name: str, prompt: str, mode: str | None = None) -> Outcome:
        return self._refuse()

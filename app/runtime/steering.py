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

from app.core.paths import LEAD_NAME
from app.runtime.api import Approval, RuntimeAPI

READ_ONLY = "Read-only viewer: there is no runtime here to answer that."

#: How the runtime says that a request cannot be answered (any more).
_STALE_PREFIXES = ("already resolved", "unknown request id")
#: How it says that the answer was taken but could not reach the requester.
_UNDELIVERED = ("answer to ", "no team: ")


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


def describe_request(approval: Approval) -> str:
    """``engineer's plan``, ``researcher's Bash request``, ``tester's shutdown``."""
    if approval.kind == "permission":
        return f"{approval.agent}'s {approval.tool_name or 'permission'} request"
    return f"{approval.agent}'s {approval.kind}"


def _not_the_persons(approval: Approval) -> Outcome:
    """A shutdown request is answered by the teammate it is addressed to, never the person."""
    return Outcome(False, f"{approval.agent} answers its own shutdown request")


class RuntimeSteering:
    """Steers a runtime in this process through its ``RuntimeAPI`` methods."""

    read_only = False
    denial_feedback = False  # ``answer_permission`` takes no words

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
        return self._answer(
            approval, "denied", lambda: self.runtime.answer_permission(rid, False, False)
        )

    def _answer(self, approval: Approval, verb: str, call: Callable[[], object]) -> Outcome:
        what = describe_request(approval)
        try:
            answer = str(call() or "")
        except Exception as exc:  # the runtime's error is the person's information
            return Outcome(False, f"{what}: {exc}", failed=True)
        if answer.startswith(_STALE_PREFIXES):
            if answer.startswith("already resolved"):
                why = answer.removeprefix("already resolved").strip()
                return Outcome(False, f"{what} was already resolved {why}".strip(), settled=True)
            return Outcome(False, f"{what} is no longer pending", settled=True)
        if " request, not a " in answer:  # the runtime names the kinds, not the id
            return Outcome(False, f"{what}: {answer.split(' is a ', 1)[-1]}")
        if answer.startswith(_UNDELIVERED):  # answered here, but the teammate never heard
            return Outcome(False, f"{what} {verb}, but {answer}", failed=True, settled=True)
        note = answer[answer.index(" (rule ") :] if " (rule " in answer else ""
        return Outcome(True, f"{what} {verb}{note}", settled=True)

    # ------------------------------------------------------------------ agents

    def shutdown(self, agent: str) -> Outcome:
        return self._call(
            f"shutdown {agent}",
            f"shutdown requested from {agent}",
            lambda: self.runtime.request_shutdown(agent),
        )

    def kill(self, agent: str) -> Outcome:
        return self._call(f"kill {agent}", f"killed {agent}", lambda: self.runtime.kill(agent))

    def interrupt(self, agent: str) -> Outcome:
        return self._call(
            f"interrupt {agent}", f"interrupted {agent}", lambda: self.runtime.interrupt(agent)
        )

    def send(self, agent: str, text: str) -> Outcome:
        if agent == LEAD_NAME:
            call: Callable[[], object] = lambda: self.runtime.submit(text)  # noqa: E731
        else:
            call = lambda: self.runtime.inject_message(agent, text)  # noqa: E731
        return self._call(f"send to {agent}", f"message sent to {agent}", call)

    async def spawn(self, name: str, prompt: str, mode: str | None = None) -> Outcome:
        try:
            await self.runtime.spawn_teammate(name, prompt, mode=mode)
        except Exception as exc:
            return Outcome(False, f"spawn {name}: {exc}", failed=True)
        return Outcome(True, f"spawned {name}" + (f" in {mode} mode" if mode else ""))

    @staticmethod
    def _call(what: str, done: str, call: Callable[[], object]) -> Outcome:
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


class ReadOnlySteering:
    """For a viewer with no runtime: every call is refused with the same line."""

    read_only = True
    denial_feedback = False

    def _refuse(self, *_: object, **__: object) -> Outcome:
        return Outcome(False, READ_ONLY)

    approve = reject = allow = deny = shutdown = kill = interrupt = send = _refuse
    set_lead_mode = _refuse

    async def spawn(self, name: str, prompt: str, mode: str | None = None) -> Outcome:
        return self._refuse()

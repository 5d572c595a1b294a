"""The dashboard's levers when it also holds Claude Code's hook requests: a request the bridge
holds is answered through it (the hook prints the answer), any other through the levers it
wraps (e.g. ``FileSteering``, the team's inboxes). A held request of another Claude Code
session's team (``Bridge.foreign``) is refused in one line: the dashboard answers only the team
it steers."""

from __future__ import annotations

from app.runtime.api import Approval
from app.runtime.bridge.server import Bridge
from app.runtime.steering import Outcome, Steering


class BridgeSteering:
    """``Steering`` for a viewer with a :class:`Bridge` (see the module docstring)."""

    def __init__(self, inner: Steering, bridge: Bridge) -> None:
        self.inner = inner
        self.bridge = bridge

    @property
    def read_only(self) -> bool:
        return False

    @property
    def denial_feedback(self) -> bool:
        return True  # a deny's message is what the agent's model reads

    def _answer(
        self, approval: Approval, allow: bool, always: bool, feedback: str | None
    ) -> Outcome:
        foreign = self.bridge.foreign(approval.request_id)
        if foreign is not None:
            return Outcome(False, foreign)
        ok, text = self.bridge.answer(
            approval.request_id,
            allow=allow,
            always=always,
            feedback=feedback,
            rule=approval.suggestion,  # the rule the person chose among ``rule_choices``
            tool_input=approval.tool_input,  # as the person edited it, if they did
        )
        return Outcome(ok, text, settled=True)

    def approve(self, approval: Approval) -> Outcome:
        if self.bridge.knows(approval.request_id):
            return self._answer(approval, True, False, None)
        return self.inner.approve(approval)

    def reject(self, approval: Approval, feedback: str) -> Outcome:
        if self.bridge.knows(approval.request_id):
            return self._answer(approval, False, False, feedback)
        return self.inner.reject(approval, feedback)

    def allow(self, approval: Approval, always: bool = False) -> Outcome:
        if self.bridge.knows(approval.request_id):
            return self._answer(approval, True, always, None)
        return self.inner.allow(approval, always)

    def deny(self, approval: Approval, feedback: str | None = None) -> Outcome:
        if self.bridge.knows(approval.request_id):
            return self._answer(approval, False, False, feedback)
        return self.inner.deny(approval, feedback)

    # the agent levers are the wrapped steering's

    def unavailable(self, lever: str) -> str | None:
        return self.inner.unavailable(lever)

    def shutdown(self, agent: str) -> Outcome:
        return self.inner.shutdown(agent)

    def kill(self, agent: str) -> Outcome:
        return self.inner.kill(agent)

    def interrupt(self, agent: str) -> Outcome:
        return self.inner.interrupt(agent)

    def send(self, agent: str, text: str) -> Outcome:
        return self.inner.send(agent, text)

    async def spawn(self, name: str, prompt: str, mode: str | None = None) -> Outcome:
        return await self.inner.spawn(name, prompt, mode)

    def set_lead_mode(self, mode: str) -> Outcome:
        return self.inner.set_lead_mode(mode)

    def set_teammate_permission_mode(self, mode: str) -> Outcome:
        return self.inner.set_teammate_permission_mode(mode)

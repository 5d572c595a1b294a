"""The offline model: deterministic lead and teammate policies behind the Messages API.

One handler serves every agent; it tells the lead from a teammate by the system prompt, as a
real model would, and derives everything else from the conversation it is sent.
"""

from __future__ import annotations

from app.runtime.offline.lead_policy import LeadPolicy
from app.runtime.offline.plans import ModelHandler, ModelRequest, ResponsePlan, reply, text
from app.runtime.offline.teammate_policy import TeammatePolicy
from app.runtime.scheduling.offload import off_loop


class OfflineModel:
    """The stock offline brain. Deciding reads the whole conversation, which grows with every
    turn, so it runs in a worker thread (standing in for a remote model's own computer) and the
    event loop the agents share stays free."""

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        return await off_loop(self.decide, request)

    def decide(self, request: ModelRequest) -> ResponsePlan:
        system = request.system_text
        if "You are the team lead" in system:
            return LeadPolicy(request).decide()
        if "You are a teammate in team" in system:
            return TeammatePolicy(request).decide()
        return reply(text("I am teamdeck's offline model; I only play team roles."))


def make_offline_model() -> ModelHandler:
    return OfflineModel()

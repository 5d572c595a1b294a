"""A hostile teammate floods the lead with messages: every message reaches the lead's model,
in a few model calls, not one per message (issue 28, item 10: 2,000 messages woke the lead
into 691 model calls). Calls are counted, never timed."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from app.core import Home
from app.runtime.agent import mail_hold
from app.runtime.offline import reply
from app.runtime.offline.plans import tool_use
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Router, Script, call_tool, make_runtime, settle, until

__all__ = ["make_runtime"]  # the fixture, used by name

FLOOD = 2000
#: The hostile teammates, each sending its share of the flood (one teammate's conversation
#: would outgrow the model's context first).
SENDERS = ("noisy", "loud")
#: Messages the hostile model sends per response (parallel tool calls, as a model may).
PER_RESPONSE = 50
#: The lead's model calls the flood may cost: the first message read at once, then a hold
#: doubling per call (0.25 s to 8 s, ``app.runtime.agent.mail_hold``) while the flood goes
#: on, plus one per ``mail_hold.MOST`` seconds the flood lasts (a loaded machine stretches
#: it: 38 calls in a full run at load 20). Read as it came, the flood cost the lead hundreds
#: of calls.
MOST_CALLS = 25


def _flood_steps(first: int, count: int) -> list[object]:
    steps: list[object] = []
    for start in range(first, first + count, PER_RESPONSE):
        sends = [
            tool_use(
                "SendMessage",
                {
                    "type": "message",
                    "recipient": "team-lead",
                    "content": f"status update #{k}#",
                    "summary": f"update {k}",
                },
            )
            for k in range(start, start + PER_RESPONSE)
        ]
        steps.append(reply(*sends))
    return steps


async def test_a_flood_of_messages_costs_the_lead_a_few_model_calls(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    lead = Script(then="Noted.")
    share = FLOOD // len(SENDERS)
    router = Router(default=Script(then="Done."), team_lead=lead)
    for k, name in enumerate(SENDERS):
        router[name] = Script(_flood_steps(k * share, share), then="Done.")
    runtime = make_runtime(router)
    began = time.monotonic()
    await runtime.start()
    content, failed = await call_tool(runtime.lead_session, "TeamCreate", {"team_name": "flood"})
    assert not failed, content
    for name in SENDERS:
        await runtime.spawn_teammate(name, "Report often.")

    lasts = [f"status update #{k * share + share - 1}#" for k in range(len(SENDERS))]
    checked = [0, ""]  # requests read so far, and the latest one's conversation

    def everything() -> bool:  # each request read once: its conversation holds the earlier
        if len(lead.requests) > checked[0]:
            checked[:] = [len(lead.requests), json.dumps(lead.requests[-1].body["messages"])]
        return all(last in str(checked[1]) for last in lasts)

    await until(everything, "each sender's last message shown to the lead's model", within=300)
    await settle()
    text = json.dumps(lead.requests[-1].body["messages"])
    missing = [k for k in range(FLOOD) if f"status update #{k}#" not in text]
    assert missing == []  # every message reached the model ...
    lasted = time.monotonic() - began  # not a limit on time: the hold's allowance for it
    most = MOST_CALLS + int(lasted / mail_hold.MOST)
    assert len(lead.requests) <= most, (len(lead.requests), lasted)  # ... in a few calls

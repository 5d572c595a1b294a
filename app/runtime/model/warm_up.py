"""The SDK's first response, paid once by the fork server instead of once per teammate process.

Importing the SDK is not all of its start: the first streamed response builds, lazily, the
pydantic classes the SDK parses events into (the generic ``ParsedMessage[...]`` family and its
content blocks, about fifty classes, each with its validation schema), the schemas of models
declared with deferred building, and imports the tracing modules. In a teammate process that
was ~0.4 s of CPU before its first turn could end -- profiled with ``$TEAMDECK_PROFILE_DIR``
(``app.runtime.agent_main``), it was most of what a forked teammate spent on a short task, and
eight teammates started at once paid it eight times on two cores. The fork server
(:mod:`app.runtime.runners.forkserver`) calls :func:`warm_up` after its imports: one response
of the offline model, streamed through a real client the way an agent streams one, with a text
block and a tool call (the two kinds of block a turn's response holds). Its children inherit
the classes built, and their first response costs what any later one does.

Nothing of the response is kept, no file is read or written and nothing reaches the network
(the offline transport answers in this process). It runs on a loop of its own with offloading
off, so no thread is left behind: the fork server forks only while single-threaded.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.runtime.offline.plans import ModelRequest, Reply, reply, text, tool_use
from app.runtime.scheduling import offload

log = logging.getLogger(__name__)


#: What the response is asked for (any model name: the offline transport answers it).
PARAMS: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "system": [{"type": "text", "text": "warm-up", "cache_control": {"type": "ephemeral"}}],
    "messages": [{"role": "user", "content": "warm-up"}],
    "tools": [
        {
            "name": "TaskList",
            "description": "warm-up",
            "input_schema": {"type": "object", "properties": {}},
        }
    ],
}


class _Answer:
    """The offline model's one answer: a text block and a tool call."""

    async def respond(self, request: ModelRequest) -> Reply:
        return reply(text("warming up"), tool_use("TaskList", {"note": "warm-up"}))


async def _one_response() -> object:
    from app.runtime.model.client import make_client

    client = make_client(handler=_Answer(), pace=0.0, ttft=0.0, max_retries=0)
    try:
        async with client.messages.stream(**PARAMS) as stream:
            async for _event in stream:
                pass
            return stream.current_message_snapshot
    finally:
        await client.close()


def warm_up() -> bool:
    """Stream one offline response in this process (see the module docstring); whether it
    worked. A failure is logged and changes nothing but the first response's cost."""
    previous = offload.set_enabled(False)  # no worker thread: the caller forks afterwards
    try:
        asyncio.run(_one_response())
    except Exception:  # noqa: BLE001 -- an optimisation only
        log.warning("the model SDK was not warmed up", exc_info=True)
        return False
    finally:
        offload.set_enabled(previous)
    return True

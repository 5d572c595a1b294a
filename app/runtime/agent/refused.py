"""Refused tool calls leave their long inputs out of the conversation."""

from __future__ import annotations

from typing import Any

#: A refused tool call's input strings longer than this are not kept in the conversation.
KEPT_REFUSED_CHARS = 2048


def forget_refused_inputs(calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> None:
    """A refused call's long input strings leave the conversation (the stored ``tool_use``
    blocks are changed in place): a 1 MiB message that SendMessage refused would otherwise be
    sent back with every later request of the agent, fifty refusals making each request 50 MB.
    The model still sees what it tried (each string's start and length) and the error."""
    for call, result in zip(calls, results, strict=True):
        tool_input = call.get("input")
        if not result.get("is_error") or not isinstance(tool_input, dict):
            continue
        for key, value in tool_input.items():
            if isinstance(value, str) and len(value) > KEPT_REFUSED_CHARS:
                tool_input[key] = (
                    value[:200] + f"… [{len(value):,} characters, refused and not kept]"
                )

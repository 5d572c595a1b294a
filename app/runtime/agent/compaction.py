"""Keeping a long-lived agent's conversation inside the model's context window.

Teammates live for many turns (one per message or claimed task). Before each request, if the
conversation has grown past ``COMPACT_AT`` characters of the JSON it is sent as (~100-130k
tokens at 3-4 characters a token: well inside a 200k window), the oldest whole turns are
dropped and a short note takes their place, naming the teammates those turns spawned (an
earlier note's names carried on). Cuts happen only at the start of a turn (a user message that
begins with text, not with tool results), so every ``tool_use`` keeps its ``tool_result`` and
roles still alternate.
"""

from __future__ import annotations

import re
from typing import Any

COMPACT_AT = 400_000  # characters of JSON (``_size``)
KEEP = 150_000
#: What the note in place of the dropped turns says (a model, the offline one too, reads it).
DROPPED = "earlier messages of this conversation were dropped"
_NAMED = re.compile(r"Teammates spawned in them: ([^\]]*)\.\]")
#: Teammates the note names at most (the spawns of the dropped turns).
MAX_NAMED = 200


def _size(message: dict[str, Any]) -> int:
    """About the characters of ``message`` as JSON, as the request sends it: its texts and
    inputs, and also the ids, names, keys and punctuation around them. A lead's hundreds of
    small tool calls are as much structure as text (counted as text alone, 300 ``TaskCreate``
    calls and their results were half their size, and a conversation "within" ``COMPACT_AT``
    was past the model's context window). Cheaper than ``json.dumps`` (~7x)."""
    content = message.get("content")
    if isinstance(content, str):
        return len(content) + _MESSAGE
    return _MESSAGE + sum(_json_size(block) for block in content or [])


#: ``{"role":"user","content":[...]}`` around a message's content.
_MESSAGE = 32


def _json_size(block: object) -> int:
    """A content block's JSON size, about: its keys and strings, an ``input`` by its ``str``
    (as long as its JSON, give or take the quotes), a list of blocks (a tool result's) block by
    block."""
    if not isinstance(block, dict):
        return len(str(block)) + 1
    total = 2
    for key, value in block.items():
        total += len(key) + 4
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, list):
            total += sum(_json_size(item) for item in value)
        else:
            total += len(str(value))
    return total


def _starts_turn(message: dict[str, Any]) -> bool:
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and bool(content) and content[0].get("type") == "text"


class MessageSizes:
    """The sizes of a conversation's messages, kept from one request to the next: a message is
    measured when it is new or has grown (a user message whose tool results were extended, the
    first one a note went into), so a long conversation is not walked whole at every request.
    It holds the messages it measured until the next call (an id stays theirs meanwhile)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[dict[str, Any], int, int]] = {}

    def __call__(self, messages: list[dict[str, Any]]) -> list[int]:
        known: dict[int, tuple[dict[str, Any], int, int]] = {}
        sizes = []
        for message in messages:
            content = message.get("content")
            length = len(content) if isinstance(content, list | str) else 0
            seen = self._known.get(id(message))
            if seen is not None and seen[0] is message and seen[1] == length:
                size = seen[2]
            else:
                size = _size(message)
            known[id(message)] = (message, length, size)
            sizes.append(size)
        self._known = known
        return sizes


def compact(messages: list[dict[str, Any]], measure: MessageSizes | None = None) -> int:
    """Drop the oldest turns in place when the conversation is too big; returns how many
    messages were removed (0 when nothing needed to go or no safe cut exists). ``measure``:
    the conversation's kept sizes (``AgentSession.message_sizes``)."""
    sizes = measure(messages) if measure is not None else [_size(m) for m in messages]
    if sum(sizes) <= COMPACT_AT:
        return 0
    kept = 0
    cut = None
    for index in range(len(messages) - 1, 0, -1):
        kept += sizes[index]
        if _starts_turn(messages[index]):
            cut = index
            if kept >= KEEP:
                break
    if cut is None or cut == 0:
        return 0
    spawned = _spawned(messages[:cut])
    del messages[:cut]
    team = f" Teammates spawned in them: {', '.join(spawned)}." if spawned else ""
    note = {
        "type": "text",
        "text": f"[{cut} {DROPPED} to stay within the "
        f"context window; use TaskList / TaskGet to re-check the state of the work.{team}]",
    }
    first = messages[0]
    if isinstance(first["content"], str):
        first["content"] = [note, {"type": "text", "text": first["content"]}]
    else:
        first["content"].insert(0, note)
    return cut


def _spawned(messages: list[dict[str, Any]], most: int = MAX_NAMED) -> list[str]:
    """The teammates the dropped turns spawned (``Task`` calls' names), in order: a lead that
    forgets them never asks them to shut down (they would idle on, holding the team open)."""
    names: list[str] = []
    for message in messages:
        if not isinstance(message.get("content"), list):
            continue
        if message.get("role") == "user":  # an earlier note: its names carry on
            for block in message["content"]:
                text = block.get("text") if block.get("type") == "text" else None
                found = _NAMED.search(text) if isinstance(text, str) and DROPPED in text else None
                if found:
                    names += [n for n in found[1].split(", ") if n and n not in names]
            continue
        for block in message["content"]:
            tool_input = block.get("input") if block.get("type") == "tool_use" else None
            if block.get("name") == "Task" and isinstance(tool_input, dict):
                name = tool_input.get("name")
                if isinstance(name, str) and name and name not in names and len(names) < most:
                    names.append(name[:64])
    return names[:most]

"""Reading a conversation back: what an offline policy needs to know about its own past.

Policies are stateless: each request carries the whole conversation, so everything a policy
"remembers" is recomputed here from the messages (tool calls with their results, and the user
texts that arrived), exactly as a real model would read it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from app.runtime.offline.plans import ModelRequest

_WRAPPED = re.compile(
    r'<teammate_message teammate_id="([^"]*)"[^>]*>\n(.*?)\n</teammate_message>', re.S
)


@dataclass
class Call:
    """One tool call the model made, with its result once the client sent it back."""

    index: int  # position of the assistant message in the conversation
    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool = False

    def result_json(self) -> Any:
        if self.result is None:
            return None
        try:
            return json.loads(self.result)
        except ValueError:
            return None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.is_error


@dataclass
class Incoming:
    """A text the agent received: a person's prompt, or a message from a teammate."""

    index: int
    sender: str | None  # None for the person's own text
    text: str

    def frame(self) -> dict[str, Any] | None:
        body = self.text.strip()
        if not body.startswith("{"):
            return None
        try:
            data = json.loads(body)
        except ValueError:
            return None
        return data if isinstance(data, dict) and "type" in data else None


@dataclass
class History:
    calls: list[Call] = field(default_factory=list)
    incoming: list[Incoming] = field(default_factory=list)
    assistant_texts: list[tuple[int, str]] = field(default_factory=list)
    last_index: int = 0

    @classmethod
    def of(cls, request: ModelRequest) -> History:
        history = cls()
        by_id: dict[str, Call] = {}
        for index, message in enumerate(request.messages):
            history.last_index = index
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks or []:
                kind = block.get("type")
                if message.get("role") == "assistant":
                    if kind == "tool_use":
                        raw_input = block.get("input")
                        call = Call(
                            index,
                            block["id"],
                            block["name"],
                            dict(raw_input) if isinstance(raw_input, dict) else {},
                        )
                        history.calls.append(call)
                        by_id[call.id] = call
                    elif kind == "text" and block.get("text", "").strip():
                        history.assistant_texts.append((index, block["text"]))
                elif kind == "tool_result":
                    answered = by_id.get(block.get("tool_use_id", ""))
                    if answered is not None:
                        answered.result = _flatten(block.get("content"))
                        answered.is_error = bool(block.get("is_error"))
                elif kind == "text":
                    history.incoming.extend(_split_incoming(index, block.get("text", "")))
        return history

    # ------------------------------------------------------------------ queries

    def calls_named(self, name: str, since: int = 0) -> list[Call]:
        return [c for c in self.calls if c.name == name and c.index >= since]

    def last_call(self) -> Call | None:
        return self.calls[-1] if self.calls else None

    def last_calls(self) -> list[Call]:
        """The calls of the most recent assistant message (the ones just answered)."""
        if not self.calls:
            return []
        last = self.calls[-1].index
        return [c for c in self.calls if c.index == last]

    def incoming_since(self, index: int) -> list[Incoming]:
        return [m for m in self.incoming if m.index >= index]

    def latest_incoming_index(self) -> int:
        return self.incoming[-1].index if self.incoming else -1

    def frames(self, since: int = 0) -> Iterator[tuple[Incoming, dict[str, Any]]]:
        for message in self.incoming_since(since):
            frame = message.frame()
            if frame is not None:
                yield message, frame


def _flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _split_incoming(index: int, text: str) -> list[Incoming]:
    found = [Incoming(index, m.group(1), _unescape(m.group(2))) for m in _WRAPPED.finditer(text)]
    lines = _WRAPPED.sub("", text).splitlines()
    rest = "\n".join(
        line for line in lines if not line.startswith(("[idle teammates", "[notes"))
    ).strip()
    if rest:
        found.insert(0, Incoming(index, None, rest))
    return found


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<")

"""What an offline model sees (`ModelRequest`) and what it answers (a `ResponsePlan`).

The offline transport speaks the wire format; a `ModelHandler` only decides *what* to say. Keeping
them apart means a policy (or a test script) never builds JSON or SSE by hand, and the same plan
is delivered as a JSON `Message` or as a stream, depending on what the client asked for.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

StopReason: TypeAlias = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"
]


# --------------------------------------------------------------------------------------------------
# The request side


@dataclass(frozen=True)
class ToolResult:
    """One `tool_result` block the client sent back, with its content flattened to text."""

    tool_use_id: str
    content: str
    is_error: bool


@dataclass(frozen=True)
class ModelRequest:
    """A parsed `POST /v1/messages` body with the accessors a policy needs.

    Attributes:
        body: The raw JSON body exactly as the SDK sent it (use it for anything not covered here,
            e.g. to assert where `cache_control` markers were placed).
    """

    body: Mapping[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream", False))

    @property
    def max_tokens(self) -> int:
        return int(self.body.get("max_tokens", 0))

    @property
    def system_text(self) -> str:
        """The system prompt as one string (a list of text blocks is joined with blank lines)."""
        system = self.body.get("system")
        if system is None:
            return ""
        if isinstance(system, str):
            return system
        return "\n\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def tools(self) -> list[str]:
        """The names of the tools offered on this request, in order."""
        return [str(t.get("name", "")) for t in self.body.get("tools", []) if isinstance(t, dict)]

    @property
    def tool_defs(self) -> list[dict[str, Any]]:
        """The full tool definitions (name, description, input_schema, ...)."""
        return [t for t in self.body.get("tools", []) if isinstance(t, dict)]

    @property
    def metadata(self) -> dict[str, Any]:
        """The request `metadata` object (`{}` when absent); see `user_id` for the usual field."""
        meta = self.body.get("metadata")
        return dict(meta) if isinstance(meta, dict) else {}

    @property
    def user_id(self) -> str | None:
        """`metadata.user_id`: the runtime puts the agent's name here, so one handler can serve
        the lead and every teammate and still tell them apart."""
        value = self.metadata.get("user_id")
        return str(value) if value is not None else None

    @property
    def last_message(self) -> dict[str, Any] | None:
        msgs = self.messages
        return msgs[-1] if msgs else None

    @property
    def last_user_text(self) -> str:
        """The text blocks of the last user message joined together ('' if it only holds tool
        results, or if there is no user message)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    @property
    def tool_results(self) -> list[ToolResult]:
        """The `tool_result` blocks of the last user message, in order."""
        for message in reversed(self.messages):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if not isinstance(content, list):
                return []
            return [
                ToolResult(
                    tool_use_id=str(block.get("tool_use_id", "")),
                    content=_text_of(block.get("content")),
                    is_error=bool(block.get("is_error", False)),
                )
                for block in content
                if isinstance(block, dict) and block.get("type") == "tool_result"
            ]
        return []

    @property
    def turn(self) -> int:
        """How many assistant turns are already in the conversation (0 on the first request)."""
        return sum(1 for m in self.messages if m.get("role") == "assistant")


def _text_of(content: object) -> str:
    """Flatten message or tool_result content (a string, or a list of blocks) to its text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return str(content)


# --------------------------------------------------------------------------------------------------
# The response side


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    name: str
    input: dict[str, Any]
    id: str


Block: TypeAlias = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class Reply:
    """A successful assistant message.

    Attributes:
        blocks: Content blocks in order.
        stop_reason: Why the turn stopped.
        usage: Optional overrides for the computed usage counts (e.g. `{"output_tokens": 7}`).
    """

    blocks: tuple[Block, ...]
    stop_reason: StopReason
    usage: Mapping[str, int] | None = None


@dataclass(frozen=True)
class ErrorPlan:
    """An HTTP error answer shaped like the real API's `{"type": "error", "error": {...}}`.

    Attributes:
        retry_after: Seconds the client is told to wait (sent as `retry-after-ms`) on retryable
            statuses. The default of 1 ms keeps the SDK's retry path real but instant in tests.
        should_retry: When set, sent as the `x-should-retry` header, which the SDK obeys over its
            status-code policy.
    """

    status: int
    type: str
    message: str
    retry_after: float | None = 0.001
    should_retry: bool | None = None


@dataclass(frozen=True)
class CutStream:
    """A reply whose connection drops part-way.

    Blocks before `after_blocks` are delivered whole; block `after_blocks` (if any) is started
    and about half of its deltas are sent; then the body stops with a transport error, as when
    the peer closes mid chunked body. With `error`, an SSE `error` event is sent at that point
    instead (the API's way of failing a stream that has already started, e.g. overloaded).
    A non-streaming request gets half a JSON body followed by the same transport error.
    """

    reply: Reply
    after_blocks: int
    error: ErrorPlan | None = None


ResponsePlan: TypeAlias = Reply | ErrorPlan | CutStream


@runtime_checkable
class ModelHandler(Protocol):
    """The server-side brain of the offline model: one call per HTTP attempt.

    Retries by the SDK call `respond` again, so a handler sees every attempt. A handler may raise;
    the transport turns the exception into a non-retryable 500 so a bug is visible, not retried.
    """

    async def respond(self, request: ModelRequest) -> ResponsePlan: ...


# --------------------------------------------------------------------------------------------------
# Helper constructors


def text(value: str) -> TextBlock:
    return TextBlock(value)


def tool_use(
    name: str, input: Mapping[str, Any] | None = None, id: str | None = None
) -> ToolUseBlock:
    """A tool call; the id defaults to a fresh `toolu_...` id like the real API's."""
    return ToolUseBlock(name=name, input=dict(input or {}), id=id or new_id("toolu_"))


def reply(
    *blocks: Block | str,
    stop_reason: StopReason | None = None,
    usage: Mapping[str, int] | None = None,
) -> Reply:
    """An assistant message; plain strings become text blocks.

    `stop_reason` defaults to "tool_use" when any block is a tool call, else "end_turn".
    """
    normalized = tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks)
    if stop_reason is None:
        has_tool = any(isinstance(b, ToolUseBlock) for b in normalized)
        stop_reason = "tool_use" if has_tool else "end_turn"
    return Reply(normalized, stop_reason, usage)


def error(
    status: int,
    type: str,
    message: str,
    *,
    retry_after: float | None = 0.001,
    should_retry: bool | None = None,
) -> ErrorPlan:
    return ErrorPlan(status, type, message, retry_after, should_retry)


def rate_limited(message: str = "Number of requests has exceeded your rate limit.") -> ErrorPlan:
    return ErrorPlan(429, "rate_limit_error", message)


def overloaded(message: str = "Overloaded") -> ErrorPlan:
    return ErrorPlan(529, "overloaded_error", message)


def cut_stream(
    *blocks: Block | str,
    after_blocks: int | None = None,
    error: ErrorPlan | None = None,
) -> CutStream:
    """A reply that breaks off inside block `after_blocks` (default: inside the last block)."""
    planned = reply(*blocks)
    cut_at = len(planned.blocks) - 1 if after_blocks is None else after_blocks
    return CutStream(planned, max(cut_at, 0), error)


def new_id(prefix: str) -> str:
    """An id shaped like the API's (`msg_` / `toolu_` + 24 characters)."""
    return prefix + uuid.uuid4().hex[:24]

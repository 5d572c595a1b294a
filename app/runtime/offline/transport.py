"""The server side of the Messages API, as an `httpx2.MockTransport` handler.

`make_client()` plugs `OfflineTransport` into a normal `anthropic.AsyncAnthropic`, so offline runs
exercise the real SDK: request building, retries (429/529/5xx, honouring `retry-after-ms`), SSE
parsing, `MessageStream` accumulation and exception types. Only the model is fake: a `ModelHandler`
returns a plan and this module encodes it the way the API would — a JSON `Message`, or a
`text/event-stream` with message_start / content_block_* / message_delta / message_stop events,
paced by `asyncio.sleep` inside the response body so streaming stays non-blocking.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import httpx2

from app.runtime.scheduling.offload import CALLER_LOOP, off_loop

from .cache import (
    PromptCache,
    SegmentMemo,
    Segments,
    estimate_input_tokens,
    estimate_tokens,
)
from .pace import Pace, pace_from_env
from .plans import (
    Block,
    CutStream,
    ErrorPlan,
    ModelHandler,
    ModelRequest,
    Reply,
    ResponsePlan,
    TextBlock,
    new_id,
)

log = logging.getLogger(__name__)

TEXT_WORDS_PER_DELTA = 2
JSON_CHARS_PER_DELTA = 16

Event = tuple[str, dict[str, Any]]

sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
"""How the body waits between chunks (a test swaps in a fake clock)."""


class OfflineTransport:
    """Callable for `httpx2.MockTransport`: routes `/v1/messages` (and `count_tokens`) to a handler.

    Args:
        handler: Decides each reply.
        pace: Seconds between streamed deltas; `None` reads `TEAMDECK_OFFLINE_PACE` per request.
        ttft: Seconds before the first delta; `None` reads `TEAMDECK_OFFLINE_TTFT` per request.
        tps: Output tokens per second (replaces ``pace``); `None` reads `TEAMDECK_OFFLINE_TPS`.
        cache: Prompt cache for the usage counts (a fresh one per transport by default).
        validate: Reject malformed conversations with a 400, as the API does — notably a
            `tool_use` without its `tool_result` in the next message, the classic loop bug.
    """

    def __init__(
        self,
        handler: ModelHandler,
        *,
        pace: float | None = None,
        ttft: float | None = None,
        tps: float | None = None,
        cache: PromptCache | None = None,
        validate: bool = True,
    ) -> None:
        self.handler = handler
        self._pace = pace
        self._ttft = ttft
        self._tps = tps
        self.cache = cache if cache is not None else PromptCache()
        self.validate = validate
        self.segments = SegmentMemo()

    @property
    def pace(self) -> float:
        """Seconds per streamed delta (given, else from the environment)."""
        return self._pace if self._pace is not None else pace_from_env().per_delta

    @property
    def timing(self) -> Pace:
        """The streaming pace for the next response: what was given, the rest read from the
        environment on every request (see ``app.runtime.offline.pace``)."""
        env = pace_from_env()
        ttft = self._ttft if self._ttft is not None else env.ttft
        tps = self._tps if self._tps is not None else env.tps
        return Pace(per_delta=self.pace, ttft=ttft or 0.0, tps=tps if tps and tps > 0 else None)

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one request. The server's own work -- parsing and validating the body, the
        prompt-cache accounting, encoding the reply -- runs in a worker thread, as a remote
        server's would run elsewhere: it grows with the conversation and must not stall the
        event loop the agents (and the dashboard) share. The handler runs on the loop of the
        code that made the call (it may await that loop's objects); ``OfflineModel`` moves its
        own deciding off that loop."""
        path = request.url.path.rstrip("/")
        if request.method != "POST" or not path.endswith(("/v1/messages", "/count_tokens")):
            return error_response(ErrorPlan(404, "not_found_error", f"Not found: {path}"))
        received = await off_loop(self.receive, path, request.content)
        if isinstance(received, httpx2.Response):
            return received
        model_request, segments = received
        try:
            plan = await self._respond(model_request)
            return await off_loop(self.encode, plan, model_request, segments)
        except Exception as exc:  # a handler bug must surface, not be retried into silence
            log.exception("offline model handler failed")
            return error_response(
                ErrorPlan(
                    500,
                    "api_error",
                    f"offline model failed: {type(exc).__name__}: {exc}",
                    should_retry=False,
                )
            )

    async def _respond(self, request: ModelRequest) -> ResponsePlan:
        """The handler's plan, decided on the caller's loop when the request was sent from
        the model calls' own loop (``app.runtime.scheduling.model_loop``)."""
        caller = CALLER_LOOP.get()
        if caller is None or caller is asyncio.get_running_loop():
            return await self.handler.respond(request)
        future = asyncio.run_coroutine_threadsafe(self.handler.respond(request), caller)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()  # an interrupted call: the handler stops waiting too
            raise

    def receive(self, path: str, content: bytes) -> tuple[ModelRequest, Segments] | httpx2.Response:
        """The request for the handler (with its encoded prompt, for the usage counts), or the
        response that refuses it (bad JSON, a malformed conversation) or answers it outright
        (``count_tokens``)."""
        try:
            body = json.loads(content or b"{}")
        except ValueError:
            return error_response(ErrorPlan(400, "invalid_request_error", "Invalid JSON body"))
        if not isinstance(body, dict):
            return error_response(ErrorPlan(400, "invalid_request_error", "Body must be an object"))
        if path.endswith("/count_tokens"):
            return httpx2.Response(200, json={"input_tokens": estimate_input_tokens(body)})
        segments = self.segments.segments(body)
        problem = validate_request(body, segments) if self.validate else None
        if problem is not None:
            return error_response(ErrorPlan(400, "invalid_request_error", problem))
        return ModelRequest(body), segments

    def encode(
        self, plan: ResponsePlan, request: ModelRequest, segments: Segments | None = None
    ) -> httpx2.Response:
        """Turn a plan into the HTTP response the API would send for this request."""
        if isinstance(plan, ErrorPlan):
            return error_response(plan)
        if not isinstance(plan, Reply | CutStream):
            raise TypeError(f"a ModelHandler must return a ResponsePlan, not {plan!r}")
        reply = plan.reply if isinstance(plan, CutStream) else plan
        cut = plan if isinstance(plan, CutStream) else None
        usage = self._usage(request, reply, segments)
        message = message_json(reply, model=request.model, usage=usage)
        headers = {"request-id": new_id("req_")}
        if not request.stream:
            if cut is not None:
                headers["content-type"] = "application/json"
                return httpx2.Response(200, headers=headers, content=_cut_json(message))
            return httpx2.Response(200, headers=headers, json=message)
        timing = self.timing
        events = sse_events(
            message,
            reply,
            cut_at_block=cut.after_blocks if cut else None,
            whole_blocks=cut is None and not timing.paced,
        )
        frames = [
            (data if name == "content_block_delta" else None, _sse(name, data))
            for name, data in events
        ]
        headers["content-type"] = "text/event-stream; charset=utf-8"
        headers["cache-control"] = "no-cache"
        return httpx2.Response(200, headers=headers, content=_sse_body(frames, timing, cut))

    def _usage(
        self, request: ModelRequest, reply: Reply, segments: Segments | None
    ) -> dict[str, Any]:
        inputs = self.cache.account(request.body, segments)
        usage: dict[str, Any] = {
            "input_tokens": inputs.input_tokens,
            "cache_creation_input_tokens": inputs.cache_creation_input_tokens,
            "cache_read_input_tokens": inputs.cache_read_input_tokens,
            "output_tokens": estimate_tokens(sum(_output_chars(b) for b in reply.blocks)),
            "service_tier": "standard",
        }
        usage.update(reply.usage or {})
        return usage


# --------------------------------------------------------------------------------------------------
# Validation


#: The real API's context window; a larger prompt is refused with a 400, as the API does.
CONTEXT_WINDOW = 200_000


def validate_request(body: Mapping[str, Any], segments: Segments | None = None) -> str | None:
    """The API's 400 message for the first problem found, or None for a well-formed request."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: Field required (an integer >= 1)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{index}.role: Input should be 'user' or 'assistant'"
    tokens = estimate_input_tokens(body, segments)
    if tokens > CONTEXT_WINDOW:
        return f"prompt is too long: {tokens} tokens > {CONTEXT_WINDOW} maximum"
    for index, message in enumerate(messages):
        previous = messages[index - 1] if index else None
        expected = (
            _ids(previous, "tool_use") if previous and previous["role"] == "assistant" else []
        )
        results = _ids(message, "tool_result") if message["role"] == "user" else []
        unexpected = [i for i in results if i not in expected]
        if unexpected:
            return (
                f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {', '.join(unexpected)}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
        missing = [i for i in expected if i not in results]
        if missing:
            return (
                f"messages.{index - 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    return None


def _ids(message: Mapping[str, Any], kind: str) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    key = "id" if kind == "tool_use" else "tool_use_id"
    return [str(b.get(key, "")) for b in content if isinstance(b, dict) and b.get("type") == kind]


# --------------------------------------------------------------------------------------------------
# Encoding


def block_json(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}


def message_json(reply: Reply, *, model: str, usage: Mapping[str, Any]) -> dict[str, Any]:
    """A complete `Message` object, as a non-streaming response body."""
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block_json(b) for b in reply.blocks],
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": dict(usage),
    }


def error_response(plan: ErrorPlan) -> httpx2.Response:
    """An error in the API's shape; retry hints go in the headers the SDK reads."""
    request_id = new_id("req_")
    headers = {"request-id": request_id}
    retryable = plan.status in (408, 409, 429) or plan.status >= 500
    if retryable and plan.retry_after is not None and plan.retry_after > 0:
        headers["retry-after-ms"] = str(max(1, round(plan.retry_after * 1000)))
    if plan.should_retry is not None:
        headers["x-should-retry"] = "true" if plan.should_retry else "false"
    body = {
        "type": "error",
        "error": {"type": plan.type, "message": plan.message},
        "request_id": request_id,
    }
    return httpx2.Response(plan.status, headers=headers, json=body)


def sse_events(
    message: Mapping[str, Any],
    reply: Reply,
    *,
    cut_at_block: int | None,
    whole_blocks: bool = False,
) -> list[Event]:
    """The event sequence for `message`; with `cut_at_block`, only what is sent before the cut.

    With `whole_blocks`, each block's content is one delta (a tool input: the API's empty
    opening `partial_json`, then the whole JSON): for a pace that waits between no deltas,
    where word-sized pieces would only cost the client an event each (and the SDK re-parses a
    tool input's partial JSON at every one of its deltas, quadratic in its size). The text
    and inputs the client assembles are the same."""
    usage = dict(message["usage"])
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[Event] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(reply.blocks):
        # Blocks open empty; their content arrives only as deltas.
        empty = TextBlock("") if isinstance(block, TextBlock) else replace(block, input={})
        opening = block_json(empty)
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        deltas = [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in _deltas(block, whole=whole_blocks)
        ]
        if cut_at_block == index:
            return events + deltas[: len(deltas) // 2]
        events.extend(deltas)
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    if cut_at_block is not None:
        return events
    delta = {"stop_reason": reply.stop_reason, "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _deltas(block: Block, *, whole: bool = False) -> list[dict[str, Any]]:
    if isinstance(block, TextBlock):
        pieces = ([block.text] if block.text else []) if whole else chunk_text(block.text)
        return [{"type": "text_delta", "text": piece} for piece in pieces]
    encoded = json.dumps(block.input, ensure_ascii=False)
    size = len(encoded) if whole else JSON_CHARS_PER_DELTA
    pieces = [encoded[i : i + size] for i in range(0, len(encoded), max(1, size))]
    # The API opens every tool input with an empty partial_json, then streams the JSON text.
    return [{"type": "input_json_delta", "partial_json": p} for p in ["", *pieces]]


def chunk_text(value: str, words: int = TEXT_WORDS_PER_DELTA) -> list[str]:
    """Split text into word-sized deltas that concatenate back to exactly `value`."""
    pieces: list[str] = []
    current = ""
    count = 0
    for char in value:
        if not char.isspace() and current and current[-1].isspace():
            count += 1
            if count >= words:
                pieces.append(current)
                current, count = "", 0
        current += char
    if current:
        pieces.append(current)
    return pieces


def _output_chars(block: Block) -> int:
    if isinstance(block, TextBlock):
        return len(block.text)
    return len(block.name) + len(json.dumps(block.input)) + 16


def _sse(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _dropped() -> httpx2.RemoteProtocolError:
    # What httpx raises when a server closes mid chunked body; the SDK does not wrap it.
    return httpx2.RemoteProtocolError(
        "peer closed connection without sending complete message body (incomplete chunked read)"
    )


Frame = tuple[Mapping[str, Any] | None, bytes]
"""One encoded SSE event, with its data if it is a content delta (the pace depends on it)."""


async def _sse_body(
    frames: Sequence[Frame], pace: Pace, cut: CutStream | None
) -> AsyncIterator[bytes]:
    deltas = 0
    for delta, encoded in frames:
        if delta is not None:
            wait = pace.before(deltas, delta)
            deltas += 1
            if wait > 0:
                await sleep(wait)
        yield encoded
    if cut is None:
        return
    if cut.error is not None:
        error = {"type": cut.error.type, "message": cut.error.message}
        yield _sse("error", {"type": "error", "error": error})
        return
    yield b'event: content_block_delta\ndata: {"type": "content_blo'
    raise _dropped()


async def _cut_json(message: Mapping[str, Any]) -> AsyncIterator[bytes]:
    encoded = json.dumps(message).encode()
    yield encoded[: len(encoded) // 2]
    raise _dropped()

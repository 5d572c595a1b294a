"""A local, loopback-only HTTP server that speaks the Messages API as its reference documents it.

It replays scripted responses per agent (routed by `metadata.user_id`: ``team-lead`` or
``name@team``), streaming them as server-sent events with every documented event type:
``message_start``, ``content_block_start``, ``ping``, ``content_block_delta`` (``text_delta``,
``input_json_delta``, ``thinking_delta``, ``signature_delta``), ``content_block_stop``,
``message_delta``, ``message_stop`` and ``error``, over a chunked HTTP/1.1 response. It can also
fail the way a real server does: an HTTP error with ``retry-after``, a connection dropped
mid-body, a stream that stalls, a stream that ends without ``message_stop``, an empty 200.

Every request is checked against the reference (``checks.py``); a violation is recorded and
answered with a 400 ``invalid_request_error``, like the API would.
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.conformance.checks import authenticated, check_body, check_headers

_ids = itertools.count(1)


class QuietServer(ThreadingHTTPServer):
    """A threading HTTP server for which a client closing its connection (the SDK giving up
    after its retries, a process killed mid-request) is not an error: ``socketserver`` prints
    a traceback of it to stderr, which a CLI test run in-process reads as the program's own
    output. Any other error is printed as before."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def new_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):024x}"


# ------------------------------------------------------------------------------------- script


@dataclass
class Text:
    text: str


@dataclass
class Thinking:
    thinking: str
    signature: str = field(default_factory=lambda: new_id("sig"))


@dataclass
class ToolCall:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: new_id("toolu_"))
    #: Sent instead of the JSON of ``input`` (to send malformed or truncated input).
    raw_json: str | None = None


Block = Text | Thinking | ToolCall


@dataclass
class Turn:
    """One streamed response. Without ``stop_reason``: tool_use if it calls a tool, else
    end_turn. The ``*_after`` options break the stream after that many SSE events."""

    blocks: list[Block]
    stop_reason: str | None = None
    stop_details: dict[str, Any] | None = None
    output_tokens: int = 0
    cut_after: int | None = None
    stall_after: int | None = None
    end_early_after: int | None = None
    error_after: int | None = None
    error: tuple[str, str] = ("overloaded_error", "Overloaded")
    #: Send a content_block_delta for a block that never started at this event.
    stray_delta_at: int | None = None

    @property
    def stop(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolCall) for b in self.blocks) else "end_turn"


@dataclass
class Fail:
    """An HTTP error response in the API's shape."""

    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Empty:
    """HTTP 200 with an empty body."""


Step = Turn | Fail | Empty | Callable[[dict[str, Any]], "Turn | Fail | Empty"]


def say(text: str, **options: Any) -> Turn:
    return Turn([Text(text)], **options)


def call(name: str, tool_input: dict[str, Any], *, text: str | None = None) -> Turn:
    blocks: list[Block] = [Text(text)] if text else []
    return Turn([*blocks, ToolCall(name, tool_input)])


@dataclass
class Recorded:
    agent: str
    body: dict[str, Any]
    headers: dict[str, str]
    answer: str = ""
    #: The ``input_tokens`` its streamed answer reported (in ``message_start``).
    input_tokens: int = 0


# ------------------------------------------------------------------------------------- server


class MessagesServer:
    """``with MessagesServer(key) as server: ...``; ``server.url`` is the base URL."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.requests: list[Recorded] = []
        self.violations: list[str] = []
        #: Uploads the client abandoned half-way (its connection closed before the body ended).
        self.aborted = 0
        self.scripts: dict[str, deque[Step]] = {}
        self.fallback: dict[str, str | Callable[[dict[str, Any]], Turn | Fail | Empty]] = {}
        #: thinking blocks sent, by the tool_use id they came with (or the message id)
        self.sent_thinking: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.httpd = QuietServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.conformance = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(
        self,
        agent: str,
        steps: Iterable[Step],
        then: str | Callable[[dict[str, Any]], Turn | Fail | Empty] | None = None,
    ) -> None:
        """Responses for ``agent``, in order; afterwards ``then``: a text reply, or a function
        of the request body answering every later request."""
        with self.lock:
            self.scripts.setdefault(agent, deque()).extend(steps)
            if then is not None:
                self.fallback[agent] = then

    def requests_of(self, agent: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.agent == agent]

    def __enter__(self) -> MessagesServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_step(self, agent: str, body: dict[str, Any]) -> Turn | Fail | Empty:
        with self.lock:
            queue = self.scripts.get(agent)
            step = queue.popleft() if queue else None
            if step is None:
                then = self.fallback.get(agent)
                if isinstance(then, str):
                    return say(then)
                if then is not None:
                    step = then
                else:
                    self.violations.append(f"unexpected request #{len(self.requests)} from {agent}")
                    return Fail(400, "invalid_request_error", f"script exhausted for {agent}")
        return step(body) if callable(step) else step


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    @property
    def api(self) -> MessagesServer:
        return self.server.conformance  # type: ignore[attr-defined, no-any-return]

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if len(raw) < length:  # the client hung up mid-upload (a run stopped by ctrl+c):
            with self.api.lock:  # no request reached the API, so none to check
                self.api.aborted += 1
            self.close_connection = True
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path.split("?")[0].rstrip("/") != "/v1/messages":
            self._error(Fail(404, "not_found_error", f"Not found: {self.path}"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        agent = str(((body or {}).get("metadata") or {}).get("user_id", "?")).split("@")[0]
        record = Recorded(agent, body if isinstance(body, dict) else {}, headers)
        with self.api.lock:
            self.api.requests.append(record)
        problems = check_headers(headers, self.api.key)
        if not authenticated(headers, self.api.key):
            record.answer = "401"
            self._error(Fail(401, "authentication_error", "invalid x-api-key"))
            return
        problems += check_body(body, self.api.sent_thinking)
        if problems:
            with self.api.lock:
                self.api.violations.extend(f"{agent}: {p}" for p in problems)
            record.answer = "400 violation"
            self._error(Fail(400, "invalid_request_error", "; ".join(problems)))
            return
        step = self.api.next_step(agent, record.body)
        record.answer = type(step).__name__
        if isinstance(step, Fail):
            self._error(step)
        elif isinstance(step, Empty):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", "0")
            self.end_headers()
        else:
            record.input_tokens = max(1, len(raw) // 4)
            self._stream(step, record.body, record.input_tokens)

    # ------------------------------------------------------------------------------ answers

    def _error(self, fail: Fail) -> None:
        request_id = new_id("req_")
        payload = json.dumps(
            {
                "type": "error",
                "error": {"type": fail.type, "message": fail.message},
                "request_id": request_id,
            }
        ).encode()
        self.send_response(fail.status)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", request_id)
        for name, value in fail.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, turn: Turn, body: dict[str, Any], input_tokens: int) -> None:
        events = sse_events(turn, str(body.get("model", "")), input_tokens)
        self._remember_thinking(turn)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", new_id("req_"))
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for index, (name, data) in enumerate(events):
            if index == turn.cut_after:
                encoded = _sse(name, data)
                # announce the whole chunk, send half of it, hang up
                self.wfile.write(f"{len(encoded):X}\r\n".encode() + encoded[: len(encoded) // 2])
                self._hang_up()
                return
            if index == turn.stall_after:
                self.api.stopping.wait(60)
                self._hang_up()
                return
            if index == turn.end_early_after:
                break
            if index == turn.stray_delta_at:
                stray = {"type": "text_delta", "text": "?"}
                event = {"type": "content_block_delta", "index": 99, "delta": stray}
                self._chunk(_sse("content_block_delta", event))
            if index == turn.error_after:
                kind, message = turn.error
                error = {"type": "error", "error": {"type": kind, "message": message}}
                self._chunk(_sse("error", error))
                break
            self._chunk(_sse(name, data))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _remember_thinking(self, turn: Turn) -> None:
        thinking = [
            {"thinking": b.thinking, "signature": b.signature}
            for b in turn.blocks
            if isinstance(b, Thinking)
        ]
        if not thinking:
            return
        keys = [b.id for b in turn.blocks if isinstance(b, ToolCall)] or [new_id("msg_")]
        with self.api.lock:
            for key in keys:
                self.api.sent_thinking[key] = thinking

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _hang_up(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


# --------------------------------------------------------------------------------- encoding


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _pieces(value: str, count: int = 3) -> list[str]:
    size = max(1, -(-len(value) // count))
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def sse_events(turn: Turn, model: str, input_tokens: int) -> list[tuple[str, dict[str, Any]]]:
    """The documented event flow for one message."""
    message = {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        },
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    output = 1
    for index, block in enumerate(turn.blocks):
        deltas: list[dict[str, Any]]
        if isinstance(block, Text):
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block.text)]
            output += len(block.text) // 4
        elif isinstance(block, Thinking):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block.thinking)]
            deltas.append({"type": "signature_delta", "signature": block.signature})
            output += len(block.thinking) // 4
        else:
            start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            encoded = block.raw_json if block.raw_json is not None else json.dumps(block.input)
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [{"type": "input_json_delta", "partial_json": p} for p in _pieces(encoded)]
            output += len(encoded) // 4
        opening = {"type": "content_block_start", "index": index, "content_block": start}
        events.append(("content_block_start", opening))
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta: dict[str, Any] = {"stop_reason": turn.stop, "stop_sequence": None}
    if turn.stop_details is not None:
        delta["stop_details"] = turn.stop_details
    usage = {"output_tokens": turn.output_tokens or output}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def last_user_text(body: dict[str, Any]) -> str:
    """Everything the last user message says (its text and tool results), as one string."""
    messages = body.get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1]["content"]
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            parts.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(parts)

"""A scripted Messages API on 127.0.0.1 for driving the real Claude Code binary offline.

Claude Code is pointed at it with ``ANTHROPIC_BASE_URL``. Every request is recorded (path,
headers, body). ``POST /v1/messages`` is answered by the first matching :class:`Rule`: a rule
matches on the request (a substring of the system prompt, of the last user message, a
predicate) and replies with a scripted turn -- text, or a ``tool_use`` -- streamed as
server-sent events in the documented order (the encoder is the conformance server's), or as
one JSON message when the client did not ask to stream. ``/v1/messages/count_tokens`` answers
an estimate; any other path gets an API-shaped 404.

Requests no rule claims get a short text reply (``default``), so Claude Code's side requests
(session titles, summaries, suggestions) never stall a run.

Run it by hand for exploration: ``python -m tests.claude_code.server --log requests.jsonl``
prints the URL and answers every request with the default text.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.conformance.server import QuietServer, ToolCall, Turn, call, new_id, say, sse_events

__all__ = ["ClaudeServer", "Recorded", "Rule", "Turn", "call", "say", "system_text", "user_text"]

Reply = Turn | Callable[[dict[str, Any]], Turn]


def system_text(body: dict[str, Any]) -> str:
    """The system prompt as one string (Claude Code sends a list of text blocks)."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return ""


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    if block.get("type") == "tool_result":
        inner = block.get("content")
        if isinstance(inner, list):
            return "\n".join(_block_text(b) for b in inner)
        return inner if isinstance(inner, str) else json.dumps(inner)
    return ""


def user_text(body: dict[str, Any], last: bool = True) -> str:
    """The text of the last user message (text and tool results), or of every user message."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    if last:
        users = users[-1:]
    parts: list[str] = []
    for message in users:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(_block_text(b) for b in content)
    return "\n".join(parts)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


@dataclass
class Rule:
    """Answers a request when every given condition holds.

    ``system`` and ``last`` are substrings of the system prompt and of the last user message;
    ``anywhere`` of any user message; ``tool`` requires that tool in the request's tool list
    (side requests carry none); ``when`` is any predicate. ``times`` limits how often the rule
    fires (``None``: always)."""

    reply: Reply
    system: str | None = None
    last: str | None = None
    anywhere: str | None = None
    tool: str | None = None
    when: Callable[[dict[str, Any]], bool] | None = None
    times: int | None = 1
    name: str = ""
    fired: int = 0

    def matches(self, body: dict[str, Any]) -> bool:
        if self.times is not None and self.fired >= self.times:
            return False
        if self.system is not None and self.system not in system_text(body):
            return False
        if self.last is not None and self.last not in user_text(body):
            return False
        if self.anywhere is not None and self.anywhere not in user_text(body, last=False):
            return False
        if self.tool is not None and self.tool not in tool_names(body):
            return False
        return self.when is None or self.when(body)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    rule: str = ""

    @property
    def tools(self) -> list[str]:
        return tool_names(self.body)


@dataclass
class ClaudeServer:
    """``with ClaudeServer() as api: api.add(Rule(...))``; ``api.url`` goes in
    ``ANTHROPIC_BASE_URL``. ``log`` (a path) gets every request as one JSON line."""

    default: str = "OK."
    log: Path | None = None
    rules: list[Rule] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.httpd = QuietServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.api = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, *rules: Rule) -> None:
        with self.lock:
            self.rules.extend(rules)

    def messages(self) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.path == "/v1/messages"]

    def wait_for(self, predicate: Callable[[Recorded], bool], timeout: float) -> Recorded | None:
        """The first recorded request satisfying ``predicate``, waiting up to ``timeout``."""
        with self.changed:
            found = self.changed.wait_for(
                lambda: next((r for r in self.requests if predicate(r)), None), timeout
            )
        return found

    def __enter__(self) -> ClaudeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _record(self, record: Recorded) -> None:
        with self.changed:
            self.requests.append(record)
            self.changed.notify_all()
        if self.log is not None:
            line = {"path": record.path, "rule": record.rule, "body": record.body}
            with self.lock, self.log.open("a") as out:
                out.write(json.dumps(line) + "\n")

    def _answer(self, body: dict[str, Any]) -> tuple[Turn, str]:
        with self.lock:
            rule = next((r for r in self.rules if r.matches(body)), None)
            if rule is not None:
                rule.fired += 1
        if rule is None:
            return say(self.default), ""
        reply = rule.reply(body) if callable(rule.reply) else rule.reply
        return reply, rule.name or "rule"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    @property
    def api(self) -> ClaudeServer:
        return self.server.api  # type: ignore[attr-defined, no-any-return]

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.api._record(Recorded(self.path, dict(self.headers.items()), {}))
        self._json(404, _error("not_found_error", f"Not found: {self.path}"))

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0].rstrip("/")
        record = Recorded(path, {k.lower(): v for k, v in self.headers.items()}, body)
        if path == "/v1/messages/count_tokens":
            self.api._record(record)
            self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            return
        if path != "/v1/messages":
            self.api._record(record)
            self._json(404, _error("not_found_error", f"Not found: {self.path}"))
            return
        turn, record.rule = self.api._answer(body)
        self.api._record(record)
        tokens = max(1, len(raw) // 4)
        if body.get("stream"):
            self._stream(turn, str(body.get("model", "")), tokens)
        else:
            self._json(200, _message(turn, str(body.get("model", "")), tokens))

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", new_id("req_"))
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, turn: Turn, model: str, tokens: int) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", new_id("req_"))
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for name, data in sse_events(turn, model, tokens):
            chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(chunk):X}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _message(turn: Turn, model: str, tokens: int) -> dict[str, Any]:
    """The same turn as one non-streamed message."""
    content: list[dict[str, Any]] = []
    for block in turn.blocks:
        if isinstance(block, ToolCall):
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        else:
            content.append({"type": "text", "text": getattr(block, "text", "")})
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": turn.stop,
        "stop_sequence": None,
        "usage": {"input_tokens": tokens, "output_tokens": 8},
    }


def bodies(path: Path) -> Iterator[dict[str, Any]]:
    """The request bodies of a ``--log`` file."""
    with path.open() as lines:
        for line in lines:
            yield json.loads(line)


def main() -> None:  # pragma: no cover - for exploring by hand
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log", type=Path, help="append every request here (JSON lines)")
    parser.add_argument("--default", default="OK.")
    args = parser.parse_args()
    with ClaudeServer(default=args.default, log=args.log) as api:
        print(api.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    main()

"""The offline model served over loopback HTTP, behind an API key.

teamdeck points at it the way a person points it at the real API (``ANTHROPIC_BASE_URL`` and
a key in ``ANTHROPIC_API_KEY``), so the lead's runtime takes the real client path and hands the
key to its teammate processes; the offline policies answer. A request without the key gets a
401, so an agent whose requests were answered is an agent that received the key: the server
counts answered requests per agent (``metadata.user_id``: ``team-lead`` or ``name@team``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from app.runtime.offline import OfflineTransport
from app.runtime.offline.policies import OfflineModel
from tests.conformance.server import QuietServer


class OfflineAPI:
    """``with OfflineAPI(key) as api: ...``; ``api.url`` is the base URL."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.answered: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.transport = OfflineTransport(OfflineModel(), pace=0.0)
        self.loop = asyncio.new_event_loop()
        self.httpd = QuietServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.api = self  # type: ignore[attr-defined]

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def agents(self) -> set[str]:
        """The agents (by name) whose requests carried the key and were answered."""
        with self.lock:
            return {agent.split("@")[0] for agent in self.answered}

    def __enter__(self) -> OfflineAPI:
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.loop.call_soon_threadsafe(self.loop.stop)

    def serve(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, str, bytes]:
        """Status, content type and body for one request."""
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        agent = str(((body or {}).get("metadata") or {}).get("user_id", "?"))
        keyed = headers.get("x-api-key") == self.key
        if not keyed and headers.get("authorization") != f"Bearer {self.key}":
            with self.lock:
                self.refused[agent] += 1
            error = {"type": "error", "error": {"type": "authentication_error", "message": "key"}}
            return 401, "application/json", json.dumps(error).encode()
        request = httpx2.Request("POST", f"http://offline.invalid{path}", content=raw)
        future = asyncio.run_coroutine_threadsafe(self._answer(request), self.loop)
        status, kind, content = future.result()
        if status == 200:
            with self.lock:
                self.answered[agent] += 1
        return status, kind, content

    async def _answer(self, request: httpx2.Request) -> tuple[int, str, bytes]:
        response = await self.transport(request)
        content = await response.aread()
        return response.status_code, response.headers.get("content-type", ""), content


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        api: OfflineAPI = self.server.api  # type: ignore[attr-defined]
        status, kind, content = api.serve(self.path.split("?")[0], headers, raw)
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

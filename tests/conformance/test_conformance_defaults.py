"""The client's defaults as the server receives them: ``max_tokens`` (room for models that
think before every answer) and the read timeout (long thinking can stay quiet for minutes), with
nothing configured but the key and the base URL, as a person runs teamdeck."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.model.client import DEFAULT_MAX_TOKENS, READ_TIMEOUT, make_client
from app.runtime.team.runtime import TeamRuntime
from tests.conformance.server import MessagesServer, say
from tests.runtime.conftest import Observer, until


async def first_request_headers_and_body(
    api: MessagesServer, home: Home, project: Path
) -> tuple[dict[str, str], dict[str, object]]:
    api.script("team-lead", [say("Hello.")])
    runtime = TeamRuntime(home, client=make_client(), cwd=project, decider="lead", headless=True)
    observer = Observer(runtime)
    await runtime.start()
    try:
        runtime.submit("hi")
        await until(lambda: observer.outcomes, "the lead's turn")
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(runtime.stop(), 10)
    [request] = api.requests_of("team-lead")
    return request.headers, request.body


@pytest.mark.parametrize(("configured", "expected"), [(None, READ_TIMEOUT), ("45", 45.0)])
async def test_max_tokens_and_the_read_timeout_reach_the_server(
    api: MessagesServer,
    home: Home,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    configured: str | None,
    expected: float,
) -> None:
    """``max_tokens`` is 32 000 on every request; the SDK announces its read timeout in
    ``x-stainless-read-timeout``: 300 s by default, ``TEAMDECK_READ_TIMEOUT`` when set."""
    if configured is None:
        monkeypatch.delenv("TEAMDECK_READ_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("TEAMDECK_READ_TIMEOUT", configured)
    headers, body = await first_request_headers_and_body(api, home, project)
    assert DEFAULT_MAX_TOKENS == 32_000 and READ_TIMEOUT == 300.0
    assert body["max_tokens"] == 32_000
    assert float(headers["x-stainless-read-timeout"]) == expected

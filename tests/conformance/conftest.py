"""Fixtures: the conformance server on loopback, and teamdeck pointed at it the way a person
points it at the real API (``ANTHROPIC_BASE_URL`` + a key in the environment, the real
``make_client()``; no handler injected)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.runtime.model.client import make_client
from app.runtime.team.runtime import TeamRuntime
from tests.conformance.server import MessagesServer
from tests.runtime.conftest import Observer

FAKE_KEY = "sk-ant-conformance-0123456789abcdef"
#: Read timeout of the client under test: a stalled stream is detected this fast.
READ_TIMEOUT = 1.0


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[MessagesServer]:
    """The server, with teamdeck's environment pointing at it. After the test, no request may
    have broken a rule of the reference."""
    with MessagesServer(FAKE_KEY) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        monkeypatch.delenv("TEAMDECK_MODEL", raising=False)
        monkeypatch.setattr("app.runtime.agent.response.RETRY_BACKOFF", 0.05)
        monkeypatch.setattr("app.runtime.agent.teammate.FALLBACK_POLL", 120.0)
        yield server
        assert server.violations == [], "requests that break the API reference"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.md").write_text("# Notes\n\nThe answer is 42.\n")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


@pytest.fixture
async def team_runtime(
    api: MessagesServer, home: Home, project: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[TeamRuntime, Observer]]:
    """A running TeamRuntime (lead decides approvals, as headless) on the real client path;
    its teammates run in the mode the test is parametrized with (``in-process`` by default)."""
    backend = getattr(request, "param", "in-process")
    runtime = TeamRuntime(
        home,
        client=make_client(timeout=READ_TIMEOUT),
        cwd=project,
        decider="lead",
        headless=True,
        lead_mode="acceptEdits",
        teammate_mode="acceptEdits",
        teammate_backend=backend,
    )
    observer = Observer(runtime)
    await runtime.start()
    yield runtime, observer
    with contextlib.suppress(Exception):
        await asyncio.wait_for(runtime.stop(), 10)


def errors_of(runtime: TeamRuntime, agent: str) -> list[str]:
    return [e.text for e in runtime.transcript(agent) if e.kind == "error"]


def blocks(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        b
        for m in body.get("messages", [])
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == kind
    ]

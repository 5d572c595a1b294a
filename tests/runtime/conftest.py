"""Shared fixtures for runtime tests: an offline environment, a small project to work on, a
model router that serves every agent from one transport, and helpers to observe a runtime.

Everything waits with hang guards (``until`` polls a condition under ``asyncio.wait_for``);
nothing asserts on wall-clock time.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import signal
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.core.protocol import parse_frame
from app.runtime.agent.loop import execute_tool
from app.runtime.agent.session import AgentSession
from app.runtime.events import (
    ApprovalChanged,
    MessageSent,
    RuntimeEvent,
    StatusChanged,
    TurnOutcome,
)
from app.runtime.model.client import make_client
from app.runtime.offline import ModelRequest, ResponsePlan, ScriptStep, reply, text
from app.runtime.offline.plans import CutStream, ErrorPlan, Reply
from app.runtime.offline.policies import OfflineModel
from app.runtime.team.runtime import TeamRuntime
from tests.timing import scaled

HANG_GUARD = 30.0


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("TEAMDECK_MODEL", raising=False)


@pytest.fixture(autouse=True)
def _no_fallback_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents must be woken by events: make the teammates' safety-net poll so slow that a
    missed wake-up shows up as a hang (caught by the hang guards) instead of a 5 s delay."""
    monkeypatch.setattr("app.runtime.agent.teammate.FALLBACK_POLL", 120.0)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working directory with a few Python files for the agents to look at."""
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "alpha.py").write_text('"""Alpha: the first module."""\n\n\ndef a():\n    pass\n')
    (root / "beta.py").write_text('"""Beta: the second module."""\n\n\nclass B:\n    pass\n')
    (root / "pkg" / "gamma.py").write_text("# gamma helpers\ndef c():\n    pass\n")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


# ---------------------------------------------------------------------------------- the model


class Script:
    """A scripted brain for one agent: each request takes the next step (a plan, a string, or
    a function of the request, possibly async). When the script runs out it answers
    ``then`` (a text reply) if given, else a non-retryable 500 so a test fails loudly."""

    def __init__(self, steps: Iterable[ScriptStep] = (), *, then: str | None = None) -> None:
        self.steps: deque[ScriptStep] = deque(steps)
        self.then = then
        self.requests: list[ModelRequest] = []

    def add(self, *steps: ScriptStep) -> None:
        self.steps.extend(steps)

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        self.requests.append(request)
        if not self.steps:
            if self.then is not None:
                return reply(text(self.then))
            return ErrorPlan(
                500,
                "api_error",
                f"Script exhausted at request #{len(self.requests)}",
                retry_after=None,
                should_retry=False,
            )
        step = self.steps.popleft()
        if isinstance(step, Reply | ErrorPlan | CutStream):
            return step
        if isinstance(step, str):
            return reply(step)
        result = step(request)
        return await result if inspect.isawaitable(result) else result  # type: ignore[return-value]


class Router:
    """One handler for every agent: routes on ``metadata.user_id`` (``name@team``) to the
    agent's own handler, else to ``default`` (the offline policies). Counts calls per agent."""

    def __init__(self, default: Any = None, **agents: Any) -> None:
        self.default = default if default is not None else OfflineModel()
        self.agents: dict[str, Any] = {k.replace("_", "-"): v for k, v in agents.items()}
        self.requests: dict[str, list[ModelRequest]] = defaultdict(list)

    def __setitem__(self, agent: str, handler: Any) -> None:
        self.agents[agent] = handler

    def calls(self, agent: str) -> int:
        return len(self.requests[agent])

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        agent = (request.user_id or "").split("@", 1)[0]
        self.requests[agent].append(request)
        handler = self.agents.get(agent, self.default)
        return await handler.respond(request)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------- observing


class Observer:
    """Records a runtime's events and the lead's turn outcomes."""

    def __init__(self, runtime: TeamRuntime) -> None:
        self.runtime = runtime
        self.events: list[RuntimeEvent] = []
        self.outcomes: list[TurnOutcome] = []
        runtime.subscribe(self.events.append)
        runtime.lead_turn_listeners.append(self.outcomes.append)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def messages(self, frame_type: str | None = "*", **where: str) -> list[MessageSent]:
        out = []
        for event in self.of(MessageSent):
            if frame_type != "*" and event.frame_type != frame_type:
                continue
            if all(getattr(event, k) == v for k, v in where.items()):
                out.append(event)
        return out

    def statuses(self, agent: str) -> list[str]:
        return [e.status for e in self.of(StatusChanged) if e.agent == agent]

    def approvals(self, kind: str | None = None, resolved: bool | None = None) -> list[Any]:
        return [
            e
            for e in self.of(ApprovalChanged)
            if (kind is None or e.kind == kind) and (resolved is None or e.resolved == resolved)
        ]


async def until(
    condition: Callable[[], Any], what: str = "condition", within: float = HANG_GUARD
) -> Any:
    """Wait for ``condition()`` to be truthy (polled); returns its value. A hang guard only."""

    async def poll() -> Any:
        while True:
            value = condition()
            if value:
                return value
            await asyncio.sleep(0.005)

    try:
        return await asyncio.wait_for(poll(), scaled(within))
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


async def settle(rounds: int = 20) -> None:
    """Let every ready task run a few times (no wall-clock waiting)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


# ---------------------------------------------------------------------------------- runtimes


@pytest.fixture
async def runtimes() -> Any:
    """Track runtimes built in a test and stop them at teardown, whatever happened."""
    built: list[TeamRuntime] = []
    yield built
    for runtime in built:
        # Teammate processes outlive ``stop`` (a dashboard's quit leaves them running): a
        # test's must not outlive the test.
        pids = [getattr(r, "pid", None) for r in runtime.runners.values()]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(runtime.stop(), 10)
        for pid in pids:
            if pid is not None:
                _kill_agent_process(pid)


def _kill_agent_process(pid: int) -> None:
    with contextlib.suppress(OSError):  # gone already (and its pid maybe reused)
        if b"agent" in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def make_runtime(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> Callable[..., TeamRuntime]:
    def build(handler: Any = None, **options: Any) -> TeamRuntime:
        client = make_client(handler=handler or Router(), pace=0)
        options.setdefault("cwd", project)
        runtime = TeamRuntime(home, client=client, **options)
        runtimes.append(runtime)
        return runtime

    return build


def no_spawn(name: str, factory: Callable[[], Awaitable[None]]) -> None:
    """A spawner that does not run agents (for tool tests that only need the bookkeeping)."""
    return None


async def call_tool(
    session: AgentSession, name: str, tool_input: dict[str, Any]
) -> tuple[str, bool]:
    """Run one tool call the way the agent loop does (permission check included)."""
    block = {"type": "tool_use", "id": f"toolu_test_{name}", "name": name, "input": tool_input}
    result = await execute_tool(session, block)
    return str(result["content"]), bool(result["is_error"])


def result_json(content: str) -> Any:
    return json.loads(content)


# ---------------------------------------------------------------------------------- files


def read_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def config_of(home: Home, team: str) -> dict[str, Any]:
    return read_json(home.layout.config_path(team))  # type: ignore[no-any-return]


def member_of(home: Home, team: str, name: str) -> dict[str, Any] | None:
    return next((m for m in config_of(home, team)["members"] if m["name"] == name), None)


def inbox_of(home: Home, team: str, agent: str) -> list[dict[str, Any]]:
    path = home.layout.inbox_path(team, agent)
    return read_json(path) if path.exists() else []  # type: ignore[no-any-return]


def frames_in(home: Home, team: str, agent: str, kind: str) -> list[dict[str, Any]]:
    """The frames of type ``kind`` in an inbox file (as raw dicts, in file order)."""
    out = []
    for message in inbox_of(home, team, agent):
        frame = parse_frame(message["text"])
        if frame is not None and frame.type == kind:
            out.append(json.loads(message["text"]))
    return out


def task_file(home: Home, team: str, task_id: str) -> dict[str, Any]:
    return read_json(home.layout.task_path(team, task_id))  # type: ignore[no-any-return]


def file_text(path: str | Path) -> str:
    return Path(path).read_text("utf-8")


async def start_team(
    make_runtime: Callable[..., TeamRuntime], router: Router, team: str, **options: Any
) -> tuple[TeamRuntime, Observer]:
    """A started runtime (``options`` for ``make_runtime``) whose lead created ``team``."""
    router.agents.setdefault("team-lead", Script(then="Noted."))
    rt = make_runtime(router, **options)
    observer = Observer(rt)
    await rt.start()
    content, is_error = await call_tool(rt.lead_session, "TeamCreate", {"team_name": team})
    assert not is_error, content
    return rt, observer


async def spawn(rt: TeamRuntime, name: str) -> None:
    """The lead spawns teammate ``name`` through its Task tool."""
    content, is_error = await call_tool(
        rt.lead_session, "Task", {"name": name, "prompt": f"You are {name}."}
    )
    assert not is_error, content

"""In-process turns, a few at once: a turn holds its slot while it works and gives it up while
it waits (the model, a command, the person), so the team never stalls behind a waiter.

Each test counts the turns at work (the gate's counts and a tool that counts its callers),
never time.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.runtime.model.client import make_client
from app.runtime.offline import reply
from app.runtime.offline.plans import tool_use
from app.runtime.scheduling.turn_slots import TurnGate, turns_at_once
from app.runtime.team.runtime import TeamRuntime
from app.runtime.tools.base import ToolContext, ToolResult
from app.runtime.tools.workspace import Glob
from tests.conformance import conftest as conformance
from tests.conformance.server import MessagesServer, ToolCall, Turn, say
from tests.runtime.conftest import Router, Script, settle, until

api = conformance.api  # the scripted hostile model's server (a fixture)
TEAM = "slots"


class _Counted:
    """Glob, counting the teammates whose turns are inside it at once (one turn's calls run
    together count once); with ``hold``, each call works on the event loop until ``release``
    is set (a tool's work on the loop, not a declared wait: its turn keeps its slot)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, hold: bool) -> None:
        self.release = asyncio.Event()
        if not hold:
            self.release.set()
        self.inside: Counter[str] = Counter()
        self.most = 0
        self.calls = 0
        original = Glob.call

        async def call(tool: Glob, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
            self.inside[ctx.agent.name] += 1
            self.calls += 1
            self.most = max(self.most, self.active)
            try:
                await self.release.wait()  # its work, as long as the test says
                return await original(tool, tool_input, ctx)
            finally:
                self.inside[ctx.agent.name] -= 1

        monkeypatch.setattr(Glob, "call", call)

    @property
    def active(self) -> int:
        return sum(1 for count in self.inside.values() if count)


async def _team(runtime: TeamRuntime, home: Home, project: Path, cap: int) -> None:
    runtime.turn_gate = TurnGate(cap)
    await runtime.start()
    home.teams.create(TEAM, description="slots", cwd=str(project))
    runtime.team_created(TEAM)


def _globber() -> Script:
    return Script([reply(tool_use("Glob", {"pattern": "*.py"})), "Done."])


def test_the_cap_is_a_few_and_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAMDECK_IN_PROCESS_TURNS", "5")
    assert turns_at_once() == 5 and TurnGate().size == 5
    for bad in ("0", "-2", "many"):
        monkeypatch.setenv("TEAMDECK_IN_PROCESS_TURNS", bad)
        assert 1 < turns_at_once() <= 4


async def test_six_teammates_with_two_slots_never_work_more_than_two_turns_at_once(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = _Counted(monkeypatch, hold=True)
    names = [f"w{k}" for k in range(6)]
    router = Router(**{name: _globber() for name in names})
    runtime: TeamRuntime = make_runtime(router)
    await _team(runtime, home, project, 2)
    await asyncio.gather(*(runtime.spawn_teammate(name, "Look around.") for name in names))
    # Every teammate's first model call is answered: all six turns want to work.
    await until(lambda: all(router.calls(n) == 1 for n in names), "every first call")
    await until(lambda: counted.active == 2, "two turns at work")
    await settle(50)
    assert counted.active == 2 and runtime.turn_gate.running == 2  # four wait for a slot
    counted.release.set()
    await until(lambda: all(runtime.status_of(n) == "idle" for n in names), "every turn ended")
    assert counted.calls == 6
    assert counted.most == 2 and runtime.turn_gate.most == 2


async def test_a_turn_waiting_on_a_permission_request_frees_its_slot(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = _Counted(monkeypatch, hold=False)
    writer = Script(
        [reply(tool_use("Write", {"file_path": str(project / "out.txt"), "content": "x"})), "Ok."]
    )
    router = Router(writer=writer, w1=_globber(), w2=_globber())
    runtime: TeamRuntime = make_runtime(router)  # the person decides: nobody answers yet
    await _team(runtime, home, project, 1)
    await runtime.spawn_teammate("writer", "Write the file.")
    request = await until(
        lambda: next(iter(runtime.approvals()), None), "the writer's permission request"
    )
    await asyncio.gather(*(runtime.spawn_teammate(n, "Look around.") for n in ("w1", "w2")))
    # With one slot, held by nobody while the writer waits on the person: both others work.
    await until(
        lambda: all(runtime.status_of(n) == "idle" for n in ("w1", "w2")), "the others' turns"
    )
    assert counted.calls == 2 and counted.most == 1
    assert runtime.status_of("writer") == "awaiting approval"
    assert runtime.turn_gate.running == 0
    runtime.answer_permission(request.request_id, True)
    await until(lambda: runtime.status_of("writer") == "idle", "the writer's turn ended")
    assert (project / "out.txt").read_text() == "x"
    assert runtime.turn_gate.most == 1 and runtime.turn_gate.running == 0


async def test_a_turn_whose_file_work_waits_in_its_lane_frees_its_slot(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow disk (a long fsync, a lock another process holds) is a wait, not work."""
    from app.runtime.tools import tasks

    counted = _Counted(monkeypatch, hold=False)
    disk = threading.Event()
    listing = tasks._listing

    def slow_listing(store: Any) -> Any:
        disk.wait(60)
        return listing(store)

    monkeypatch.setattr(tasks, "_listing", slow_listing)
    lister = Script([reply(tool_use("TaskList", {})), "Listed."])
    router = Router(lister=lister, w1=_globber())
    runtime: TeamRuntime = make_runtime(router)
    await _team(runtime, home, project, 1)
    await runtime.spawn_teammate("lister", "List the tasks.")
    await until(lambda: router.calls("lister") == 1, "the lister's call")
    await settle(20)
    await runtime.spawn_teammate("w1", "Look around.")
    await until(lambda: runtime.status_of("w1") == "idle", "the other's turn, on the one slot")
    assert counted.calls == 1 and runtime.status_of("lister") == "running"
    disk.set()
    await until(lambda: runtime.status_of("lister") == "idle", "the lister's turn ended")
    assert runtime.turn_gate.most == 1 and runtime.turn_gate.running == 0


async def test_a_hostile_model_flooding_tool_calls_takes_no_more_than_its_slot(
    api: MessagesServer, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flooder's every response is 30 tool calls at once (reads that run together, and
    commands), for as long as it is let; with two slots, the other teammates' turns go on."""
    counted = _Counted(monkeypatch, hold=False)
    flooding = threading.Event()
    flooding.set()
    flood = Turn(
        [ToolCall("Glob", {"pattern": "*.py"}) for _ in range(20)]
        + [ToolCall("Bash", {"command": "true"}) for _ in range(10)]
    )
    glob_only = Turn([ToolCall("Glob", {"pattern": "**/*.py"}) for _ in range(30)])

    def flooder(body: dict[str, Any]) -> Turn:
        if not flooding.is_set():
            return say("Done.")
        return flood if len(body.get("messages", [])) % 4 else glob_only

    api.script("flooder", [], then=flooder)
    for name in ("w1", "w2", "w3"):
        api.script(name, [Turn([ToolCall("Glob", {"pattern": "*.py"})])], then="Done.")
    runtime = TeamRuntime(
        home,
        client=make_client(timeout=conformance.READ_TIMEOUT),
        cwd=project,
        decider="lead",
        headless=True,
        teammate_mode="bypassPermissions",
        allow_bypass=True,
    )
    api.script("team-lead", [], then="Noted.")
    try:
        await _team(runtime, home, project, 2)
        await runtime.spawn_teammate("flooder", "Flood.")
        await until(lambda: counted.calls >= 60, "the flood under way")
        await asyncio.gather(*(runtime.spawn_teammate(n, "Look.") for n in ("w1", "w2", "w3")))
        await until(
            lambda: all(runtime.status_of(n) == "idle" for n in ("w1", "w2", "w3")),
            "the others' turns, beside the flood",
        )
        assert runtime.status_of("flooder") == "running"  # still flooding
        # Its 20 reads at once were one turn's work: two teammates at most worked at once.
        assert counted.most <= 2 and runtime.turn_gate.most <= 2
        flooding.clear()
        await until(lambda: runtime.status_of("flooder") == "idle", "the flooder let go")
        assert runtime.turn_gate.running == 0
    finally:
        await asyncio.wait_for(runtime.stop(), 10)

"""Equal long tool results are held once per process (``app.runtime.agent.shared_text``), and
the model is sent the same bytes as before."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, ClassVar

import pytest

from app.core import Home
from app.runtime.agent import loop, shared_text
from app.runtime.agent.loop import run_turn
from app.runtime.agent.session import AgentSession
from app.runtime.model.client import make_client
from app.runtime.offline import OfflineTransport, reply, text
from app.runtime.offline.plans import tool_use
from app.runtime.tools.base import AgentIdentity, Tool, ToolContext, ToolResult
from tests.runtime.conftest import Router, Script, until

TEAM = "shared"


def _tool_results(session: AgentSession, name: str) -> list[str]:
    calls = {
        b["id"]
        for m in session.messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use" and b["name"] == name
    }
    return [
        b["content"]
        for m in session.messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result" and b["tool_use_id"] in calls
    ]


async def test_teammates_reading_the_same_board_hold_one_copy_of_its_listing(
    make_runtime: Any, home: Home, project: Path
) -> None:
    router = Router()
    for name in ("w1", "w2"):
        router[name] = Script([reply(tool_use("TaskList")), reply(text("Seen."))], then="Ok.")
    runtime = make_runtime(router)
    await runtime.start()
    home.teams.create(TEAM, description="shared", cwd=str(project))
    runtime.team_created(TEAM)
    board = home.tasks(TEAM)
    for i in range(30):  # a listing well over shared_text.MIN_CHARS
        board.create(f"Look at batch {i}", "later", owner="someone-else")
    await runtime.spawn_teammate("w1", "List the board.")
    await runtime.spawn_teammate("w2", "List the board.")
    sessions = [runtime.teammates[n].session for n in ("w1", "w2")]
    await until(lambda: all(len(_tool_results(s, "TaskList")) == 1 for s in sessions), "listings")
    first, second = (_tool_results(s, "TaskList")[0] for s in sessions)
    assert len(first) >= shared_text.MIN_CHARS
    assert first == second
    assert first is second  # one string for both conversations


class _Report(Tool):
    """A read-only tool whose result is the same long text at every call."""

    name = "Report"
    description = "The project's report."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    read_only = True
    TEXT = "".join(f"line {i}: {'x' * 40}\n" for i in range(100))

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("".join(list(self.TEXT)))  # a new string object at every call


async def _bodies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> tuple[list[bytes], list[str]]:
    """The request bodies two turns of ``agent`` send (each turn calls Report twice), and the
    results its conversation holds."""
    sent: list[bytes] = []
    receive = OfflineTransport.receive

    def recording(self: OfflineTransport, path: str, content: bytes) -> Any:
        sent.append(content)
        return receive(self, path, content)

    monkeypatch.setattr(OfflineTransport, "receive", recording)
    steps = []
    for turn in range(2):
        steps += [
            reply(
                tool_use("Report", {}, id=f"toolu_{turn}a"),
                tool_use("Report", {}, id=f"toolu_{turn}b"),
            ),
            reply(text(f"Read it ({turn}).")),
        ]
    session = AgentSession(
        AgentIdentity(agent, TEAM, cwd=tmp_path),
        home=Home(tmp_path / "home"),
        client=make_client(handler=Script(steps), pace=0),
        model="claude-sonnet-5-5",
        system_prompt="You read reports.",
        tools=[_Report()],
        emit=lambda event: None,
        mode="bypassPermissions",
    )
    for turn in range(2):
        outcome = await run_turn(session, f"Read the report ({turn}).")
        assert outcome.status == "end_turn", outcome
    results = _tool_results(session, "Report")
    assert len(results) == 4 and all(r == _Report.TEXT for r in results)
    monkeypatch.setattr(OfflineTransport, "receive", receive)
    return sent, results


async def test_the_model_is_sent_the_same_bytes_whether_results_are_shared_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared, held = await _bodies(tmp_path, monkeypatch, "reader")
    assert all(r is held[0] for r in held)  # four results, one string
    monkeypatch.setattr(loop, "share", lambda text: text)  # every result a string of its own
    unshared, apart = await _bodies(tmp_path, monkeypatch, "reader")
    assert apart[0] is not apart[1]
    assert len(shared) == 4
    assert shared == unshared
    assert _Report.TEXT.encode() in b"".join(shared).replace(b"\\n", b"\n")


def test_a_text_no_conversation_holds_any_more_is_let_go() -> None:
    kept = [shared_text.share(f"{i:04d}" + "y" * shared_text.MIN_CHARS) for i in range(10)]
    again = shared_text.share("".join(list(kept[3])))
    assert again is kept[3]
    short = "z" * (shared_text.MIN_CHARS - 1)
    assert shared_text.share(short) is short  # short texts are left as they are
    for i in range(shared_text.MIN_PRUNE * 4):  # texts dropped as soon as they are shared
        shared_text.share(f"{i:06d}" + "w" * shared_text.MIN_CHARS)
    gc.collect()
    assert shared_text.held() < shared_text.MIN_PRUNE * 2  # pruned as it grew
    assert all(shared_text.share("".join(list(k))) is k for k in kept)  # the held ones kept

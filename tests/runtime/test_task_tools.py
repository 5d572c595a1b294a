"""Task tools over a real Home: create, get, list, update, claims, completion notices."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from app.core import Home, TeamMember
from app.core.errors import UnknownRecipientError
from app.core.protocol import TaskCompleted, parse_frame
from app.runtime.permissions import PermissionRules, decide
from app.runtime.scheduling.offload import Lane
from app.runtime.tools.base import AgentIdentity, ToolContext, ToolError, ToolResult
from app.runtime.tools.tasks import TASK_TOOLS, TaskCreate, TaskGet, TaskList, TaskUpdate

TEAM = "alpha"


class FakeServices:
    """Records what the tools send; optionally fails."""

    def __init__(self, home: Home, fail: bool = False) -> None:
        self.home = home
        self.sent: list[tuple[str, str, str]] = []
        self.fail = fail

    def current_team(self) -> str | None:
        return TEAM

    def send(
        self, caller: AgentIdentity, recipient: str, text: str, summary: str | None = None
    ) -> str:
        if self.fail:
            raise UnknownRecipientError(f"{recipient!r} is not a member of team {TEAM!r}")
        self.sent.append((caller.name, recipient, text))
        return recipient


@pytest.fixture
def home(tmp_path: Path) -> Home:
    """A home with team alpha: the lead, alice, bob and carol."""
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    for name in ("alice", "bob", "carol"):
        home.teams.add_member(TEAM, TeamMember(agent_id=f"{name}@{TEAM}", name=name))
    return home


@pytest.fixture
def services(home: Home) -> FakeServices:
    return FakeServices(home)


def make_ctx(home: Home, name: str, services: Any = None, *, lead: bool = False) -> ToolContext:
    agent = AgentIdentity(name=name, team=TEAM, cwd=home.root, is_lead=lead)
    return ToolContext(home=home, agent=agent, services=cast(Any, services))


@pytest.fixture
def lead(home: Home, services: FakeServices) -> ToolContext:
    return make_ctx(home, "team-lead", services, lead=True)


@pytest.fixture
def alice(home: Home, services: FakeServices) -> ToolContext:
    return make_ctx(home, "alice", services)


@pytest.fixture
def bob(home: Home, services: FakeServices) -> ToolContext:
    return make_ctx(home, "bob", services)


async def run(tool: Any, ctx: ToolContext, **tool_input: Any) -> dict[str, Any]:
    result: ToolResult = await tool.call(tool_input, ctx)
    assert not result.is_error
    data = json.loads(result.content)
    assert data == result.data
    return data  # type: ignore[no-any-return]


async def create(ctx: ToolContext, subject: str, **extra: Any) -> str:
    data = await run(TaskCreate(), ctx, subject=subject, description=f"do {subject}", **extra)
    return str(data["task"]["id"])


def test_definitions() -> None:
    assert [cls.name for cls in TASK_TOOLS] == ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"]
    for cls in TASK_TOOLS:
        assert cls.coordination
        schema = cls().to_api()["input_schema"]
        assert set(schema.get("required", [])) <= set(schema["properties"])
    assert TaskGet.read_only and TaskList.read_only
    assert not TaskCreate.read_only and not TaskUpdate.read_only
    assert set(TaskUpdate.input_schema["properties"]) == {
        "taskId",
        "status",
        "subject",
        "description",
        "activeForm",
        "owner",
        "addBlocks",
        "addBlockedBy",
        "metadata",
    }


def test_task_tools_are_always_allowed(tmp_path: Path) -> None:
    for cls in TASK_TOOLS:
        for mode in ("default", "plan", "delegate", "dontAsk"):
            decision = decide(cls(), {}, mode, PermissionRules(), tmp_path)  # type: ignore[arg-type]
            assert decision.allowed


# ---------------------------------------------------------------------------------- create/get


async def test_create_and_get(lead: ToolContext, home: Home) -> None:
    data = await run(
        TaskCreate(),
        lead,
        subject="Write docs",
        description="Explain the CLI",
        activeForm="Writing docs",
        metadata={"area": "docs"},
    )
    assert data == {"task": {"id": "1", "subject": "Write docs"}}
    stored = home.tasks(TEAM).get("1")
    assert stored is not None and stored.metadata == {"area": "docs"}
    assert stored.status == "pending" and stored.owner is None
    got = await run(TaskGet(), lead, taskId="1")
    assert got == {
        "task": {
            "id": "1",
            "subject": "Write docs",
            "description": "Explain the CLI",
            "status": "pending",
            "owner": None,
            "blocks": [],
            "blockedBy": [],
            "activeForm": "Writing docs",
        }
    }
    assert await create(lead, "Second") == "2"
    assert "activeForm" not in (await run(TaskGet(), lead, taskId="2"))["task"]


async def test_create_errors(lead: ToolContext, home: Home) -> None:
    with pytest.raises(ToolError, match="subject"):
        await TaskCreate().call({"subject": "  ", "description": "x"}, lead)
    with pytest.raises(ToolError, match="subject"):
        await TaskCreate().call({"description": "x"}, lead)
    with pytest.raises(ToolError, match="metadata"):
        await TaskCreate().call({"subject": "s", "description": "x", "metadata": [1]}, lead)


async def test_get_missing_task(lead: ToolContext) -> None:
    with pytest.raises(ToolError, match="#7 not found"):
        await TaskGet().call({"taskId": "7"}, lead)
    with pytest.raises(ToolError, match="taskId"):
        await TaskGet().call({"taskId": "../etc"}, lead)
    with pytest.raises(ToolError, match="taskId"):
        await TaskGet().call({}, lead)


async def test_no_team_context(home: Home) -> None:
    lonely = ToolContext(home=home, agent=AgentIdentity(name="team-lead", team=None))
    with pytest.raises(ToolError, match="TeamCreate"):
        await TaskList().call({}, lonely)


async def test_team_from_services(home: Home, services: FakeServices) -> None:
    agent = AgentIdentity(name="team-lead", team=None, is_lead=True)
    ctx = ToolContext(home=home, agent=agent, services=cast(Any, services))
    assert await create(ctx, "via services") == "1"
    assert home.tasks(TEAM).get("1") is not None


# ---------------------------------------------------------------------------------- list


async def test_list_hides_internal_and_resolved_blockers(lead: ToolContext, home: Home) -> None:
    first = await create(lead, "Design")
    second = await create(lead, "Build")
    third = await create(lead, "Ship")
    await create(lead, "Hidden", metadata={"_internal": True})
    await run(TaskUpdate(), lead, taskId=third, addBlockedBy=[first, second])
    await run(TaskUpdate(), lead, taskId=first, status="completed", owner="alice")
    listing = await run(TaskList(), lead)
    assert listing == {
        "tasks": [
            {
                "id": "1",
                "subject": "Design",
                "status": "completed",
                "owner": "alice",
                "blockedBy": [],
            },
            {"id": "2", "subject": "Build", "status": "pending", "owner": None, "blockedBy": []},
            {"id": "3", "subject": "Ship", "status": "pending", "owner": None, "blockedBy": ["2"]},
        ]
    }
    # the full list still has both blockers
    assert (await run(TaskGet(), lead, taskId=third))["task"]["blockedBy"] == ["1", "2"]


async def test_the_list_is_made_off_the_event_loop_as_one_line(
    home: Home, services: FakeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every teammate lists the board between tasks: with in-process teammates, building and
    encoding hundreds of rows on the dashboard's loop was milliseconds a call of keys waiting.
    The rows are made in the agent's lane and encoded compactly (no file holds them)."""
    ctx = make_ctx(home, "alice", services)
    ctx.lane = Lane("alice")
    for k in range(200):
        home.tasks(TEAM).create(f"Task {k}", "-", owner="bob" if k % 2 else None)
    made_on: list[int] = []
    encode = ToolResult.compact_json

    def compact_json(data: Any, *, is_error: bool = False) -> ToolResult:
        made_on.append(threading.get_ident())
        return encode(data, is_error=is_error)

    monkeypatch.setattr(ToolResult, "compact_json", compact_json)
    result = await TaskList().call({}, ctx)
    assert made_on and made_on[0] != threading.get_ident()  # not the loop's thread
    assert "\n" not in result.content and json.loads(result.content) == result.data
    assert len(result.data["tasks"]) == 200 and result.data["tasks"][1]["owner"] == "bob"


async def test_list_orders_by_number(lead: ToolContext) -> None:
    for i in range(11):
        await create(lead, f"t{i}")
    ids = [t["id"] for t in (await run(TaskList(), lead))["tasks"]]
    assert ids == [str(i) for i in range(1, 12)]


async def test_list_empty(lead: ToolContext) -> None:
    assert await run(TaskList(), lead) == {"tasks": []}


# ---------------------------------------------------------------------------------- update


async def test_update_fields(lead: ToolContext, home: Home) -> None:
    task_id = await create(lead, "Draft")
    result = await run(
        TaskUpdate(),
        lead,
        taskId=task_id,
        subject="Draft v2",
        description="more",
        activeForm="Drafting",
        status="in_progress",
        owner="bob",
        metadata={"k": "v"},
    )
    assert result["success"] is True and result["taskId"] == task_id
    assert sorted(result["updatedFields"]) == sorted(
        ["subject", "description", "activeForm", "status", "owner", "metadata"]
    )
    task = home.tasks(TEAM).require(task_id)
    assert (task.subject, task.status, task.owner, task.active_form) == (
        "Draft v2",
        "in_progress",
        "bob",
        "Drafting",
    )
    same = await run(TaskUpdate(), lead, taskId=task_id, status="in_progress")
    assert same["updatedFields"] == []
    await run(TaskUpdate(), lead, taskId=task_id, metadata={"k": None, "n": 1})
    assert home.tasks(TEAM).require(task_id).metadata == {"n": 1}
    unassigned = await run(TaskUpdate(), lead, taskId=task_id, owner="")
    assert unassigned["updatedFields"] == ["owner"]
    assert home.tasks(TEAM).require(task_id).owner is None


async def test_update_dependencies(lead: ToolContext, home: Home) -> None:
    a, b, c = [await create(lead, s) for s in ("a", "b", "c")]
    result = await run(TaskUpdate(), lead, taskId=a, addBlocks=[b, c])
    assert result["updatedFields"] == ["blocks"]
    assert home.tasks(TEAM).require(b).blocked_by == [a]
    with pytest.raises(ToolError, match="cycle"):
        await TaskUpdate().call({"taskId": a, "addBlockedBy": [c]}, lead)
    with pytest.raises(ToolError, match="#9 does not exist"):
        await TaskUpdate().call({"taskId": a, "addBlocks": ["9"]}, lead)
    with pytest.raises(ToolError, match="task ids"):
        await TaskUpdate().call({"taskId": a, "addBlocks": ["x"]}, lead)


async def test_update_errors(lead: ToolContext) -> None:
    task_id = await create(lead, "x")
    with pytest.raises(ToolError, match="#42 not found"):
        await TaskUpdate().call({"taskId": "42", "status": "completed"}, lead)
    with pytest.raises(ToolError, match="unknown task status 'done'"):
        await TaskUpdate().call({"taskId": task_id, "status": "done"}, lead)
    with pytest.raises(ToolError, match="subject"):
        await TaskUpdate().call({"taskId": task_id, "subject": " "}, lead)


async def test_status_deleted_deletes(lead: ToolContext, home: Home) -> None:
    first = await create(lead, "keep")
    doomed = await create(lead, "drop")
    await run(TaskUpdate(), lead, taskId=first, addBlocks=[doomed])
    result = await run(TaskUpdate(), lead, taskId=doomed, status="deleted")
    assert result == {"success": True, "taskId": doomed, "updatedFields": ["deleted"]}
    assert home.tasks(TEAM).get(doomed) is None
    assert home.tasks(TEAM).require(first).blocks == []
    assert await create(lead, "next") == "3"  # ids never reused


# ---------------------------------------------------------------------------------- claims


async def test_teammate_claims_by_setting_owner(alice: ToolContext, lead: ToolContext) -> None:
    task_id = await create(lead, "work")
    result = await run(TaskUpdate(), alice, taskId=task_id, owner="alice", status="in_progress")
    assert sorted(result["updatedFields"]) == ["owner", "status"]
    got = (await run(TaskGet(), alice, taskId=task_id))["task"]
    assert (got["owner"], got["status"]) == ("alice", "in_progress")


async def test_teammate_claims_with_agent_id(alice: ToolContext, lead: ToolContext) -> None:
    task_id = await create(lead, "work")
    await run(TaskUpdate(), alice, taskId=task_id, owner=f"alice@{TEAM}")
    assert (await run(TaskGet(), alice, taskId=task_id))["task"]["owner"] == "alice"


async def test_in_progress_on_unowned_task_claims_it(
    alice: ToolContext, bob: ToolContext, lead: ToolContext
) -> None:
    task_id = await create(lead, "work")
    await run(TaskUpdate(), alice, taskId=task_id, status="in_progress")
    assert (await run(TaskGet(), bob, taskId=task_id))["task"]["owner"] == "alice"
    with pytest.raises(ToolError, match="already_claimed.*alice"):
        await TaskUpdate().call({"taskId": task_id, "owner": "bob"}, bob)


async def test_claim_race_has_one_winner(home: Home, services: FakeServices) -> None:
    lead = make_ctx(home, "team-lead", services, lead=True)
    task_id = await create(lead, "contested")
    names = [f"mate{i}" for i in range(8)]

    async def attempt(name: str) -> str:
        ctx = make_ctx(home, name, services)
        try:
            await TaskUpdate().call({"taskId": task_id, "owner": name}, ctx)
        except ToolError as exc:
            assert "already_claimed" in str(exc)
            return "lost"
        return name

    outcomes = await asyncio.gather(*(asyncio.to_thread(asyncio.run, attempt(n)) for n in names))
    winners = [o for o in outcomes if o != "lost"]
    assert len(winners) == 1
    assert home.tasks(TEAM).require(task_id).owner == winners[0]


async def test_claim_blocked_and_resolved(alice: ToolContext, lead: ToolContext) -> None:
    blocker = await create(lead, "first")
    blocked = await create(lead, "second")
    await run(TaskUpdate(), lead, taskId=blocked, addBlockedBy=[blocker])
    with pytest.raises(ToolError, match=r"blocked.*#1"):
        await TaskUpdate().call({"taskId": blocked, "owner": "alice"}, alice)
    await run(TaskUpdate(), lead, taskId=blocker, status="completed")
    await run(TaskUpdate(), alice, taskId=blocked, owner="alice")
    done = await create(lead, "done already")
    await run(TaskUpdate(), lead, taskId=done, status="completed")
    with pytest.raises(ToolError, match="already_resolved"):
        await TaskUpdate().call({"taskId": done, "owner": "alice"}, alice)


async def test_neither_the_owner_nor_the_lead_starts_a_blocked_task(
    alice: ToolContext, lead: ToolContext, home: Home
) -> None:
    blocker = await create(lead, "first")
    blocked = await create(lead, "second")
    await run(TaskUpdate(), lead, taskId=blocked, addBlockedBy=[blocker], owner="alice")
    for ctx in (alice, lead):
        with pytest.raises(ToolError, match=rf"#{blocked} cannot start.*#{blocker}"):
            await TaskUpdate().call({"taskId": blocked, "status": "in_progress"}, ctx)
    await run(TaskUpdate(), lead, taskId=blocker, status="completed")
    await run(TaskUpdate(), alice, taskId=blocked, status="in_progress")


async def test_lead_assigns_directly(lead: ToolContext, home: Home) -> None:
    task_id = await create(lead, "assign me")
    await run(TaskUpdate(), lead, taskId=task_id, owner="alice")
    await run(TaskUpdate(), lead, taskId=task_id, owner="bob")  # reassigning is the lead's call
    assert home.tasks(TEAM).require(task_id).owner == "bob"


async def test_teammate_assigning_someone_else_is_not_a_claim(
    alice: ToolContext, lead: ToolContext, home: Home
) -> None:
    task_id = await create(lead, "handoff")
    await run(TaskUpdate(), alice, taskId=task_id, owner="bob")
    assert home.tasks(TEAM).require(task_id).owner == "bob"


# ---------------------------------------------------------------------------------- completion


async def test_teammate_completion_notifies_lead(
    alice: ToolContext, lead: ToolContext, services: FakeServices
) -> None:
    task_id = await create(lead, "finish me")
    await run(TaskUpdate(), alice, taskId=task_id, owner="alice", status="in_progress")
    assert services.sent == []
    await run(TaskUpdate(), alice, taskId=task_id, status="completed")
    assert len(services.sent) == 1
    sender, recipient, text = services.sent[0]
    assert (sender, recipient) == ("alice", "team-lead")
    frame = parse_frame(text)
    assert isinstance(frame, TaskCompleted)
    assert (frame.sender, frame.task_id, frame.task_subject) == ("alice", task_id, "finish me")
    # completing again is not a new completion
    await run(TaskUpdate(), alice, taskId=task_id, status="completed")
    assert len(services.sent) == 1


async def test_lead_completion_sends_nothing(lead: ToolContext, services: FakeServices) -> None:
    task_id = await create(lead, "mine")
    await run(TaskUpdate(), lead, taskId=task_id, status="completed")
    assert services.sent == []


async def test_completion_without_services(home: Home) -> None:
    lead = make_ctx(home, "team-lead", lead=True)
    mate = make_ctx(home, "carol")
    task_id = await create(lead, "quiet")
    result = await run(TaskUpdate(), mate, taskId=task_id, status="completed")
    assert result["updatedFields"] == ["status"]


async def test_failed_notification_is_a_warning(home: Home) -> None:
    broken = FakeServices(home, fail=True)
    lead = make_ctx(home, "team-lead", broken, lead=True)
    mate = make_ctx(home, "carol", broken)
    task_id = await create(lead, "x")
    result = await run(TaskUpdate(), mate, taskId=task_id, status="completed")
    assert result["success"] and "not be notified" in result["warning"]
    assert home.tasks(TEAM).require(task_id).status == "completed"


async def test_an_owner_must_be_a_current_member(lead: ToolContext, home: Home) -> None:
    """Issue 11: a task assigned to someone who is not (or no longer) a member would stay
    pending and owned forever."""
    task_id = await create(lead, "Design")
    with pytest.raises(ToolError, match="'ghost' is not a member of team 'alpha'"):
        await run(TaskUpdate(), lead, taskId=task_id, owner="ghost")
    home.teams.remove_member(TEAM, name="bob")
    with pytest.raises(ToolError, match="not a member"):
        await run(TaskUpdate(), lead, taskId=task_id, owner="bob")
    assert home.tasks(TEAM).require(task_id).owner is None

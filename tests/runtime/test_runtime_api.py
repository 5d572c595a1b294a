"""The team tools (TeamCreate, TeamDelete, Task, SendMessage, ExitPlanMode) against a real
TeamRuntime, and the runtime API the dashboard calls: plans, permissions, shutdowns, kill,
inject, interrupt, "first answer wins", idle notifications, inbox delivery, prompt caching."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core import Home, InboxMessage, authority
from app.core.errors import NotFoundError
from app.core.paths import LEAD_NAME
from app.core.protocol import permission_request
from app.runtime.api import AnswerStatus
from app.runtime.events import TeamLifecycle, UsageChanged
from app.runtime.offline import ModelRequest, reply, text, tool_use
from app.runtime.team.runtime import TeamRuntime
from app.runtime.tools.base import ToolContext, ToolError
from app.runtime.tools.plan import ExitPlanMode
from app.runtime.tools.team import TaskTool
from tests.runtime.conftest import (
    Observer,
    Router,
    Script,
    call_tool,
    config_of,
    file_text,
    frames_in,
    inbox_of,
    member_of,
    no_spawn,
    result_json,
    settle,
    until,
)

TEAM = "alpha"


async def create_team(runtime: TeamRuntime, name: str = TEAM) -> str:
    content, is_error = await call_tool(runtime.lead_session, "TeamCreate", {"team_name": name})
    assert not is_error, content
    return str(result_json(content)["team_name"])


async def spawn(runtime: TeamRuntime, name: str, **extra: Any) -> dict[str, Any]:
    spec = {"name": name, "prompt": f"You are {name}.", **extra}
    content, is_error = await call_tool(runtime.lead_session, "Task", spec)
    assert not is_error, content
    return result_json(content)  # type: ignore[no-any-return]


async def hang(request: ModelRequest) -> Any:
    """A model call that never answers (until the caller gives up on it)."""
    await asyncio.Event().wait()


# ====================================================================================== team tools


@pytest.fixture
async def tools_rt(make_runtime: Callable[..., TeamRuntime]) -> TeamRuntime:
    """A runtime whose agents are never run: tool calls only (its watcher runs: requests
    reach the queue through it)."""
    runtime = make_runtime(spawner=no_spawn)
    await runtime.start()
    return runtime


async def test_team_create_writes_the_config_and_refuses_a_second_team(
    tools_rt: TeamRuntime, home: Home, project: Path
) -> None:
    observer = Observer(tools_rt)
    content, is_error = await call_tool(
        tools_rt.lead_session, "TeamCreate", {"team_name": "Alpha Team", "description": "d"}
    )
    assert not is_error
    data = result_json(content)
    assert data == {
        "team_name": "alpha-team",
        "team_file_path": str(home.layout.config_path("alpha-team")),
        "lead_agent_id": "team-lead@alpha-team",
    }
    config = config_of(home, "alpha-team")
    assert config["description"] == "d"
    assert [(m["name"], m["agentId"], m["cwd"]) for m in config["members"]] == [
        ("team-lead", "team-lead@alpha-team", str(project))
    ]
    assert tools_rt.team == "alpha-team"
    assert tools_rt.lead_session.identity.agent_id == "team-lead@alpha-team"
    assert observer.of(TeamLifecycle) == [TeamLifecycle("alpha-team", "created")]

    content, is_error = await call_tool(tools_rt.lead_session, "TeamCreate", {"team_name": "b"})
    assert is_error
    assert 'Already leading team "alpha-team"' in content
    assert not home.layout.team_dir("b").exists()


async def test_team_create_dedupes_a_name_that_is_taken(tools_rt: TeamRuntime, home: Home) -> None:
    home.teams.create("alpha", description="someone else's")
    assert await create_team(tools_rt, "alpha") == "alpha-2"
    assert config_of(home, "alpha")["description"] == "someone else's"
    assert config_of(home, "alpha-2")["leadAgentId"] == "team-lead@alpha-2"


@pytest.mark.parametrize("name", ["", "   ", "---"])
async def test_team_create_rejects_an_empty_name(tools_rt: TeamRuntime, name: str) -> None:
    content, is_error = await call_tool(tools_rt.lead_session, "TeamCreate", {"team_name": name})
    assert is_error and content
    assert tools_rt.team is None


async def test_team_delete_refuses_while_members_remain(tools_rt: TeamRuntime, home: Home) -> None:
    observer = Observer(tools_rt)
    await create_team(tools_rt)
    await spawn(tools_rt, "researcher")

    content, is_error = await call_tool(tools_rt.lead_session, "TeamDelete", {})
    assert is_error
    data = result_json(content)
    assert data["success"] is False and data["team_name"] == TEAM
    assert "researcher" in data["message"]
    assert home.layout.config_path(TEAM).exists() and home.layout.task_dir(TEAM).is_dir()
    assert tools_rt.team == TEAM

    tools_rt.kill("researcher")
    content, is_error = await call_tool(tools_rt.lead_session, "TeamDelete", {})
    assert not is_error
    assert result_json(content)["success"] is True
    assert not home.layout.team_dir(TEAM).exists() and not home.layout.task_dir(TEAM).exists()
    assert tools_rt.team is None
    assert observer.of(TeamLifecycle)[-1] == TeamLifecycle(TEAM, "deleted")

    content, is_error = await call_tool(tools_rt.lead_session, "TeamDelete", {})
    assert not is_error and "nothing to clean up" in content


async def test_task_spawns_a_teammate_and_dedupes_its_name(
    tools_rt: TeamRuntime, home: Home, project: Path
) -> None:
    await create_team(tools_rt)
    data = await spawn(tools_rt, "researcher", subagent_type="researcher")
    assert data["status"] == "teammate_spawned"
    assert (data["name"], data["agent_id"], data["team_name"]) == (
        "researcher",
        f"researcher@{TEAM}",
        TEAM,
    )
    assert data["plan_mode_required"] is False
    member = member_of(home, TEAM, "researcher")
    assert member is not None
    assert member["backendType"] == "in-process" and member["tmuxPaneId"] == "in-process"
    assert member["agentType"] == "researcher" and member["cwd"] == str(project)
    assert member["prompt"] == "You are researcher." and member["color"] == data["color"]
    assert tools_rt.teammates["researcher"].session.status == "running"

    assert (await spawn(tools_rt, "researcher"))["name"] == "researcher-2"
    assert (await spawn(tools_rt, "Researcher"))["name"] == "researcher-3"
    planner = await spawn(tools_rt, "planner", mode="plan")
    assert planner["plan_mode_required"] is True
    assert member_of(home, TEAM, "planner")["planModeRequired"] is True  # type: ignore[index]
    assert tools_rt.teammates["planner"].session.mode == "plan"
    names = [m["name"] for m in config_of(home, TEAM)["members"]]
    assert names == ["team-lead", "researcher", "researcher-2", "researcher-3", "planner"]
    colors = [tools_rt.teammates[n].session.identity.color for n in names[1:]]
    assert len(set(colors)) == 4


async def test_task_needs_a_team_a_name_and_a_prompt(tools_rt: TeamRuntime) -> None:
    content, is_error = await call_tool(tools_rt.lead_session, "Task", {"name": "x", "prompt": "p"})
    assert is_error and "TeamCreate" in content
    await create_team(tools_rt)
    content, is_error = await call_tool(tools_rt.lead_session, "Task", {"prompt": "p"})
    assert is_error and "name" in content
    content, is_error = await call_tool(tools_rt.lead_session, "Task", {"name": "x", "prompt": " "})
    assert is_error and "prompt" in content
    content, is_error = await call_tool(
        tools_rt.lead_session, "Task", {"name": "x", "prompt": "p", "team_name": "other"}
    )
    assert is_error
    assert not tools_rt.teammates


async def test_in_process_teammates_cannot_spawn(tools_rt: TeamRuntime, home: Home) -> None:
    await create_team(tools_rt)
    await spawn(tools_rt, "researcher")
    session = tools_rt.teammates["researcher"].session
    offered = {t.name for t in session.tools}
    assert "Task" not in offered and "TeamCreate" not in offered and "TeamDelete" not in offered
    content, is_error = await call_tool(session, "Task", {"name": "sub", "prompt": "p"})
    assert is_error and "No such tool: Task" in content
    ctx = ToolContext(home=home, agent=session.identity, services=tools_rt)
    with pytest.raises(ToolError, match="cannot spawn"):
        await TaskTool().call({"name": "sub", "prompt": "p"}, ctx)
    assert [m["name"] for m in config_of(home, TEAM)["members"]] == ["team-lead", "researcher"]


async def test_send_message_to_a_member_and_never_to_a_phantom(
    tools_rt: TeamRuntime, home: Home
) -> None:
    await create_team(tools_rt)
    await spawn(tools_rt, "researcher")
    await spawn(tools_rt, "analyst")
    lead = tools_rt.lead_session
    researcher = tools_rt.teammates["researcher"].session

    content, is_error = await call_tool(
        lead,
        "SendMessage",
        {"type": "message", "recipient": "researcher", "content": "hello", "summary": "hi"},
    )
    assert not is_error
    data = result_json(content)
    assert data["success"] is True and data["routing"]["target"] == "@researcher"
    [message] = inbox_of(home, TEAM, "researcher")
    assert (message["from"], message["text"], message["summary"], message["read"]) == (
        "team-lead",
        "hello",
        "hi",
        False,
    )
    # name@team addresses work; a peer DM is remembered for the sender's idle notification
    # (its panel shows the last DM from the files: the store owns that fact)
    content, is_error = await call_tool(
        researcher,
        "SendMessage",
        {"type": "message", "recipient": f"analyst@{TEAM}", "content": "found 3 files"},
    )
    assert not is_error
    assert inbox_of(home, TEAM, "analyst")[0]["from"] == "researcher"
    assert researcher.last_peer_dm == "[to analyst] found 3 files"
    assert "[to " not in researcher.snapshot.last_activity

    for bad in ("ghost", "ghost@alpha", " "):
        content, is_error = await call_tool(
            lead, "SendMessage", {"type": "message", "recipient": bad, "content": "boo"}
        )
        assert is_error, bad
    assert not home.layout.inbox_path(TEAM, "ghost").exists()
    content, is_error = await call_tool(
        researcher, "SendMessage", {"type": "message", "recipient": "researcher", "content": "x"}
    )
    assert is_error and "yourself" in content
    content, is_error = await call_tool(
        lead, "SendMessage", {"type": "message", "recipient": "analyst", "content": ""}
    )
    assert is_error and "content" in content
    content, is_error = await call_tool(lead, "SendMessage", {"type": "shout"})
    assert is_error and "type must be one of" in content


async def test_broadcast_reaches_everyone_but_the_sender(tools_rt: TeamRuntime, home: Home) -> None:
    await create_team(tools_rt)
    await spawn(tools_rt, "researcher")
    await spawn(tools_rt, "analyst")
    session = tools_rt.teammates["researcher"].session
    content, is_error = await call_tool(
        session, "SendMessage", {"type": "broadcast", "content": "stop the line"}
    )
    assert not is_error
    assert sorted(result_json(content)["recipients"]) == ["analyst", "team-lead"]
    assert [m["text"] for m in inbox_of(home, TEAM, "team-lead")] == ["stop the line"]
    assert [m["text"] for m in inbox_of(home, TEAM, "analyst")] == ["stop the line"]
    assert inbox_of(home, TEAM, "researcher") == []


async def test_any_member_may_request_a_shutdown(tools_rt: TeamRuntime, home: Home) -> None:
    """Seed 002: "Team lead or another teammate requested shutdown"."""
    await create_team(tools_rt)
    await spawn(tools_rt, "researcher")
    await spawn(tools_rt, "analyst")
    researcher = tools_rt.teammates["researcher"]

    content, is_error = await call_tool(
        researcher.session, "SendMessage", {"type": "shutdown_request", "recipient": "analyst"}
    )
    assert not is_error, content
    [peer] = frames_in(home, TEAM, "analyst", "shutdown_request")
    assert peer["from"] == "researcher"

    content, is_error = await call_tool(
        tools_rt.lead_session,
        "SendMessage",
        {"type": "shutdown_request", "recipient": "researcher", "content": "done"},
    )
    assert not is_error
    request_id = result_json(content)["request_id"]
    assert request_id.startswith("shutdown-") and request_id.endswith("@researcher")
    [frame] = frames_in(home, TEAM, "researcher", "shutdown_request")
    assert frame == {**frame, "requestId": request_id, "from": "team-lead", "reason": "done"}
    prompt = await researcher._poll()  # the teammate reads it: the model decides
    assert isinstance(prompt, str) and request_id in prompt
    assert researcher.session.status == "stopping"
    assert tools_rt.approvals() == []  # the person never answers a teammate's shutdown
    for bad in ("team-lead", "ghost"):
        content, is_error = await call_tool(
            tools_rt.lead_session, "SendMessage", {"type": "shutdown_request", "recipient": bad}
        )
        assert is_error, bad


async def test_shutdown_response_reject_needs_a_reason(tools_rt: TeamRuntime, home: Home) -> None:
    await create_team(tools_rt)
    await spawn(tools_rt, "researcher")
    await spawn(tools_rt, "analyst")
    researcher = tools_rt.teammates["researcher"]
    request_id = tools_rt.request_shutdown("researcher", "wrap up").request_id
    await researcher._poll()
    assert researcher.session.status == "stopping"

    content, is_error = await call_tool(
        researcher.session,
        "SendMessage",
        {"type": "shutdown_response", "request_id": request_id, "approve": False},
    )
    assert is_error and "reason" in content
    content, is_error = await call_tool(
        tools_rt.teammates["analyst"].session,
        "SendMessage",
        {"type": "shutdown_response", "request_id": request_id, "approve": True},
    )
    assert "addressed to you" in content
    assert tools_rt.status_of("analyst") != "completed"

    content, is_error = await call_tool(
        researcher.session,
        "SendMessage",
        {
            "type": "shutdown_response",
            "request_id": request_id,
            "approve": False,
            "content": "still reading files",
        },
    )
    assert not is_error
    [frame] = frames_in(home, TEAM, "team-lead", "shutdown_rejected")
    assert (frame["requestId"], frame["from"], frame["reason"]) == (
        request_id,
        "researcher",
        "still reading files",
    )
    assert researcher.session.status != "stopping"


async def test_plan_approval_response_is_the_leads_and_not_when_the_person_decides(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    for decider in ("person", "lead"):
        rt = make_runtime(spawner=no_spawn, decider=decider)
        await rt.start()
        team = await create_team(rt, f"team-{decider}")
        await spawn(rt, "writer", mode="plan")
        writer = rt.teammates["writer"].session
        content, is_error = await call_tool(writer, "ExitPlanMode", {"plan": "1. do it"})
        assert not is_error
        request_id = result_json(content)["request_id"]
        await until(rt.approvals, "the plan request in the lead's queue")

        answer = {"type": "plan_approval_response", "request_id": request_id, "approve": True}
        content, is_error = await call_tool(writer, "SendMessage", answer)
        assert is_error and "Only the team lead" in content
        content, is_error = await call_tool(
            rt.lead_session, "SendMessage", {**answer, "recipient": "writer"}
        )
        assert not is_error
        responses = frames_in(home, team, "writer", "plan_approval_response")
        if decider == "person":
            assert "The person decides" in content
            assert responses == [] and rt.approvals()[0].request_id == request_id
        else:
            assert "Plan approved for writer" in content
            assert [(r["requestId"], r["approved"]) for r in responses] == [(request_id, True)]
            assert rt.approvals() == []
            content, _ = await call_tool(
                rt.lead_session, "SendMessage", {**answer, "recipient": "writer"}
            )
            assert "already resolved (approved)" in content
        await rt.stop()


async def test_permission_response_is_the_leads_and_not_when_the_person_decides(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    for decider in ("person", "lead"):
        rt = make_runtime(spawner=no_spawn, decider=decider)
        team = await create_team(rt, f"team-{decider}")
        await spawn(rt, "worker")
        worker = rt.teammates["worker"].session
        frame = permission_request(
            f"permission-1@worker-{decider}", f"worker@{team}", "Bash", "toolu_1", "ls", {}
        )
        # as the worker's runtime writes it: signed with the team's key
        text = authority.sign_text(rt.team_key, frame.to_text(), to=LEAD_NAME, origin="runtime")
        rt.observe_lead_frame(InboxMessage(sender="worker", text=text), frame)
        answer = {
            "type": "permission_response",
            "request_id": frame.request_id,
            "approve": False,
            "content": "not needed",
        }
        content, is_error = await call_tool(worker, "SendMessage", answer)
        assert is_error and "Only the team lead" in content
        content, is_error = await call_tool(
            rt.lead_session, "SendMessage", {**answer, "recipient": "worker"}
        )
        assert not is_error
        responses = frames_in(home, team, "worker", "permission_response")
        if decider == "person":
            assert "The person decides" in content and responses == []
        else:
            assert [(r["request_id"], r["subtype"], r["error"]) for r in responses] == [
                (frame.request_id, "error", "not needed")
            ]
        await rt.stop()


async def test_exit_plan_mode_sends_the_plan_to_the_lead(tools_rt: TeamRuntime, home: Home) -> None:
    await create_team(tools_rt)
    await spawn(tools_rt, "writer", mode="plan")
    writer = tools_rt.teammates["writer"].session

    content, is_error = await call_tool(
        writer, "Write", {"file_path": str(writer.identity.cwd / "x.md"), "content": "x"}
    )
    assert is_error and "plan mode" in content
    assert not (writer.identity.cwd / "x.md").exists()
    content, is_error = await call_tool(writer, "ExitPlanMode", {"plan": " "})
    assert is_error
    lead_ctx = ToolContext(home=home, agent=tools_rt.lead_session.identity, services=tools_rt)
    with pytest.raises(ToolError, match="for teammates"):
        await ExitPlanMode().call({"plan": "p"}, lead_ctx)

    content, is_error = await call_tool(writer, "ExitPlanMode", {"plan": "## Plan\n1. write"})
    assert not is_error
    request_id = result_json(content)["request_id"]
    assert writer.pending_plan_request == request_id
    [frame] = frames_in(home, TEAM, "team-lead", "plan_approval_request")
    assert (frame["requestId"], frame["from"], frame["planContent"]) == (
        request_id,
        "writer",
        "## Plan\n1. write",
    )
    assert file_text(frame["planFilePath"]) == "## Plan\n1. write"
    [approval] = await until(tools_rt.approvals, "the plan request in the lead's queue")
    assert (approval.kind, approval.agent, approval.body) == ("plan", "writer", "## Plan\n1. write")


async def test_exit_plan_mode_leaves_the_teammate_awaiting_approval(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    writer = Script([reply(tool_use("ExitPlanMode", {"plan": "1. write it"})), "Plan sent."])
    rt = make_runtime(Router(team_lead=Script(then="Noted."), writer=writer))
    await rt.start()
    await create_team(rt)
    home.tasks(TEAM).create("Something else")  # must not be claimed while awaiting approval
    await spawn(rt, "writer", mode="plan")
    await until(lambda: frames_in(home, TEAM, "team-lead", "idle_notification"), "idle")
    session = rt.teammates["writer"].session
    assert session.status == "awaiting approval"
    [idle] = frames_in(home, TEAM, "team-lead", "idle_notification")
    assert idle["idleReason"] == "awaiting plan approval"
    rt.teammates["writer"].wake.set()
    await settle()
    assert home.tasks(TEAM).get("1").owner is None  # type: ignore[union-attr]
    assert len(writer.requests) == 2


# ====================================================================================== runtime API


async def started(
    make_runtime: Callable[..., TeamRuntime], router: Router, **options: Any
) -> TeamRuntime:
    router.agents.setdefault("team-lead", Script(then="Noted."))
    rt = make_runtime(router, **options)
    await rt.start()
    await create_team(rt)
    return rt


async def test_approve_and_reject_plan_with_feedback(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    def after_rejection(request: ModelRequest) -> Any:
        assert "Your plan was rejected" in request.last_user_text
        assert "Feedback: cover the tests" in request.last_user_text
        return reply(tool_use("ExitPlanMode", {"plan": "v2, with tests"}))

    def after_approval(request: ModelRequest) -> Any:
        assert "Your plan was approved" in request.last_user_text
        return reply(text("Working on it."))

    writer = Script(
        [
            reply(tool_use("ExitPlanMode", {"plan": "v1"})),
            "Waiting.",
            after_rejection,
            "Waiting again.",
            after_approval,
        ]
    )
    router = Router(writer=writer)
    rt = await started(make_runtime, router)
    observer = Observer(rt)
    await spawn(rt, "writer", mode="plan")

    [first] = await until(rt.approvals, "the first plan")
    assert (first.kind, first.agent, first.body) == ("plan", "writer", "v1")
    await until(lambda: rt.status_of("writer") == "awaiting approval", "awaiting approval")
    assert rt.reject_plan(first.request_id, "cover the tests").text == "Plan rejected for writer"

    [second] = await until(rt.approvals, "the revised plan")
    assert second.body == "v2, with tests" and second.request_id != first.request_id
    assert rt.approve_plan(second.request_id).text == "Plan approved for writer"
    await until(lambda: not writer.steps and rt.status_of("writer") == "idle", "the work")

    assert rt.approve_plan(first.request_id).text == "already resolved (rejected)"
    assert rt.reject_plan(second.request_id, "no").text == "already resolved (approved)"
    responses = frames_in(home, TEAM, "writer", "plan_approval_response")
    assert [(r["approved"], r.get("feedback")) for r in responses] == [
        (False, "cover the tests"),
        (True, None),
    ]
    assert rt.teammates["writer"].session.mode == "default"
    assert member_of(home, TEAM, "writer")["mode"] == "default"  # type: ignore[index]
    outcomes = [e.outcome for e in observer.approvals("plan", resolved=True)]
    assert outcomes == ["rejected", "approved"]
    # the person decides: the lead model was told, not asked
    assert router.calls("team-lead") == 0


async def test_answer_permission_allow_deny_always(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    def write(name: str) -> Any:
        return reply(tool_use("Write", {"file_path": str(project / "out" / name), "content": name}))

    worker = Script(
        [write("a.txt"), write("b.txt"), write("c.txt"), write("d.txt"), "All written."]
    )
    rt = await started(make_runtime, Router(worker=worker))
    observer = Observer(rt)
    await spawn(rt, "worker")

    first = (await until(rt.approvals, "permission for a.txt"))[0]
    assert (first.kind, first.agent, first.tool_name) == ("permission", "worker", "Write")
    assert first.tool_input == {"file_path": str(project / "out" / "a.txt"), "content": "a.txt"}
    assert rt.status_of("worker") == "awaiting approval"
    assert rt.answer_permission(first.request_id, True).text == "Permission allowed for worker"

    second = (await until(lambda: rt.approvals(), "permission for b.txt"))[0]
    assert second.request_id != first.request_id
    assert (project / "out" / "a.txt").read_text() == "a.txt"
    assert rt.answer_permission(second.request_id, False).text == "Permission denied for worker"

    third = (await until(lambda: rt.approvals(), "permission for c.txt"))[0]
    assert third.suggestion == f"Edit({project / 'out'}/**)"
    rt.answer_permission(third.request_id, True, always=True)

    await until(lambda: not worker.steps and rt.status_of("worker") == "idle", "all writes")
    assert (project / "out" / "c.txt").exists() and (project / "out" / "d.txt").exists()
    assert not (project / "out" / "b.txt").exists()
    results = [r for req in worker.requests for r in req.tool_results]
    assert [r.is_error for r in results] == [False, True, False, False]
    assert results[1].content == "Permission denied: Denied by team-lead"
    # "always" added a rule: the identical call for d.txt did not ask
    assert [e.outcome for e in observer.approvals("permission", resolved=True)] == [
        "allowed",
        "denied",
        "always allowed",
    ]
    assert len(frames_in(home, TEAM, "team-lead", "permission_request")) == 3
    assert len(frames_in(home, TEAM, "worker", "permission_response")) == 3
    assert str(third.suggestion) in [str(r) for r in rt.teammates["worker"].session.rules.allow]
    # "always" is kept where the rules are read: the project's .claude/settings.local.json
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert settings["permissions"]["allow"] == [str(third.suggestion)]
    assert rt.answer_permission(third.request_id, False).text == "already resolved (always allowed)"


async def test_unanswered_permission_is_denied_after_the_timeout(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    worker = Script([reply(tool_use("Bash", {"command": "touch made.txt"})), "Could not do it."])
    rt = await started(make_runtime, Router(worker=worker), permission_timeout=0.2)
    observer = Observer(rt)
    await spawn(rt, "worker")
    await until(lambda: not worker.steps and rt.status_of("worker") == "idle", "the turn")

    [result] = worker.requests[1].tool_results
    assert result.is_error
    assert result.content == "Permission denied: no answer from the lead within 0.2s"
    assert not (project / "made.txt").exists()
    [queued] = observer.approvals("permission", resolved=False)
    [resolved] = observer.approvals("permission", resolved=True)
    assert resolved.outcome == "timed out" and resolved.request_id == queued.request_id
    assert rt.approvals() == []
    assert rt.answer_permission(queued.request_id, True).text == "already resolved (timed out)"


#: Longer than the short timeouts above: a request still pending after it did not time out
#: (a quiet period proving something does not happen: not scaled, see tests/timing.py).
QUIET = 0.6


async def test_a_permission_timeout_of_0_waits_for_the_answer(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    """``--permission-timeout 0``: a teammate's request (the inbox wait) and the lead's own
    (the queue's wait) stay pending however long; the answers, when they come, are honoured."""
    worker = Script([reply(tool_use("Bash", {"command": "touch made.txt"})), "Done."])
    lead = Script([reply(tool_use("Bash", {"command": "touch lead.txt"})), "Lead done."])
    rt = await started(make_runtime, Router(worker=worker, team_lead=lead), permission_timeout=0)
    observer = Observer(rt)
    await spawn(rt, "worker")
    rt.submit("touch lead.txt")
    await until(lambda: len(rt.approvals()) == 2, "both requests")
    await asyncio.sleep(QUIET)
    assert {a.agent for a in rt.approvals()} == {"worker", "team-lead"}
    assert rt.status_of("worker") == "awaiting approval"
    assert observer.approvals("permission", resolved=True) == []
    for asked in rt.approvals():
        assert rt.answer_permission(asked.request_id, True).status is AnswerStatus.DONE
    await until(lambda: (project / "made.txt").exists(), "the worker's allowed command")
    await until(lambda: (project / "lead.txt").exists(), "the lead's allowed command")


def _shutdown_answer(approve: bool, reason: str = "") -> Any:
    """A model step answering the shutdown request quoted in its prompt."""

    def step(request: ModelRequest) -> Any:
        request_id = request.last_user_text.split('"requestId":"', 1)[1].split('"', 1)[0]
        answer = {"type": "shutdown_response", "request_id": request_id, "approve": approve}
        return reply(tool_use("SendMessage", {**answer, "content": reason} if reason else answer))

    return step


async def test_the_teammate_answers_the_persons_shutdown_request(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Issue 10: the person sends the request (s); the teammate, not the person, answers it."""
    worker = Script(
        ["Ready.", _shutdown_answer(False, "still needed"), "Keeping on.",
         _shutdown_answer(True), "Bye."]
    )  # fmt: skip
    rt = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "idle")

    first = rt.request_shutdown("worker", "time to go").request_id
    assert rt.approvals() == []
    [rejected] = await until(lambda: frames_in(home, TEAM, "team-lead", "shutdown_rejected"), "no")
    assert (rejected["requestId"], rejected["reason"]) == (first, "still needed")
    await until(lambda: rt.status_of("worker") == "idle", "idle again")
    assert member_of(home, TEAM, "worker") is not None

    second = rt.request_shutdown("worker").request_id
    await until(lambda: rt.status_of("worker") == "completed", "completed")
    [approved] = frames_in(home, TEAM, "team-lead", "shutdown_approved")
    assert (approved["requestId"], approved["from"]) == (second, "worker")
    assert member_of(home, TEAM, "worker") is None
    assert "worker" in rt.departed and "worker" not in rt.teammates
    assert rt.approvals() == []


async def test_kill_stops_a_busy_teammate_and_frees_its_tasks(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    worker = Script([hang])
    router = Router(worker=worker)
    rt = await started(make_runtime, router)
    tasks = home.tasks(TEAM)
    tasks.create("Long job")
    tasks.update("1", owner="worker", status="in_progress")
    await spawn(rt, "worker")
    await until(lambda: router.calls("worker") == 1, "the model call")

    rt.kill("worker")
    assert rt.status_of("worker") == "killed"
    assert member_of(home, TEAM, "worker") is None
    task = tasks.get("1")
    assert task is not None and (task.status, task.owner) == ("pending", None)
    [note] = [m for m in inbox_of(home, TEAM, "team-lead") if m["from"] == "worker"]
    assert "worker was terminated" in note["text"] and '#1 "Long job"' in note["text"]
    assert "worker" not in rt.teammates and rt.departed["worker"].status == "killed"
    await settle()
    with pytest.raises(NotFoundError):
        rt.kill("worker")
    with pytest.raises(NotFoundError):
        rt.inject_message("worker", "hello?")


async def test_inject_message_is_handled_before_other_mail(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 000 ``injectUserMessageToTeammate`` (``pendingUserMessages`` + the transcript) and
    seed 002 §"Message Polling" step 1: the person's message comes before any mail."""
    worker = Script(then="ok")
    rt = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "idle")

    box = home.mailbox(TEAM)
    box.send("worker", InboxMessage(sender="team-lead", text="from the lead"))
    rt.inject_message("worker", "from the person")
    await until(lambda: len(worker.requests) == 3 and rt.status_of("worker") == "idle", "2 turns")

    assert worker.requests[1].last_user_text == "from the person"
    assert "from the lead" not in worker.requests[1].last_user_text
    assert 'teammate_id="team-lead"' in worker.requests[2].last_user_text
    assert "from the lead" in worker.requests[2].last_user_text
    entries = [e for e in rt.transcript("worker") if e.kind == "user"]
    assert any(e.text == "from the person" and e.data.get("source") == "person" for e in entries)


async def test_interrupt_ends_the_turn_as_interrupted(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    worker = Script([hang, "Back again."])
    lead = Script([hang, "Lead back."])
    router = Router(worker=worker, team_lead=lead)
    rt = await started(make_runtime, router)
    observer = Observer(rt)
    await spawn(rt, "worker")
    await until(lambda: router.calls("worker") == 1, "the worker's model call")

    rt.interrupt("worker")
    [idle] = await until(
        lambda: frames_in(home, TEAM, "team-lead", "idle_notification"), "the idle notification"
    )
    assert idle["idleReason"] == "interrupted"
    await until(lambda: rt.status_of("worker") == "idle", "idle after the notification")
    assert [e.text for e in rt.transcript("worker") if e.kind == "notice"] == ["interrupted"]
    # the conversation stays valid: the next turn is accepted by the API
    rt.inject_message("worker", "carry on")
    await until(lambda: len(worker.requests) == 2 and rt.status_of("worker") == "idle", "turn 2")
    assert worker.requests[1].last_user_text.endswith("carry on")

    rt.submit("do something long")
    await until(lambda: router.calls("team-lead") == 1, "the lead's model call")
    rt.interrupt("team-lead")
    await until(lambda: observer.outcomes, "the lead's turn")
    assert observer.outcomes[0].status == "interrupted"
    rt.submit("again")
    await until(lambda: len(observer.outcomes) == 2, "the lead's next turn")
    assert (observer.outcomes[1].status, observer.outcomes[1].text) == ("end_turn", "Lead back.")


async def test_first_answer_wins(make_runtime: Callable[..., TeamRuntime], home: Home) -> None:
    rt = make_runtime(spawner=no_spawn, decider="lead")
    await rt.start()
    await create_team(rt)
    await spawn(rt, "writer", mode="plan")
    writer = rt.teammates["writer"].session
    content, _ = await call_tool(writer, "ExitPlanMode", {"plan": "p"})
    request_id = result_json(content)["request_id"]
    await until(rt.approvals, "the plan request in the lead's queue")

    assert rt.approve_plan(request_id).text == "Plan approved for writer"
    content, is_error = await call_tool(
        rt.lead_session,
        "SendMessage",
        {
            "type": "plan_approval_response",
            "request_id": request_id,
            "approve": False,
            "recipient": "writer",
            "content": "too late",
        },
    )
    assert "already resolved (approved)" in content
    assert [r["approved"] for r in frames_in(home, TEAM, "writer", "plan_approval_response")] == [
        True
    ]
    again = rt.reject_plan(request_id, "x")
    assert again.text == "already resolved (approved)"
    assert (again.status, again.previous, again.agent) == (
        AnswerStatus.ALREADY,
        "approved",
        "writer",
    )
    unknown = rt.approve_plan("plan_approval-1@nobody")
    assert unknown.text.startswith("unknown request id") and unknown.status is AnswerStatus.UNKNOWN
    # a shutdown request is the teammate's to answer, never the person's
    shutdown = rt.request_shutdown("writer")
    assert (shutdown.status, shutdown.agent) == (AnswerStatus.DONE, "writer")
    assert rt.approve_plan(shutdown.request_id).text.startswith("unknown request id")


async def test_idle_notifications_once_per_transition_and_never_wake_the_lead(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    def report(request: ModelRequest) -> Any:
        return reply(
            tool_use(
                "SendMessage",
                {"type": "message", "recipient": "team-lead", "content": "Report: all good"},
            )
        )

    worker = Script(["First turn done.", "Second turn done.", report, "Reported."])
    router = Router(worker=worker)
    rt = await started(make_runtime, router)
    lead = rt.lead

    def idles() -> list[dict[str, Any]]:
        return frames_in(home, TEAM, "team-lead", "idle_notification")

    def lead_read_all() -> bool:
        return all(m["read"] for m in inbox_of(home, TEAM, "team-lead"))

    await spawn(rt, "worker")
    await until(lambda: len(idles()) == 1 and lead_read_all(), "the first idle notification")
    # spurious wake-ups of an idle teammate send nothing more
    for _ in range(3):
        rt.teammates["worker"].wake.set()
        await settle()
    assert len(idles()) == 1
    assert router.calls("team-lead") == 0 and lead.turns == 0

    rt.inject_message("worker", "one more thing")
    await until(lambda: len(idles()) == 2 and lead_read_all(), "the second idle notification")
    assert [i["idleReason"] for i in idles()] == ["available", "available"]
    assert router.calls("team-lead") == 0 and lead.turns == 0

    rt.inject_message("worker", "report to the lead")
    await until(lambda: len(idles()) == 3 and lead_read_all() and lead.turns == 1, "the report")
    await settle()
    assert router.calls("team-lead") == 1 and lead.turns == 1
    prompt = router.requests["team-lead"][0].last_user_text
    assert prompt.startswith('<teammate_message teammate_id="worker"')
    assert "Report: all good" in prompt
    # idle notifications ride along with the real message, coalesced into one line
    assert "idle_notification" not in prompt
    assert "\n\n[idle teammates: worker (" in prompt


async def test_lead_inbox_is_delivered_at_the_next_tool_result_boundary(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    def call_a_tool(request: ModelRequest) -> Any:
        # mail arrives while the lead is busy (between its model call and its tool result)
        home.mailbox(TEAM).append(
            "team-lead", InboxMessage(sender="worker", text="urgent news", summary="news")
        )
        return reply(tool_use("TaskList", {}))

    lead = Script([call_a_tool, "Thanks."])
    router = Router(team_lead=lead)
    rt = await started(make_runtime, router)
    observer = Observer(rt)
    rt.submit("check the tasks")
    await until(lambda: observer.outcomes, "the lead's turn")
    await settle()

    assert len(observer.outcomes) == 1 and router.calls("team-lead") == 2
    last = lead.requests[1].messages[-1]
    kinds = [b["type"] for b in last["content"]]
    assert kinds == ["tool_result", "text"]
    delivered = last["content"][1]["text"]
    assert delivered.startswith('<teammate_message teammate_id="worker"')
    assert "urgent news" in delivered and 'summary="news"' in delivered
    assert all(m["read"] for m in inbox_of(home, TEAM, "team-lead"))


async def test_prompt_caching_markers_and_cache_reads(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    lead = Script([reply(tool_use("TaskList", {})), reply(tool_use("TaskList", {})), "Done."])
    router = Router(team_lead=lead)
    rt = await started(make_runtime, router)
    observer = Observer(rt)
    rt.submit("look at the tasks")
    await until(lambda: observer.outcomes, "the lead's turn")

    assert len(lead.requests) == 3
    for request in lead.requests:
        body = request.body
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in t for t in body["tools"][:-1])
        marked = [
            b
            for m in body["messages"]
            for b in (m["content"] if isinstance(m["content"], list) else [])
            if "cache_control" in b
        ]
        assert marked == [body["messages"][-1]["content"][-1]]
    # the stored conversation itself carries no markers
    assert not any("cache_control" in json.dumps(m) for m in rt.lead_session.messages)

    usage = [e for e in observer.of(UsageChanged) if e.agent == "team-lead"]
    assert [u.model_calls for u in usage] == [1, 2, 3]
    assert usage[0].cache_read_tokens == 0 and usage[0].cache_creation_tokens > 0
    assert usage[1].cache_read_tokens > 0
    assert usage[2].cache_read_tokens > usage[1].cache_read_tokens
    assert rt.lead_session.snapshot.cache_read_tokens == usage[2].cache_read_tokens


async def test_interrupt_while_waiting_for_a_permission_answer(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    worker = Script([reply(tool_use("Bash", {"command": "touch made.txt"})), "Stopped."])
    lead = Script([reply(tool_use("Bash", {"command": "touch lead.txt"})), "Stopped too."])
    rt = await started(make_runtime, Router(worker=worker, team_lead=lead))
    observer = Observer(rt)
    await spawn(rt, "worker")
    [asked] = await until(rt.approvals, "the worker's permission request")

    rt.interrupt("worker")
    [idle] = await until(
        lambda: frames_in(home, TEAM, "team-lead", "idle_notification"), "the interrupted turn"
    )
    assert idle["idleReason"] == "interrupted"
    assert rt.approvals() == []
    assert rt.answer_permission(asked.request_id, True).text.startswith("already resolved")
    assert not (project / "made.txt").exists()
    result = [e for e in rt.transcript("worker") if e.kind == "tool_result"][-1]
    assert result.data["is_error"] and "nterrupted" in result.text
    assert len(worker.requests) == 1

    rt.submit("touch a file")
    [asked] = await until(rt.approvals, "the lead's permission request")
    assert asked.agent == "team-lead"
    rt.interrupt("team-lead")
    await until(lambda: observer.outcomes, "the lead's interrupted turn")
    assert observer.outcomes[0].status == "interrupted"
    assert rt.approvals() == [] and rt.status_of("team-lead") == "idle"
    assert not (project / "lead.txt").exists()


async def test_a_lead_turn_that_crashes_ends_with_a_visible_error(
    make_runtime: Callable[..., TeamRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.runtime.agent.lead as lead_module

    real = lead_module.run_turn
    calls = 0

    async def flaky(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("lead bug")
        return await real(*args, **kwargs)

    monkeypatch.setattr(lead_module, "run_turn", flaky)
    rt = await started(make_runtime, Router(team_lead=Script(["Fine."])))
    observer = Observer(rt)
    rt.submit("first")
    await until(lambda: observer.outcomes, "the crashed turn")
    assert (observer.outcomes[0].status, observer.outcomes[0].error) == (
        "error",
        "RuntimeError: lead bug",
    )
    assert rt.status_of("team-lead") == "idle"
    assert rt.transcript("team-lead")[-1].kind == "error"
    rt.submit("second")
    await until(lambda: len(observer.outcomes) == 2, "the next turn")
    assert observer.outcomes[1].text == "Fine."


async def test_a_shutdown_request_comes_first_then_mail_one_per_turn(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 002's poll: a shutdown request before other mail, one message per turn; a teammate
    with an unanswered shutdown request shows as stopping between turns."""
    go = asyncio.Event()

    async def first_turn(_: object) -> str:
        await go.wait()  # the mail below all arrives during this turn
        return "ok"

    worker = Script([first_turn], then="ok")
    rt = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    await until(lambda: len(worker.requests) == 1, "the first turn")

    # All three are in the inbox before the worker's next look at it (a look already under
    # way when the first arrived would see it alone: not what this test is about).
    box = home.mailbox(TEAM)
    box.send("worker", InboxMessage(sender="analyst", text="from a peer"))
    box.send("worker", InboxMessage(sender="team-lead", text="one last thing"))
    rt.request_shutdown("worker")
    go.set()
    await until(lambda: len(worker.requests) == 4, "three turns", within=10)
    texts = [r.last_user_text for r in worker.requests[1:]]
    assert "shutdown_request" in texts[0]
    assert "one last thing" in texts[1] and "from a peer" not in texts[1]
    assert "from a peer" in texts[2]
    await until(lambda: len(frames_in(home, TEAM, "team-lead", "idle_notification")) == 4, "idle")
    assert rt.status_of("worker") == "stopping"
    assert rt.approvals() == []


async def test_delegate_mode_leaves_the_lead_coordination_tools_only(tmp_path: Path) -> None:
    from app.core import Home
    from app.runtime.model.client import make_client
    from app.runtime.offline import ScriptedModel
    from app.runtime.team.runtime import TeamRuntime

    runtime = TeamRuntime(
        Home(tmp_path / "home"),
        client=make_client(handler=ScriptedModel([]), pace=0),
        cwd=tmp_path,
        lead_mode="delegate",
    )
    names = {t.name for t in runtime.lead_session.tools}
    assert names == {
        "TeamCreate",
        "TeamDelete",
        "Task",
        "SendMessage",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskUpdate",
    }
    assert "delegate mode" in runtime.lead_session.system_prompt
    # seed 000's delegate prompt names the team, once there is one
    runtime.team_created("alpha")
    assert 'delegate mode for team "alpha"' in runtime.lead_session.system_prompt


async def test_set_lead_mode_changes_tools_prompt_and_emits(tmp_path: Path) -> None:
    from app.runtime.events import ModeChanged
    from app.runtime.model.client import make_client
    from app.runtime.offline import ScriptedModel

    runtime = TeamRuntime(
        Home(tmp_path / "home"),
        client=make_client(handler=ScriptedModel([]), pace=0),
        cwd=tmp_path,
    )
    seen: list[object] = []
    runtime.subscribe(seen.append)
    runtime.set_lead_mode("delegate")
    assert {t.name for t in runtime.lead_session.tools} >= {"TeamCreate", "SendMessage"}
    assert "Bash" not in {t.name for t in runtime.lead_session.tools}
    assert "delegate mode" in runtime.lead_session.system_prompt
    runtime.set_lead_mode("acceptEdits")
    assert "Bash" in {t.name for t in runtime.lead_session.tools}
    assert [e for e in seen if isinstance(e, ModeChanged)] == [
        ModeChanged("team-lead", "delegate"),
        ModeChanged("team-lead", "acceptEdits"),
    ]
    with pytest.raises(ValueError, match="unknown permission mode"):
        runtime.set_lead_mode("yolo")

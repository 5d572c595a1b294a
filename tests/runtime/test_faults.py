"""Faults, injected through the same transport the SDK uses: overloaded and rate-limited
responses, a bad request, a stream cut in the middle of a tool call, a tool that raises, a
teammate that crashes or never answers a shutdown, a rejected plan, a denied permission and a
message to a teammate that is gone. Every one ends visibly; none hangs."""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from app.core import Home
from app.core.errors import NotFoundError, TeamdeckError
from app.runtime.agent.teammate import Teammate
from app.runtime.events import ErrorChanged
from app.runtime.offline import (
    ModelRequest,
    cut_stream,
    error,
    overloaded,
    rate_limited,
    reply,
    text,
    tool_use,
)
from app.runtime.team.runtime import TeamRuntime
from app.runtime.tools.base import Tool, ToolContext, ToolError, ToolResult
from tests.runtime.conftest import (
    Observer,
    Router,
    Script,
    call_tool,
    frames_in,
    inbox_of,
    member_of,
    result_json,
    settle,
    until,
)

TEAM = "alpha"


async def started(
    make_runtime: Callable[..., TeamRuntime], router: Router, team: bool = True, **options: Any
) -> tuple[TeamRuntime, Observer]:
    router.agents.setdefault("team-lead", Script(then="Noted."))
    rt = make_runtime(router, **options)
    observer = Observer(rt)
    await rt.start()
    if team:
        content, is_error = await call_tool(rt.lead_session, "TeamCreate", {"team_name": TEAM})
        assert not is_error, content
    return rt, observer


async def spawn(rt: TeamRuntime, name: str, **extra: Any) -> None:
    spec = {"name": name, "prompt": f"You are {name}.", **extra}
    content, is_error = await call_tool(rt.lead_session, "Task", spec)
    assert not is_error, content


# ====================================================================================== the model


async def test_overloaded_and_rate_limited_responses_are_retried(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    lead = Script(
        [overloaded(), reply(tool_use("TaskList", {})), rate_limited(), overloaded(), "Recovered."]
    )
    rt, observer = await started(make_runtime, Router(team_lead=lead))
    rt.submit("hello")
    await until(lambda: observer.outcomes, "the lead's turn")

    [outcome] = observer.outcomes
    assert (outcome.status, outcome.text, outcome.error) == ("end_turn", "Recovered.", None)
    assert len(lead.requests) == 5  # every attempt reached the server
    assert rt.lead_session.snapshot.model_calls == 2
    assert rt.lead_session.snapshot.error is None
    assert not [e for e in rt.transcript("team-lead") if e.kind == "error"]


async def test_retries_give_up_with_a_visible_error(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    lead = Script([overloaded("busy"), overloaded("busy"), overloaded("still busy")])
    rt, observer = await started(make_runtime, Router(team_lead=lead))
    rt.submit("hello")
    await until(lambda: observer.outcomes, "the lead's turn")
    [outcome] = observer.outcomes
    assert (outcome.status, outcome.error) == ("error", "API error 529: still busy")
    assert len(lead.requests) == 3
    assert rt.status_of("team-lead") == "idle"


async def test_a_bad_request_is_a_visible_error_and_not_retried(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    lead = Script([error(400, "invalid_request_error", "messages: something is off"), "Fine now."])
    rt, observer = await started(make_runtime, Router(team_lead=lead))
    rt.submit("hello")
    await until(lambda: observer.outcomes, "the lead's turn")

    assert len(lead.requests) == 1
    [outcome] = observer.outcomes
    assert outcome.status == "error"
    assert outcome.error == "API error 400: messages: something is off"
    assert rt.lead_session.snapshot.error == outcome.error
    assert rt.transcript("team-lead")[-1].kind == "error"
    assert rt.transcript("team-lead")[-1].text == outcome.error
    assert rt.status_of("team-lead") == "idle"

    rt.submit("try again")
    await until(lambda: len(observer.outcomes) == 2, "the next turn")
    assert observer.outcomes[1].status == "end_turn"
    assert rt.lead_session.snapshot.error is None
    # the panel learns of both changes through events
    assert observer.of(ErrorChanged) == [
        ErrorChanged("team-lead", outcome.error),
        ErrorChanged("team-lead", None),
    ]


async def test_a_teammates_model_error_reaches_the_lead_as_a_failed_idle(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    worker = Script([error(400, "invalid_request_error", "bad tool schema"), "Working again."])
    rt, _ = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    [idle] = await until(lambda: frames_in(home, TEAM, "team-lead", "idle_notification"), "idle")
    assert idle["idleReason"] == "failed"
    assert idle["failureReason"] == "API error 400: bad tool schema"
    # the teammate is still alive and can be given more work (it shows idle once the
    # notification is written, which happens off the event loop)
    await until(lambda: rt.status_of("worker") == "idle", "idle after the notification")
    rt.inject_message("worker", "try again")
    await until(lambda: len(frames_in(home, TEAM, "team-lead", "idle_notification")) == 2, "2nd")
    assert frames_in(home, TEAM, "team-lead", "idle_notification")[1]["idleReason"] == "available"


@pytest.fixture(autouse=True)
def _fast_stream_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("app.runtime.agent.response.RETRY_BACKOFF", 0.01)


def no_dangling_tool_use(request: ModelRequest) -> None:
    """Every tool_use in the request has its result (the transport would answer 400)."""
    messages = request.messages
    for index, message in enumerate(messages):
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        ids = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
        after = messages[index + 1]["content"] if index + 1 < len(messages) else []
        answered = {b.get("tool_use_id") for b in after if isinstance(b, dict)}
        assert ids <= answered, f"tool_use without tool_result: {ids - answered}"


async def test_a_stream_cut_mid_tool_call_is_retried(
    make_runtime: Callable[..., TeamRuntime], project: Path
) -> None:
    target = project / "half.txt"
    call = tool_use("Write", {"file_path": str(target), "content": "x" * 200})
    cut = cut_stream(text("Writing the file."), call)

    def whole_again(request: ModelRequest) -> Any:
        no_dangling_tool_use(request)
        return reply(text("Writing the file."), call)

    lead = Script([cut, whole_again, "Written."])
    rt, observer = await started(
        make_runtime, Router(team_lead=lead), team=False, lead_mode="acceptEdits"
    )
    rt.submit("write half.txt")
    await until(lambda: observer.outcomes, "the turn")

    [outcome] = observer.outcomes
    assert (outcome.status, outcome.error) == ("end_turn", None)
    assert len(lead.requests) == 3  # the cut response was replayed once, then the tool ran
    assert target.read_text() == "x" * 200  # exactly once: nothing of the cut response ran
    notices = [e.text for e in rt.transcript("team-lead") if e.kind == "notice"]
    assert any("dropped mid-response" in n and "retrying" in n for n in notices)
    assert rt.snapshot()[0].tool_calls == 1


async def test_a_stream_that_keeps_breaking_ends_the_turn_with_one_line(
    make_runtime: Callable[..., TeamRuntime], project: Path
) -> None:
    target = project / "half.txt"
    call = tool_use("Write", {"file_path": str(target), "content": "x" * 200})
    cuts = [cut_stream(text("Writing the file."), call) for _ in range(3)]

    def valid_again(request: ModelRequest) -> Any:
        no_dangling_tool_use(request)
        return reply(text("Recovered."))

    lead = Script([*cuts, valid_again])
    rt, observer = await started(
        make_runtime, Router(team_lead=lead), team=False, lead_mode="acceptEdits"
    )
    rt.submit("write half.txt")
    await until(lambda: observer.outcomes, "the broken turn")

    [outcome] = observer.outcomes
    assert outcome.status == "error"
    assert outcome.error is not None and "\n" not in outcome.error
    assert "peer closed connection" in outcome.error and "after 3 attempts" in outcome.error
    assert len(lead.requests) == 3
    assert not target.exists()
    assert not [e for e in rt.transcript("team-lead") if e.kind == "tool_call"]
    assert rt.lead_session.messages[-1]["role"] == "user"
    # the broken streams' tokens are counted
    lead_usage = rt.snapshot()[0]
    assert lead_usage.model_calls == 3 and lead_usage.tool_calls == 0

    rt.submit("try again")
    await until(lambda: len(observer.outcomes) == 2, "the next turn")
    assert (observer.outcomes[1].status, observer.outcomes[1].text) == ("end_turn", "Recovered.")


async def test_an_error_event_mid_stream_is_retried(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    lead = Script(
        [cut_stream(text("Thinking about it " * 5), error=overloaded("Overloaded")), "Done."]
    )
    rt, observer = await started(make_runtime, Router(team_lead=lead), team=False)
    rt.submit("hello")
    await until(lambda: observer.outcomes, "the turn")
    [outcome] = observer.outcomes
    assert (outcome.status, outcome.text) == ("end_turn", "Done.")


async def test_a_mid_stream_error_that_persists_names_the_error_type(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    lead = Script(
        [cut_stream(text("Thinking " * 5), error=overloaded("Overloaded")) for _ in range(3)]
    )
    rt, observer = await started(make_runtime, Router(team_lead=lead), team=False)
    rt.submit("hello")
    await until(lambda: observer.outcomes, "the turn")
    [outcome] = observer.outcomes
    assert outcome.status == "error"
    assert outcome.error == (
        "API error mid-response (overloaded_error): Overloaded (after 3 attempts)"
    )
    assert "200" not in outcome.error


# ====================================================================================== tools


class Boom(Tool):
    name: ClassVar[str] = "Boom"
    description: ClassVar[str] = "Always fails."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    coordination: ClassVar[bool] = True

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "shown"),
    [
        (RuntimeError("kaput"), "Boom failed: RuntimeError: kaput"),
        (ToolError("expected failure"), "expected failure"),
    ],
)
async def test_a_tool_that_raises_becomes_an_error_result_and_the_turn_goes_on(
    make_runtime: Callable[..., TeamRuntime], exc: Exception, shown: str
) -> None:
    lead = Script(
        [reply(text("Trying."), tool_use("Boom", {}), tool_use("Nope", {})), "Handled it."]
    )
    rt, observer = await started(make_runtime, Router(team_lead=lead), team=False)
    rt.lead_session.tools = [*rt.lead_session.tools, Boom(exc)]
    rt.submit("use the tool")
    await until(lambda: observer.outcomes, "the turn")

    [outcome] = observer.outcomes
    assert (outcome.status, outcome.text) == ("end_turn", "Trying.\nHandled it.")
    results = lead.requests[1].tool_results
    assert [(r.content, r.is_error) for r in results] == [
        (shown, True),
        ("No such tool: Nope", True),
    ]
    entries = [e for e in rt.transcript("team-lead") if e.kind == "tool_result"]
    assert [e.data["is_error"] for e in entries] == [True, True]


async def test_a_tool_failing_the_same_way_three_times_ends_the_turn(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    lead = Script([reply(tool_use("Boom", {"try": n})) for n in range(6)], then="Never.")
    rt, observer = await started(make_runtime, Router(team_lead=lead), team=False)
    rt.lead_session.tools = [*rt.lead_session.tools, Boom(ToolError("the same failure"))]
    rt.submit("use the tool")
    await until(lambda: observer.outcomes, "the turn")

    [outcome] = observer.outcomes
    assert outcome.status == "error"
    assert outcome.error == "Boom failed the same way 3 times in a row: the same failure"
    assert len(lead.requests) == 3
    last = rt.lead_session.messages[-1]  # every tool_use kept its tool_result
    assert last["role"] == "user" and last["content"][-1]["type"] == "tool_result"


async def test_a_different_failure_or_a_success_restarts_the_count(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    steps = [
        reply(tool_use("Boom", {})),
        reply(tool_use("Boom", {})),
        reply(tool_use("Nope", {})),
        reply(tool_use("Boom", {})),
        reply(tool_use("Boom", {})),
        reply(tool_use("TaskList", {})),
        reply(tool_use("Boom", {})),
        reply(tool_use("Boom", {})),
        "Gave up.",
    ]
    lead = Script(steps)
    rt, observer = await started(make_runtime, Router(team_lead=lead))
    rt.lead_session.tools = [*rt.lead_session.tools, Boom(ToolError("the same failure"))]
    rt.submit("use the tool")
    await until(lambda: observer.outcomes, "the turn")

    [outcome] = observer.outcomes
    assert (outcome.status, outcome.text) == ("end_turn", "Gave up.")


async def test_a_full_disk_stops_team_create_in_one_line_and_leaves_nothing(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lead retried TeamCreate 100 times on a full disk, leaving a folder per try."""
    lead = Script(
        [reply(tool_use("TeamCreate", {"team_name": f"team{n}"})) for n in range(10)],
        then="Never.",
    )
    rt, observer = await started(make_runtime, Router(team_lead=lead), team=False)

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("app.core.files._datasync", disk_full)
    rt.submit("make a team")
    await until(lambda: observer.outcomes, "the turn")

    [outcome] = observer.outcomes
    assert outcome.status == "error" and outcome.error is not None
    assert "\n" not in outcome.error
    assert "failed the same way 3 times in a row: No space left on device: " in outcome.error
    assert str(home.layout.teams_dir) in outcome.error and "config.json" in outcome.error
    assert len(lead.requests) == 3  # three paid calls, not a hundred
    assert not any(home.layout.teams_dir.glob("team*"))  # (its .create.lock stays, as ever)
    assert not any(home.layout.tasks_dir.glob("team*"))
    first = lead.requests[1].tool_results[0]
    assert first.is_error and first.content.startswith("No space left on device: ")


async def test_a_teammate_that_crashes(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Teammate._poll

    async def poll(self: Teammate) -> Any:
        if self.name == "worker":
            raise RuntimeError("poll exploded")
        return await original(self)

    monkeypatch.setattr(Teammate, "_poll", poll)
    router = Router(worker=Script(then="ok"), steady=Script(then="ok"))
    rt, observer = await started(make_runtime, router)
    tasks = home.tasks(TEAM)
    tasks.create("Crashy job")
    tasks.update("1", owner="worker", status="in_progress")
    await spawn(rt, "steady")
    await spawn(rt, "worker")

    await until(lambda: rt.status_of("worker") == "failed", "the crash")
    snapshot = rt.departed["worker"]
    assert snapshot.error == "RuntimeError: poll exploded"
    assert rt.transcript("worker")[-1].kind == "error"
    assert member_of(home, TEAM, "worker") is None
    # its task went back to the pool (where the idle teammate may pick it up)
    task = tasks.get("1")
    assert task is not None and task.owner != "worker"
    assert (task.status, task.owner) in (("pending", None), ("in_progress", "steady"))
    [note] = [
        m for m in inbox_of(home, TEAM, "team-lead") if m.get("summary") == "worker left the team"
    ]
    assert note["from"] == "worker"
    assert note["text"].startswith('Teammate "worker" failed: RuntimeError: poll exploded.')
    assert '#1 "Crashy job"' in note["text"]
    # the lead is told (a real message wakes it) and the other teammate is unaffected
    await until(lambda: observer.outcomes, "the lead's turn")
    assert "poll exploded" in router.requests["team-lead"][0].last_user_text
    await until(lambda: rt.status_of("steady") == "idle", "steady idle")
    assert member_of(home, TEAM, "steady") is not None


async def test_a_crash_inside_the_turn_fails_the_teammate(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(self: Teammate, outcome: Any) -> None:
        raise ValueError("idle bookkeeping broke")

    monkeypatch.setattr(Teammate, "_go_idle", explode)
    rt, _ = await started(make_runtime, Router(worker=Script(then="ok")))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "failed", "the crash")
    assert rt.departed["worker"].error == "ValueError: idle bookkeeping broke"
    assert member_of(home, TEAM, "worker") is None


async def test_a_teammate_that_never_answers_a_shutdown_is_killed(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    worker = Script(then="I would rather keep going.")
    rt, observer = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "idle")

    rt.request_shutdown("worker", "we are done")
    await until(
        lambda: len(frames_in(home, TEAM, "team-lead", "idle_notification")) == 2, "its turn"
    )
    assert rt.status_of("worker") == "stopping"  # the request is still pending
    assert '"type":"shutdown_request"' in worker.requests[1].last_user_text
    assert rt.approvals() == []  # a shutdown is the teammate's to answer, not the person's
    assert member_of(home, TEAM, "worker") is not None
    content, is_error = await call_tool(rt.lead_session, "TeamDelete", {})
    assert is_error and result_json(content)["success"] is False

    rt.kill("worker")
    assert rt.status_of("worker") == "killed"
    assert rt.approvals() == []
    assert frames_in(home, TEAM, "team-lead", "shutdown_approved") == []
    content, is_error = await call_tool(rt.lead_session, "TeamDelete", {})
    assert not is_error and result_json(content)["success"] is True
    await settle()
    assert len(worker.requests) == 2


# ====================================================================================== approvals


async def test_a_plan_rejected_then_approved_with_the_offline_team(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """The full offline team, with the person deciding plans: the first plan is rejected with
    feedback, the revised plan addresses it and is approved, and the run completes."""
    rt = make_runtime(Router(), decider="person", headless=True)
    observer = Observer(rt)
    await rt.start()
    rt.submit("Describe the python files in this project")

    [first] = await until(rt.approvals, "the first plan")
    assert first.kind == "plan" and first.agent == "writer"
    assert "Address the feedback" not in first.body
    rt.reject_plan(first.request_id, "Also mention the classes.")
    [second] = await until(rt.approvals, "the revised plan")
    assert "4. Address the feedback: Also mention the classes." in second.body
    rt.approve_plan(second.request_id)
    await until(lambda: any("Final report" in o.text for o in observer.outcomes), "the end")
    # The summary says how the person's feedback was taken (issue 30: it ignored it), and
    # the plan counts no more files than were found ("up to 6 of the 3 matching files").
    report = next(o.text for o in observer.outcomes if "Final report" in o.text)
    assert "feedback was taken into account: Also mention the classes." in report
    assert re.search(r"up to \d+ of the \d+ matching files", first.body) is None

    plans = observer.messages("plan_approval_response", recipient="writer")
    answers = [json.loads(m.text) for m in plans]
    assert [(a["approved"], a.get("feedback")) for a in answers] == [
        (False, "Also mention the classes."),
        (True, None),
    ]
    assert rt.departed["writer"].status == "completed"
    assert rt.team is None


async def test_a_permission_denied_by_the_lead_model(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path
) -> None:
    def deny(request: ModelRequest) -> Any:
        prompt = request.last_user_text
        body = prompt.split(">\n", 1)[1].rsplit("\n</teammate_message>", 1)[0]
        frame = json.loads(body)
        assert frame["type"] == "permission_request" and frame["tool_name"] == "Bash"
        return reply(
            tool_use(
                "SendMessage",
                {
                    "type": "permission_response",
                    "request_id": frame["request_id"],
                    "approve": False,
                    "recipient": "worker",
                    "content": "no shell commands today",
                },
            )
        )

    worker = Script([reply(tool_use("Bash", {"command": "touch made.txt"})), "Denied, fine."])
    lead = Script([deny, "Answered."])
    rt, _ = await started(make_runtime, Router(worker=worker, team_lead=lead), decider="lead")
    await spawn(rt, "worker")
    await until(lambda: not worker.steps and rt.status_of("worker") == "idle", "the worker's turn")

    [result] = worker.requests[1].tool_results
    assert (result.content, result.is_error) == (
        "Permission denied: no shell commands today",
        True,
    )
    assert not (project / "made.txt").exists()
    [response] = frames_in(home, TEAM, "worker", "permission_response")
    assert (response["subtype"], response["error"]) == ("error", "no shell commands today")
    assert rt.approvals() == []


async def test_a_permission_denied_by_the_person(
    make_runtime: Callable[..., TeamRuntime], project: Path
) -> None:
    worker = Script([reply(tool_use("Bash", {"command": "touch made.txt"})), "OK."])
    rt, _ = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    [approval] = await until(rt.approvals, "the permission request")
    assert approval.body == json.dumps({"command": "touch made.txt"}, indent=2)
    assert approval.suggestion == "Bash(touch:*)"
    rt.answer_permission(approval.request_id, False)
    await until(lambda: not worker.steps, "the worker's next call")
    [result] = worker.requests[1].tool_results
    assert result.is_error and result.content.startswith("Permission denied")
    assert not (project / "made.txt").exists()


# ====================================================================================== departed


async def test_a_message_to_a_dead_teammate(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    router = Router(worker=Script(then="ok"), other=Script(then="ok"))
    rt, _ = await started(make_runtime, router)
    await spawn(rt, "worker")
    await spawn(rt, "other")
    await until(lambda: rt.status_of("worker") == "idle", "idle")
    rt.kill("worker")
    before = (
        home.layout.inbox_path(TEAM, "worker").read_bytes()
        if (home.layout.inbox_path(TEAM, "worker").exists())
        else None
    )

    message = {"type": "message", "recipient": "worker", "content": "are you there?"}
    content, is_error = await call_tool(rt.lead_session, "SendMessage", message)
    assert is_error and "not a member" in content
    content, is_error = await call_tool(rt.teammates["other"].session, "SendMessage", message)
    assert is_error and "not a member" in content
    content, is_error = await call_tool(
        rt.lead_session, "SendMessage", {"type": "shutdown_request", "recipient": "worker"}
    )
    assert is_error
    after = (
        home.layout.inbox_path(TEAM, "worker").read_bytes()
        if (home.layout.inbox_path(TEAM, "worker").exists())
        else None
    )
    assert after == before
    with pytest.raises(NotFoundError):
        rt.inject_message("worker", "hello?")
    with pytest.raises(TeamdeckError):
        rt.request_shutdown("worker")
    with pytest.raises(NotFoundError):
        rt.interrupt("worker")
    assert rt.status_of("worker") == "killed"


async def test_a_turn_that_hits_the_model_call_cap_shows_why_and_wakes_the_lead(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 10: a teammate stuck calling tools ends its turn as failed, with the reason in
    its panel, and the lead is woken by the failure (not left waiting on a silent idle)."""
    monkeypatch.setattr("app.runtime.agent.loop.MAX_ROUNDS", 3)
    worker = Script([reply(tool_use("Glob", {"pattern": "*.py"}))] * 3, then="ok")
    lead = Script(then="Noted.")
    rt, _ = await started(make_runtime, Router(worker=worker, team_lead=lead))
    await spawn(rt, "worker")
    await until(lambda: rt.status_of("worker") == "idle", "idle after the capped turn")
    snap = next(s for s in rt.snapshot() if s.name == "worker")
    assert snap.error == "stopped after 3 model calls in one turn"
    [idle] = frames_in(home, TEAM, "team-lead", "idle_notification")
    assert idle["idleReason"] == "failed" and "3 model calls" in idle["failureReason"]
    await until(lambda: any("3 model calls" in r.last_user_text for r in lead.requests), "lead")


async def test_an_empty_prompt_is_not_sent(make_runtime: Callable[..., TeamRuntime]) -> None:
    lead = Script(["Hi."])
    rt, observer = await started(make_runtime, Router(team_lead=lead), team=False)
    rt.submit("   ")
    await until(lambda: observer.outcomes, "the empty turn")
    assert (observer.outcomes[0].status, lead.requests) == ("end_turn", [])
    rt.submit("hello")
    await until(lambda: len(observer.outcomes) == 2, "the real turn")
    assert observer.outcomes[1].text == "Hi."


async def test_a_refusal_keeps_messages_delivered_during_the_refused_turn(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    from app.core import InboxMessage

    def list_tasks(request: ModelRequest) -> Any:
        # a teammate's message lands while the lead's tool runs: delivered with its result
        home.mailbox(TEAM).send(
            "team-lead", InboxMessage(sender="worker", text="Found the bug.", summary="bug")
        )
        return reply(tool_use("TaskList", {}))

    def clean(request: ModelRequest) -> Any:
        said = json.dumps(request.messages)
        assert "refused prompt" not in said and "Found the bug." in said
        return reply(text("Noted the bug."))

    lead = Script([list_tasks, reply(text("Sure"), stop_reason="refusal"), clean])
    rt, observer = await started(make_runtime, Router(team_lead=lead))
    rt.submit("refused prompt")
    await until(lambda: observer.outcomes, "the refused turn")
    assert observer.outcomes[0].status == "error"
    assert "refused" in (observer.outcomes[0].error or "")
    assert "Found the bug." in json.dumps(lead.requests[1].messages)  # delivered to that turn
    rt.submit("next")
    await until(lambda: len(observer.outcomes) == 2, "the next turn")
    assert observer.outcomes[1].text == "Noted the bug."

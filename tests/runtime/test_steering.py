"""Typed steering over a real TeamRuntime: each call returns an Outcome in words (never a request
id), stale requests are reported as settled, errors become failed outcomes, and a viewer's
steering refuses everything."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable

from app.core import Home
from app.runtime.api import Answer, AnswerStatus, Approval
from app.runtime.events import TeammateModeChanged
from app.runtime.steering import READ_ONLY, Outcome, ReadOnlySteering, RuntimeSteering
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import call_tool, frames_in, no_spawn, result_json, until
from tests.runtime.test_runtime_api import TEAM, create_team, spawn

REQUEST_ID = re.compile(r"\w+-\d{10,}@")


def in_words(outcome: Outcome) -> Outcome:
    assert "\n" not in outcome.message and not REQUEST_ID.search(outcome.message), outcome
    return outcome


async def planning_writer(make_runtime: Callable[..., TeamRuntime]) -> tuple[TeamRuntime, Approval]:
    rt = make_runtime(spawner=no_spawn)
    await rt.start()  # requests reach the queue through the watcher
    await create_team(rt)
    await spawn(rt, "writer", mode="plan")
    content, is_error = await call_tool(
        rt.teammates["writer"].session, "ExitPlanMode", {"plan": "p"}
    )
    assert not is_error, content
    [approval] = await until(rt.approvals, "the plan request")
    assert approval.request_id == result_json(content)["request_id"]
    return rt, approval


async def test_approve_a_plan_then_again(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    rt, plan = await planning_writer(make_runtime)
    steering = RuntimeSteering(rt)
    assert in_words(steering.approve(plan)) == Outcome(True, "writer's plan approved", settled=True)
    assert [f["approved"] for f in frames_in(home, TEAM, "writer", "plan_approval_response")] == [
        True
    ]
    again = in_words(steering.reject(plan, "too late"))
    assert (again.ok, again.settled, again.failed) == (False, True, False)
    assert again.message == "writer's plan was already resolved (approved)"
    assert rt.approvals() == []


async def test_reject_a_plan_with_feedback(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    rt, plan = await planning_writer(make_runtime)
    outcome = in_words(RuntimeSteering(rt).reject(plan, "add tests"))
    assert outcome == Outcome(True, "writer's plan rejected", settled=True)
    [frame] = frames_in(home, TEAM, "writer", "plan_approval_response")
    assert (frame["approved"], frame["feedback"]) == (False, "add tests")


async def test_shutdown_kill_and_errors_in_words(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    rt, plan = await planning_writer(make_runtime)
    steering = RuntimeSteering(rt)
    assert in_words(steering.shutdown("writer")) == Outcome(True, "shutdown requested from writer")
    assert len(frames_in(home, TEAM, "writer", "shutdown_request")) == 1
    as_permission = Approval(plan.request_id, "permission", "writer", "t", tool_name="Bash")
    mismatch = in_words(steering.allow(as_permission))
    assert (
        not mismatch.ok and not mismatch.settled and "not a permission request" in mismatch.message
    )
    assert in_words(steering.kill("writer")) == Outcome(True, "killed writer")
    assert rt.status_of("writer") == "killed"
    unknown = in_words(steering.kill("nobody"))
    assert (unknown.ok, unknown.failed) == (False, True)
    assert unknown.message.startswith("kill nobody: ")
    gone = in_words(steering.approve(Approval("plan_approval-1767225630000@x", "plan", "x", "t")))
    assert gone == Outcome(False, "x's plan is no longer pending", settled=True)


async def test_an_answer_that_cannot_be_delivered_is_a_failure(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    rt, plan = await planning_writer(make_runtime)
    shutil.rmtree(home.layout.team_dir(TEAM) / "inboxes")
    (home.layout.team_dir(TEAM) / "inboxes").write_text("not a folder")  # appends fail
    outcome = in_words(RuntimeSteering(rt).approve(plan))
    assert (outcome.ok, outcome.failed, outcome.settled) == (False, True, True)
    assert outcome.message.startswith("writer's plan approved, but answer to writer not delivered")


async def test_send_reaches_the_lead_or_a_teammate(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    rt, _ = await planning_writer(make_runtime)
    steering = RuntimeSteering(rt)
    assert steering.send("writer", "use the new API") == Outcome(True, "message sent to writer")
    assert rt.transcript("writer")[-1].text == "use the new API"
    assert steering.send("team-lead", "status?").ok


async def test_a_viewer_refuses_everything() -> None:
    steering = ReadOnlySteering()
    approval = Approval("plan_approval-1@w", "plan", "w", "t")
    refused = Outcome(False, READ_ONLY)
    assert steering.read_only
    assert steering.approve(approval) == refused
    assert steering.deny(approval, "no") == refused
    assert steering.kill("w") == refused
    assert steering.send("team-lead", "hi") == refused
    assert await steering.spawn("w", "go") == refused


def test_always_allow_keeps_what_the_runtime_says_of_the_rule() -> None:
    class Runtime:
        def answer_permission(self, request_id: str, allow: bool, always: bool = False) -> Answer:
            rule = "rule Bash(git:*) not kept: settings file is read-only"
            text = f"Permission allowed for researcher ({rule})" if always else "allowed"
            note = rule if always else ""
            return Answer(AnswerStatus.DONE, text, "researcher", request_id, note=note)

    request = Approval("perm-1@researcher", "permission", "researcher", "t", tool_name="Bash")
    steering = RuntimeSteering(Runtime())  # type: ignore[arg-type]
    assert steering.allow(request) == Outcome(
        True, "researcher's Bash request allowed", settled=True
    )
    assert steering.allow(request, always=True).message == (
        "researcher's Bash request always allowed"
        " (rule Bash(git:*) not kept: settings file is read-only)"
    )


async def test_the_teammates_mode_changes_through_steering_with_an_event(
    make_runtime: Callable[..., TeamRuntime],
) -> None:
    rt = make_runtime(spawner=no_spawn)
    seen: list[object] = []
    rt.subscribe(seen.append)
    steering = RuntimeSteering(rt)
    outcome = in_words(steering.set_teammate_permission_mode("acceptEdits"))
    assert outcome.ok and "acceptEdits" in outcome.message
    assert rt.teammate_mode == "acceptEdits"
    assert seen == [TeammateModeChanged("acceptEdits")]
    await create_team(rt)
    await spawn(rt, "writer")
    assert rt.teammates["writer"].session.mode == "acceptEdits"  # spawned from now on
    bad = in_words(steering.set_teammate_permission_mode("yolo"))
    assert (bad.ok, bad.failed) == (False, True) and "unknown permission mode" in bad.message
    assert rt.teammate_mode == "acceptEdits"
    assert steering.set_teammate_permission_mode("acceptEdits").ok  # unchanged: no event
    assert [e for e in seen if isinstance(e, TeammateModeChanged)] == [
        TeammateModeChanged("acceptEdits")
    ]

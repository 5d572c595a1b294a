"""The runtime against the seeds, to the letter: each test names the seed section it follows.

Seed 000: the implementation blueprint (SendMessage routing, config helpers, permission modes);
seed 001: the long reference (§7 permission modes, §8 plan mode, §12 UI status strings);
seed 002: the teammate runtime (the main loop, the message poll's priority order)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from app.core import Home, InboxMessage, authority
from app.core.protocol import plan_approval_response, shutdown_request
from app.core.teams import Teams
from app.runtime.agent import teammate as teammate_module
from app.runtime.offline import ModelRequest, reply, text, tool_use
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import (
    Router,
    Script,
    call_tool,
    config_of,
    inbox_of,
    member_of,
    no_spawn,
    result_json,
    until,
)
from tests.runtime.test_runtime_api import TEAM, create_team, spawn, started


def gate() -> tuple[asyncio.Event, Callable[[ModelRequest], Any]]:
    """A model step that answers only once the event is set (the agent is mid-turn till then)."""
    opened = asyncio.Event()

    async def step(request: ModelRequest) -> Any:
        await opened.wait()
        return reply(text("Done."))

    return opened, step


def is_active(home: Home, name: str) -> bool | None:
    member = member_of(home, TEAM, name)
    assert member is not None, name
    return member.get("isActive")  # type: ignore[no-any-return]


# ================================================================== permission modes (seed 000/001)


async def test_the_task_tools_bypass_mode_needs_the_persons_consent(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 000 §"Permission modes": bypassPermissions "Bypass all permission checks (requires
    flag)". A lead model asking for it in a Task call is refused (one line, nothing written)
    unless the person allowed bypass for the run."""
    rt = make_runtime(spawner=no_spawn)
    await create_team(rt)
    spec = {"name": "prober", "prompt": "Look around.", "mode": "bypassPermissions"}
    content, is_error = await call_tool(rt.lead_session, "Task", spec)
    assert is_error and "\n" not in content
    assert "bypassPermissions" in content and "--dangerously-skip-permissions" in content
    assert member_of(home, TEAM, "prober") is None and rt.runners == {}
    assert not home.layout.inbox_path(TEAM, "prober").exists()
    with pytest.raises(ValueError, match="not allowed for this run"):
        rt.set_lead_mode("bypassPermissions")
    assert rt.lead_session.mode == "default"

    rt.allow_bypass = True  # what --dangerously-skip-permissions or the confirmation gives
    content, is_error = await call_tool(rt.lead_session, "Task", spec)
    assert not is_error, content
    assert member_of(home, TEAM, "prober")["mode"] == "bypassPermissions"  # type: ignore[index]
    rt.set_lead_mode("bypassPermissions")
    assert rt.lead_session.mode == "bypassPermissions"


async def test_a_run_started_in_bypass_allows_it(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 001 §7 ("--permission-mode bypassPermissions"): a run the person started in bypass
    (lead or teammates) has it allowed; a run started in another mode does not."""
    assert make_runtime(spawner=no_spawn, teammate_mode="bypassPermissions").allow_bypass
    assert make_runtime(spawner=no_spawn, lead_mode="bypassPermissions").allow_bypass
    assert not make_runtime(spawner=no_spawn, lead_mode="acceptEdits").allow_bypass
    assert not make_runtime(spawner=no_spawn, lead_mode="bypassPermissions", allow_bypass=False)\
        .allow_bypass  # fmt: skip


@pytest.mark.parametrize("value", ["true", None])
async def test_claude_code_plan_mode_required_puts_every_teammate_in_plan_mode(
    make_runtime: Callable[..., TeamRuntime],
    home: Home,
    monkeypatch: pytest.MonkeyPatch,
    value: str | None,
) -> None:
    """Seed 001 §7 ("export CLAUDE_CODE_PLAN_MODE_REQUIRED=true  # Force plan mode for all
    agents") and §8 (``isPlanModeRequired()`` falls back to the variable; a teammate's mode is
    ``isTeammate() && isPlanModeRequired() ? "plan" : "default"``): the lead is not affected."""
    if value is None:
        monkeypatch.delenv("CLAUDE_CODE_PLAN_MODE_REQUIRED", raising=False)
    else:
        monkeypatch.setenv("CLAUDE_CODE_PLAN_MODE_REQUIRED", value)
    rt = make_runtime(spawner=no_spawn)
    await create_team(rt)
    data = await spawn(rt, "writer")
    member = member_of(home, TEAM, "writer")
    assert member is not None
    required = value == "true"
    assert data["plan_mode_required"] is required
    assert member["planModeRequired"] is required
    assert member["mode"] == ("plan" if required else "default")
    assert rt.lead_session.mode == "default"


# ================================================================== the poll (seed 002)


async def test_a_shutdown_request_is_found_behind_other_unread_mail(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 002 §"Message Polling" 2a: shutdown requests are looked for across the whole unread
    inbox before anything else, even behind an answer to the teammate's own plan; then 2b, one
    message per turn."""
    rt = make_runtime(spawner=no_spawn)
    await create_team(rt)
    await spawn(rt, "writer", mode="plan")
    writer = rt.teammates["writer"]
    content, is_error = await call_tool(writer.session, "ExitPlanMode", {"plan": "1. write"})
    assert not is_error, content
    plan_id = result_json(content)["request_id"]

    box = home.mailbox(TEAM)
    # The person's answer, as the runtime hands it to an in-process teammate (signed, never
    # read from message text), then the lead's signed shutdown request in the inbox.
    approved = plan_approval_response(plan_id, True, permission_mode="default")
    assert writer.answers.give(approved, authority.PERSON)
    stop = shutdown_request("shutdown-1@writer", "team-lead", "wrap up").to_text()
    signed = authority.sign_text(rt.team_key, stop, to="writer", origin=authority.LEAD)
    box.send("writer", InboxMessage(sender="team-lead", text=signed))

    first = await writer._poll()
    assert isinstance(first, str) and "shutdown-1@writer" in first
    assert writer.session.status == "stopping"
    assert writer.session.pending_plan_request == plan_id  # the plan answer waits its turn
    assert [m["read"] for m in inbox_of(home, TEAM, "writer")] == [True]

    second = await writer._poll()
    assert isinstance(second, str) and "Your plan was approved" in second
    assert writer.session.pending_plan_request is None
    assert await writer._poll() is None  # nothing left: one message per turn, none batched


async def test_stopping_outranks_awaiting_approval_while_a_permission_answer_is_awaited(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 001 §12's UI status strings: ``shutdownRequested ? "stopping" : awaitingPlanApproval
    ? "awaiting approval" : ...``. A teammate waiting for a permission answer reads only that
    answer; a shutdown request arriving meanwhile still shows "stopping" at once, stays unread,
    and is the teammate's next prompt once its turn ends (seed 002 §2a)."""
    worker = Script([reply(tool_use("Bash", {"command": "echo hi"})), "Ran it.", "Understood."])
    rt = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    [request] = await until(rt.approvals, "the permission request")
    assert rt.status_of("worker") == "awaiting approval"

    # The lead's own shutdown request (the person's, through the dashboard, also answers the
    # waiting permission "no" at once: tests/runtime/test_shutdown_while_waiting.py).
    _, shutdown_id = rt.require_channel().request_shutdown("worker", "wrap up")
    await until(lambda: rt.status_of("worker") == "stopping", "stopping")
    unread = [m for m in inbox_of(home, TEAM, "worker") if not m["read"]]
    assert len(unread) == 1 and shutdown_id in unread[0]["text"]  # left for after the turn

    rt.answer_permission(request.request_id, True)
    await until(lambda: len(worker.requests) == 3, "the turn, then the shutdown request")
    assert shutdown_id in worker.requests[2].last_user_text
    assert worker.requests[1].tool_results[0].is_error is False
    await until(lambda: rt.status_of("worker") == "stopping", "still stopping, now idle")


# ================================================================== isActive (seed 000)


async def test_is_active_follows_each_teammate_between_turns(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 000's config helper ``setMemberActive(team, name, isActive)`` (``isActive?: boolean;
    // Active vs idle``): true while the teammate works, false when it goes idle."""
    opened, step = gate()
    later, step2 = gate()
    worker = Script([step, step2])
    rt = await started(make_runtime, Router(worker=worker))
    await spawn(rt, "worker")
    await until(lambda: len(worker.requests) == 1, "the first turn")
    # Written off the loop in the worker's order: it may land just after the request went out.
    await until(lambda: is_active(home, "worker") is True, "isActive true while working")
    opened.set()
    await until(lambda: is_active(home, "worker") is False, "isActive false once idle")
    assert rt.status_of("worker") == "idle"

    rt.inject_message("worker", "one more thing")
    await until(lambda: len(worker.requests) == 2, "the second turn")
    await until(lambda: is_active(home, "worker") is True, "isActive true again")
    later.set()
    await until(lambda: is_active(home, "worker") is False, "idle again")


async def test_a_teammate_that_claims_its_next_task_at_once_stays_active_on_disk(
    make_runtime: Callable[..., TeamRuntime], home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between two tasks a teammate is idle for a moment: ``isActive: false`` is written only
    if it stays idle (``IDLE_WRITE_DELAY``), so working through a list rewrites the config
    once at the start and once at the end -- not twice per task."""
    monkeypatch.setattr(teammate_module, "IDLE_WRITE_DELAY", 1.0)  # a loaded machine's claim
    written: list[bool] = []
    original = Teams.update_members

    def recording(self: Teams, team: str, members: dict[str, dict[str, Any]]) -> bool:
        fields = members.get("worker", {})
        if "is_active" in fields:
            written.append(fields["is_active"])
        return original(self, team, members)

    monkeypatch.setattr(Teams, "update_members", recording)
    rt = await started(make_runtime, Router())  # the worker: the offline model
    tasks = home.tasks(TEAM)
    for n in range(3):
        tasks.create(f"Inventory {n}", "inventory the **/*.py files")
    await spawn(rt, "worker")
    done = lambda: all(t.status == "completed" for t in tasks.list())  # noqa: E731
    await until(done, "the three tasks completed")
    await until(lambda: is_active(home, "worker") is False, "isActive false once idle")
    # Once active, once idle at the end. A claim slower than the idle delay (a loaded machine)
    # may queue a false that the next true replaces in the same batch: one write more, of
    # the value already on disk -- never a rewrite per task.
    assert [v for i, v in enumerate(written) if i == 0 or v != written[i - 1]] == [True, False]
    assert len(written) <= 3, written
    assert rt.status_of("worker") == "idle"


async def test_the_leads_own_entry_keeps_is_active_current(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 000 ``setMemberActive`` for every member, the lead included. Seed 000's TeamCreate
    writes the lead's entry without ``isActive``; it appears with the lead's next step."""
    opened, step = gate()
    later, step2 = gate()
    lead = Script([reply(tool_use("TeamCreate", {"team_name": TEAM})), step, step2])
    rt = make_runtime(Router(team_lead=lead))
    await rt.start()
    rt.submit("go")
    await until(lambda: len(lead.requests) == 2, "the lead's call after TeamCreate")
    # Written off the loop in the lead's order: it may land just after the request went out.
    await until(lambda: is_active(home, "team-lead") is True, "the lead active")
    opened.set()
    await until(lambda: is_active(home, "team-lead") is False, "the lead idle")
    rt.submit("again")
    await until(lambda: len(lead.requests) == 3, "the lead's next turn")
    await until(lambda: is_active(home, "team-lead") is True, "the lead active again")
    later.set()
    await until(lambda: is_active(home, "team-lead") is False, "idle again")
    assert [m["name"] for m in config_of(home, TEAM)["members"]] == ["team-lead"]


# ================================================================== SendMessage routing (seed 000)


async def test_send_message_routing_carries_the_target_color(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Seed 000 ``handleDirectMessage``: ``routing: {sender, senderColor, target:
    `@${recipientName}`, targetColor: lookupColor(state, recipientName), summary, content}``."""
    rt = make_runtime(spawner=no_spawn)
    await create_team(rt)
    await spawn(rt, "researcher")
    await spawn(rt, "analyst")
    colors = {m["name"]: m.get("color") for m in config_of(home, TEAM)["members"]}
    assert colors["researcher"] and colors["analyst"] and colors["researcher"] != colors["analyst"]

    content, is_error = await call_tool(
        rt.lead_session,
        "SendMessage",
        {"type": "message", "recipient": "researcher", "content": "look at auth", "summary": "s"},
    )
    assert not is_error, content
    assert result_json(content)["routing"] == {
        "sender": "team-lead",
        "senderColor": "blue",
        "target": "@researcher",
        "targetColor": colors["researcher"],
        "summary": "s",
        "content": "look at auth",
    }
    researcher = rt.teammates["researcher"].session
    for recipient, color in (("analyst", colors["analyst"]), ("team-lead", "blue")):
        content, is_error = await call_tool(
            researcher, "SendMessage", {"type": "message", "recipient": recipient, "content": "hi"}
        )
        assert not is_error, content
        routing = result_json(content)["routing"]
        assert (routing["senderColor"], routing["targetColor"]) == (colors["researcher"], color)

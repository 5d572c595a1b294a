"""The offline model's lead and teammates in situations the happy path never meets: a teammate
that keeps refusing to shut down, and a claim that fails for a reason that cannot change."""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import Callable
from pathlib import Path

from app.cli.headless import run_team
from app.core import Home, InboxMessage
from app.core.tasks import TaskList
from app.runtime.events import ApprovalChanged
from app.runtime.offline import ModelRequest, ResponsePlan, reply, tool_use
from app.runtime.offline.lead_policy import MAX_SHUTDOWN_ASKS
from app.runtime.offline.policies import OfflineModel
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import HANG_GUARD, Observer, Router, Script, frames_in, until
from tests.runtime.test_runtime_api import create_team

GOAL = "Describe the python files in this project"


class RefusesShutdown:
    """The offline teammate, except that it rejects every shutdown request (with a reason)."""

    def __init__(self) -> None:
        self.model = OfflineModel()
        self.refused: list[str] = []

    async def respond(self, request: ModelRequest) -> ResponsePlan:
        text = request.last_user_text
        found = re.search(r'"requestId":"([^"]+)"', text) if "shutdown_request" in text else None
        if found and found[1] not in self.refused:
            self.refused.append(found[1])
            answer = {
                "type": "shutdown_response",
                "request_id": found[1],
                "approve": False,
                "content": "still checking the summary",
            }
            return reply(tool_use("SendMessage", answer))
        return await self.model.respond(request)


async def test_the_lead_asks_a_refusing_teammate_again_then_reports_it(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """The analyst rejects every shutdown request. The lead asks it again after each refusal,
    three times in all, then tells the person and leaves the team up (no TeamDelete). The
    person is asked only what is the person's: the writer's plan, never a shutdown."""
    analyst = RefusesShutdown()
    router = Router(analyst=analyst)
    runtime = make_runtime(router)  # the person decides plans and permissions
    observer = Observer(runtime)
    await runtime.start()
    runtime.submit(GOAL)
    plan = await until(
        lambda: next((a for a in runtime.approvals() if a.kind == "plan"), None), "the plan"
    )
    runtime.approve_plan(plan.request_id)
    report = await until(
        lambda: next((o.text for o in observer.outcomes if "refused to shut down" in o.text), ""),
        "the lead's report of the refusal",
    )
    team = runtime.team
    assert team is not None, "the team was deleted although the analyst is still in it"
    assert f"after {MAX_SHUTDOWN_ASKS} requests" in report
    assert "analyst: still checking the summary" in report
    asked = frames_in(home, team, "analyst", "shutdown_request")
    assert len(asked) == MAX_SHUTDOWN_ASKS == len(analyst.refused)
    refusals = frames_in(home, team, "team-lead", "shutdown_rejected")
    assert [r["requestId"] for r in refusals] == [a["requestId"] for a in asked]
    # The others approved their one request and left; the analyst is still a member.
    assert {n: s.status for n, s in runtime.departed.items()} == {
        "researcher": "completed",
        "writer": "completed",
    }
    assert "analyst" in runtime.teammates
    assert "TeamDelete" not in tools_called(runtime, "team-lead")
    # The person was asked about the plan only: shutdown requests are the teammates' to answer.
    kinds = {e.kind for e in observer.of(ApprovalChanged)}
    assert kinds == {"plan"}
    assert runtime.approvals() == []


def status_of(tasks: TaskList, task_id: str) -> str | None:
    task = tasks.get(task_id)
    return task.status if task is not None else None


def tools_called(runtime: TeamRuntime, agent: str) -> list[str]:
    return [str(e.data.get("tool")) for e in runtime.transcript(agent) if e.kind == "tool_call"]


async def test_a_teammate_does_not_retry_a_claim_that_cannot_succeed(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Task #1 is already the tester's: the researcher's claim fails with a reason that will
    not change by asking again, so it claims once, says why, and goes idle."""
    router = Router(team_lead=Script(then="Noted."))
    runtime = make_runtime(router)
    await runtime.start()
    team = await create_team(runtime)
    tasks = home.tasks(team)
    tasks.create("Inventory the files")
    tasks.update("1", owner="tester", status="in_progress")
    await runtime.spawn_teammate(
        "researcher", "Your task is #1: Inventory the files (action: inventory, files: **/*)."
    )
    idle = await until(
        lambda: frames_in(home, team, "team-lead", "idle_notification"), "the researcher idle"
    )
    assert tools_called(runtime, "researcher").count("TaskUpdate") == 1
    assert "already owned by tester" in idle[0].get("summary", "")
    assert tasks.get("1").owner == "tester"  # type: ignore[union-attr]
    assert router.calls("researcher") == 2  # the claim, then the explanation: no retry


async def test_a_blocked_claim_is_tried_again_once_the_task_is_unblocked(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """Blocked is a reason that changes: told the task is unblocked, the teammate claims again
    and does the work."""
    router = Router(team_lead=Script(then="Noted."))
    runtime = make_runtime(router)
    await runtime.start()
    team = await create_team(runtime)
    tasks = home.tasks(team)
    tasks.create("Gather the inputs")
    tasks.create("Inventory the files")
    tasks.add_dependency("1", "2")
    await runtime.spawn_teammate(
        "researcher", "Your task is #2: Inventory the files (action: inventory, files: **/*)."
    )
    await until(lambda: frames_in(home, team, "team-lead", "idle_notification"), "idle")
    assert status_of(tasks, "2") == "pending"
    tasks.update("1", status="completed")
    home.mailbox(team).send(
        "researcher",
        InboxMessage(sender="team-lead", text="Task #2 is unblocked now: go ahead with it."),
    )
    await until(lambda: status_of(tasks, "2") == "completed", "task #2 done")
    assert tasks.get("2").owner == "researcher"  # type: ignore[union-attr]
    assert tools_called(runtime, "researcher").count("TaskUpdate") >= 3  # 1 failed, 2 claimed


# ---------------------------------------------------------------------- the demo's permission

COUNT_GOAL = "Summarize what the Python files in this folder do and count their lines"


async def test_headless_line_counts_are_allowed_by_the_lead(home: Home, project: Path) -> None:
    """``teamdeck run GOAL --headless`` has no person: the lead answers the researcher's
    ``wc -l`` permission request and the run completes with the counts."""
    out = io.StringIO()
    code, reason = await asyncio.wait_for(
        run_team(home, COUNT_GOAL, cwd=project, time_limit=HANG_GUARD, out=out, json_output=True),
        HANG_GUARD + 5,
    )
    assert (code, reason) == (0, "team finished")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = [line.get("type") for line in lines if line["event"] == "message"]
    assert kinds.count("permission_request") == 1
    answer = next(line for line in lines if line.get("type") == "permission_response")
    assert answer["from"] == "team-lead"  # no person: the lead answers, allowing it
    assert json.loads(answer["text"])["subtype"] == "success"
    report = lines[-2]["text"]
    assert "Found 3 files" in report and "lines in the 3 file(s) counted" in report


async def test_the_person_is_asked_about_the_line_count_and_a_denial_is_reported(
    make_runtime: Callable[..., TeamRuntime], home: Home
) -> None:
    """In the dashboard the person decides: the researcher's ``wc -l`` waits in the queue as a
    permission request (the one the demo shows); denied, the researcher reports without the
    counts and the team still finishes."""
    runtime = make_runtime(Router())
    observer = Observer(runtime)
    await runtime.start()
    runtime.submit(COUNT_GOAL)
    permission = await until(
        lambda: next((a for a in runtime.approvals() if a.kind == "permission"), None),
        "the researcher's permission request",
    )
    assert (permission.agent, permission.tool_name) == ("researcher", "Bash")
    assert permission.tool_input is not None
    assert permission.tool_input["command"].startswith("wc -l ")
    assert permission.suggestion == "Bash(wc:*)"
    assert runtime.status_of("researcher") == "awaiting approval"
    runtime.answer_permission(permission.request_id, allow=False)
    plan = await until(
        lambda: next((a for a in runtime.approvals() if a.kind == "plan"), None), "the plan"
    )
    runtime.approve_plan(plan.request_id)
    report = await until(
        lambda: next((o.text for o in observer.outcomes if "Final report" in o.text), ""),
        "the final report",
    )
    assert "Lines not counted" in report
    assert {e.kind for e in observer.of(ApprovalChanged)} == {"permission", "plan"}


# ------------------------------------------------------------- the folder a goal names


async def test_a_goal_naming_a_folder_is_about_that_folder_only(home: Home, project: Path) -> None:
    """ "Describe the pkg folder": the teammates look at ``pkg/`` and nothing else (the report
    counts its one file, not the project's three); a goal naming no folder keeps the project."""
    out = io.StringIO()
    code, reason = await asyncio.wait_for(
        run_team(
            home,
            "Describe the Python files in the pkg folder",
            cwd=project,
            time_limit=HANG_GUARD,
            out=out,
            json_output=True,
        ),
        HANG_GUARD + 5,
    )
    assert (code, reason) == (0, "team finished")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    report = lines[-2]["text"]
    assert "Found 1 file" in report and "gamma.py" in report, report
    assert "alpha.py" not in report and "beta.py" not in report


def test_the_files_a_goal_names() -> None:
    from app.runtime.offline.goal_words import file_pattern_for

    assert file_pattern_for("Describe the styles folder") == "styles/**/*"
    assert file_pattern_for("What do the Python files in app/core do?") == "app/core/**/*.py"
    assert file_pattern_for("Summarize README.md") == "README.md"
    assert file_pattern_for("Explain app/cli/main.py") == "app/cli/main.py"
    assert file_pattern_for("Describe the ./widgets directory") == "widgets/**/*"
    assert file_pattern_for("Summarize what the Python files in this folder do") == "**/*.py"
    assert file_pattern_for("See https://example.com/a/b and summarize") == "**/*"


# ------------------------------------------------------------- an empty folder


async def test_an_empty_folder_gets_no_team_and_a_report_saying_so(
    make_runtime: Callable[..., TeamRuntime], home: Home, tmp_path: Path
) -> None:
    """A goal about an empty folder: the lead looks first (one Glob), makes no team and spawns
    no one, and its report says there is nothing to work on and what to do. Once the folder
    has a file, the same goal sent again makes the team (the empty look ended that goal)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    router = Router()
    runtime = make_runtime(router, cwd=empty)
    observer = Observer(runtime)
    await runtime.start()
    runtime.submit(GOAL)
    report = await until(
        lambda: next((o.text for o in observer.outcomes if "Final report" in o.text), ""),
        "the report",
    )
    assert "nothing to work on" in report and "**/*.py" in report, report
    assert "send the goal again" in report
    assert not (home.root / "teams").exists() or not any((home.root / "teams").iterdir())
    assert set(router.requests) == {"team-lead"}  # no teammate ever ran
    assert router.calls("team-lead") == 2  # the look, then the report

    (empty / "one.py").write_text('"""One: a module."""\n')
    runtime.submit(GOAL)
    await until(lambda: "researcher" in router.requests, "a teammate of the second goal")


async def test_headless_on_an_empty_folder_finishes_with_the_report(
    home: Home, tmp_path: Path
) -> None:
    """``teamdeck run GOAL --headless`` in an empty folder exits 0 at once with the lead's
    report instead of a team reading nothing."""
    empty = tmp_path / "empty"
    empty.mkdir()
    out = io.StringIO()
    code, reason = await asyncio.wait_for(
        run_team(home, GOAL, cwd=empty, time_limit=HANG_GUARD, out=out, json_output=True),
        HANG_GUARD + 5,
    )
    assert (code, reason) == (0, "the lead answered without a team")
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {e["agent"] for e in events if e["event"] == "status"} == {"team-lead"}
    assert not any(e["event"].startswith("team_") for e in events)
    assert "nothing to work on" in out.getvalue()

"""Rules accepted during a run reach the teammates that are already running, in every mode.

A running teammate (in the lead's process, or a real ``teamdeck agent`` process) decides its
next tool call with the run's rules as they are then: settings the person accepted (a deny
added, an allow removed), an "always allow" answered for another teammate; never a change the
person rejected. The offline researcher's ``wc -l`` (one per inventory task, see
``offline.teammate_policy``) is the call that shows which rules it used. Hooks the person
accepts run in a running teammate from then on, rejected ones never (they already did: the
hooks were read from the snapshot at each event; the test keeps it so).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core import Home
from app.runtime.api import Approval
from app.runtime.offline.goal_words import COUNT_LINES
from app.runtime.permissions import PermissionRules, Rule, RulesFeed
from app.runtime.permissions.settings import load_settings
from app.runtime.team.runtime import TeamRuntime
from tests.runtime.conftest import Router, Script, call_tool, inbox_of, until
from tests.runtime.test_runtime_api import create_team

#: Starting a teammate process on a loaded 2-core machine takes a while (a hang guard only).
GUARD = 120.0
BACKENDS = ["in-process", "process"]


@pytest.fixture(autouse=True)
def _quick_watch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("app.runtime.team.settings_watch.POLL_S", 0.05)
    user = tmp_path / "user-claude"  # no user settings of the machine's
    user.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))


def write_settings(project: Path, permissions: dict[str, list[str]]) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}))


def task_prompt(task: str, *, count_lines: bool = True) -> str:
    what = "Inventory the files (action: inventory, files: **/*)"
    return f"Your task is #{task}: {what}. {COUNT_LINES if count_lines else ''}"


def settings_request(runtime: TeamRuntime, change: str) -> Approval | None:
    return next(
        (a for a in runtime.approvals() if a.tool_name == "Settings" and change in a.title), None
    )


def reports(home: Home, team: str, sender: str) -> list[str]:
    """What ``sender`` reported to the lead about its tasks, in order."""
    return [
        str(m["text"]) for m in inbox_of(home, team, "team-lead")
        if m.get("from") == sender and str(m["text"]).startswith("Found ")
    ]  # fmt: skip


async def started(
    make_runtime: Callable[..., TeamRuntime], project: Path, backend: str
) -> tuple[TeamRuntime, str]:
    """A person-led runtime on the project's settings (as ``teamdeck`` builds it), with a team."""
    runtime = make_runtime(
        Router(team_lead=Script(then="Noted.")),
        teammate_backend=backend,
        decider="person",
        rules=load_settings(project).rules,
    )
    await runtime.start()
    return runtime, await create_team(runtime)


async def give_task(
    runtime: TeamRuntime, home: Home, team: str, name: str, *, count_lines: bool = True
) -> str:
    """A new inventory task for the running teammate ``name``, told by the lead."""
    task = home.tasks(team).create(f"Inventory the files for {name}", owner=name)
    prompt = task_prompt(str(task.id), count_lines=count_lines)
    content, is_error = await call_tool(
        runtime.lead_session,
        "SendMessage",
        {"type": "message", "recipient": name, "content": prompt, "summary": f"task #{task.id}"},
    )
    assert not is_error, content
    return str(task.id)


async def answer_settings(runtime: TeamRuntime, change: str, accept: bool) -> None:
    request = await until(lambda: settings_request(runtime, change), change, GUARD)
    assert runtime.answer_permission(request.request_id, accept).ok
    await until(lambda: settings_request(runtime, change) is None, "answered", GUARD)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_accepted_settings_reach_a_running_teammate_and_rejected_ones_never(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path, backend: str
) -> None:
    write_settings(project, {"allow": ["Bash(wc:*)"]})
    runtime, team = await started(make_runtime, project, backend)
    home.tasks(team).create("Inventory the files")
    await runtime.spawn_teammate("researcher", task_prompt("1"))
    [first] = await until(lambda: reports(home, team, "researcher"), "task #1 reported", GUARD)
    assert "lines in the 4 file(s) counted" in first  # the allow rule let wc -l run unasked

    # The person accepts settings that drop the allow rule and deny wc instead.
    write_settings(project, {"deny": ["Bash(wc:*)"]})
    await answer_settings(runtime, "adds deny rule Bash(wc:*)", accept=True)
    await give_task(runtime, home, team, "researcher")
    second = await until(lambda: reports(home, team, "researcher")[1:], "task #2", GUARD)
    assert "Lines not counted: Permission denied" in second[0]
    assert "denied by the rule Bash(wc:*)" in second[0]

    # An agent puts the allow rule back; the person rejects it: the deny stays.
    write_settings(project, {"allow": ["Bash(wc:*)"]})
    await answer_settings(runtime, "removes deny rule Bash(wc:*)", accept=False)
    await give_task(runtime, home, team, "researcher")
    third = await until(lambda: reports(home, team, "researcher")[2:], "task #3", GUARD)
    assert "denied by the rule Bash(wc:*)" in third[0]

    # The person accepts settings with neither rule: wc -l asks (the allow is gone too).
    write_settings(project, {})
    await answer_settings(runtime, "removes deny rule Bash(wc:*)", accept=True)
    await give_task(runtime, home, team, "researcher")
    asked = await until(
        lambda: next((a for a in runtime.approvals() if a.agent == "researcher"), None),
        "the researcher's wc -l request",
        GUARD,
    )
    assert asked.tool_name == "Bash" and str(asked.tool_input["command"]).startswith("wc -l")
    assert len(reports(home, team, "researcher")) == 3


@pytest.mark.parametrize("backend", BACKENDS)
async def test_always_allow_for_one_teammate_reaches_another_running_one(
    make_runtime: Callable[..., TeamRuntime], home: Home, project: Path, backend: str
) -> None:
    runtime, team = await started(make_runtime, project, backend)
    await runtime.spawn_teammate("analyst", "Wait for your task from team-lead.")
    await until(lambda: runtime.status_of("analyst") == "idle", "the analyst is up", GUARD)
    home.tasks(team).create("Inventory the files", owner="researcher")
    await runtime.spawn_teammate("researcher", task_prompt("1"))
    asked = await until(
        lambda: next((a for a in runtime.approvals() if a.agent == "researcher"), None),
        "the researcher's wc -l request",
        GUARD,
    )
    assert asked.suggestion == "Bash(wc:*)"
    assert runtime.answer_permission(asked.request_id, True, always=True).ok
    await until(lambda: reports(home, team, "researcher"), "task #1 reported", GUARD)

    await give_task(runtime, home, team, "analyst")

    def asks() -> list[Approval]:
        return [a for a in runtime.approvals() if a.agent == "analyst"]

    await until(lambda: reports(home, team, "analyst") or asks(), "the analyst's wc -l", GUARD)
    assert asks() == []  # no request: the rule allowed it
    [report] = reports(home, team, "analyst")
    assert "lines in the 4 file(s) counted" in report


def write_hook(project: Path, marker: Path, word: str) -> None:
    """What an agent could write: a TaskCompleted hook running a command of its choosing."""
    hook = {"type": "command", "command": f"echo {word} >> {marker}"}
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"hooks": {"TaskCompleted": [{"hooks": [hook]}]}}))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_running_teammate_runs_an_accepted_hook_and_never_a_rejected_one(
    make_runtime: Callable[..., TeamRuntime],
    home: Home,
    project: Path,
    tmp_path: Path,
    backend: str,
) -> None:
    runtime, team = await started(make_runtime, project, backend)
    marker = tmp_path / "hook-runs.txt"
    await runtime.spawn_teammate("researcher", "Wait for your task from team-lead.")
    await until(lambda: runtime.status_of("researcher") == "idle", "the researcher is up", GUARD)

    write_hook(project, marker, "rejected")
    await answer_settings(runtime, "adds a TaskCompleted hook", accept=False)
    await give_task(runtime, home, team, "researcher", count_lines=False)
    await until(lambda: reports(home, team, "researcher"), "task #1 reported", GUARD)
    assert not marker.exists()

    write_hook(project, marker, "accepted")
    await answer_settings(runtime, "accepted >>", accept=True)
    await give_task(runtime, home, team, "researcher", count_lines=False)
    await until(lambda: reports(home, team, "researcher")[1:], "task #2 reported", GUARD)
    assert marker.read_text().split() == ["accepted"]


def test_a_feed_takes_what_the_run_changed_and_keeps_the_agents_own_rules() -> None:
    run = PermissionRules.from_strings(allow=["Bash(wc:*)", "Read"], deny=["Bash(rm:*)"])
    feed = RulesFeed(lambda: run)
    mine = feed.seen.copy()
    mine.add_allow("Bash(ls:*)")  # its own (e.g. --allow for this teammate only)
    assert not feed.refresh(mine)  # nothing changed: nothing to do
    run.allow.remove(Rule.parse("Bash(wc:*)"))
    run.add_deny("Bash(wc:*)")
    run.add_allow("Grep")
    assert feed.refresh(mine)
    assert [str(r) for r in mine.allow] == ["Read", "Bash(ls:*)", "Grep"]
    assert [str(r) for r in mine.deny] == ["Bash(rm:*)", "Bash(wc:*)"]
    assert not feed.refresh(mine)

"""Deterministic team data for the UI tests: a home on disk and a matching FakeRuntime."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core import Home, InboxMessage, TeamMember
from app.core.protocol import (
    idle_notification,
    permission_request,
    plan_approval_request,
    shutdown_approved,
    shutdown_request,
)
from app.dashboard.app import TeamDeckApp
from app.dashboard.team_source import FilesSource
from app.runtime.api import AgentSnapshot, Approval
from app.runtime.events import TranscriptEntry
from tests.ui.fake_runtime import T0, FakeRuntime

TEAM = "alpha"
PLAN = """# Plan: auth module

1. Read `auth/` and list the entry points
2. Add token refresh with a **5 minute** skew
3. Tests for expiry and refresh

```python
def refresh(token): ...
```
"""
MEMBERS = (("researcher", "cyan"), ("engineer", "green"), ("tester", "yellow"))


def ts(seconds: int) -> str:
    """A fixed ISO timestamp ``seconds`` after 2026-01-01T00:00:00Z."""
    minutes, secs = divmod(seconds, 60)
    return f"2026-01-01T00:{minutes:02d}:{secs:02d}.000Z"


def fixed_clock() -> float:
    return T0 + 125.0


def build_home(root: Path) -> Home:
    """Team ``alpha``: lead + 3 teammates, 7 tasks (one internal), a dozen messages."""
    home = Home(root)
    home.teams.create(TEAM, description="Build the auth module")
    for name, color in MEMBERS:
        home.teams.add_member(
            TEAM, TeamMember(agent_id=f"{name}@{TEAM}", name=name, color=color, joined_at=1)
        )
    tasks = home.tasks(TEAM)
    tasks.create("Survey the auth code", "find the entry points")
    tasks.create("Design token refresh")
    tasks.create("Implement token refresh")
    tasks.create("Write expiry tests")
    tasks.create("Write the summary")
    tasks.create("internal bookkeeping", metadata={"_internal": True})
    tasks.create("Review the plan")
    tasks.update("1", status="completed", owner="researcher")
    tasks.update("2", status="in_progress", owner="researcher")
    tasks.update("3", status="in_progress", owner="engineer")
    tasks.update("4", owner="tester")
    tasks.add_dependency("2", "3")
    tasks.add_dependency("3", "4")
    box = home.mailbox(TEAM)

    def send(to: str, sender: str, text: str, at: int, summary: str | None = None) -> None:
        box.append(to, InboxMessage(sender=sender, text=text, summary=summary, timestamp=ts(at)))

    send("researcher", "team-lead", "Survey auth/ and report the entry points.", 1, "survey auth")
    send(
        "engineer", "team-lead", "Implement token refresh once #2 is done.", 2, "implement refresh"
    )
    send(
        "engineer",
        "researcher",
        "Entry points: login(), refresh(), logout().",
        20,
        "entry points found",
    )
    idle = idle_notification("researcher", summary="survey done", completed_task_id="1")
    send("team-lead", "researcher", idle.to_text(), 25)
    plan = plan_approval_request("plan_approval-1767225630000@engineer", "engineer", PLAN)
    send("team-lead", "engineer", plan.to_text(), 30)
    stop = shutdown_request("shutdown-1767225640000@tester", "team-lead", "tests are covered")
    send("tester", "team-lead", stop.to_text(), 40)
    send("team-lead", "tester", shutdown_approved(stop.request_id, "tester").to_text(), 45)
    perm = permission_request(
        "perm-1767225650000@researcher", f"researcher@{TEAM}", "Bash", "toolu_1", "git status",
        {"command": "git status --short"},
    )  # fmt: skip
    send("team-lead", "researcher", perm.to_text(), 50)
    send("researcher", "engineer", "Thanks, starting on refresh now.", 55, "ack")
    return home


def agents() -> list[AgentSnapshot]:
    def snap(name: str, color: str, status: str, **kw: object) -> AgentSnapshot:
        kw.setdefault("cost_usd", 0.0)  # a runtime's agents are priced (offline: $0)
        return AgentSnapshot(
            name=name,
            color=color,
            status=status,
            started_at=T0,
            status_since=T0,
            **kw,  # type: ignore[arg-type]
        )

    return [
        snap("team-lead", "blue", "running", is_lead=True, input_tokens=5200, output_tokens=800,
             tool_calls=6, last_activity="calling TaskCreate"),
        snap("researcher", "cyan", "idle", current_task="#2 Design token refresh",
             last_activity="✉ engineer: entry points found", input_tokens=12000,
             output_tokens=2300, tool_calls=9),
        snap("engineer", "green", "awaiting approval", current_task="#3 Implement token refresh",
             last_activity="calling ExitPlanMode", input_tokens=8000, tool_calls=3, mode="plan"),
        snap("tester", "yellow", "stopping", last_activity="shutdown requested"),
    ]  # fmt: skip


def approvals() -> list[Approval]:
    return [
        Approval(
            "plan_approval-1767225630000@engineer", "plan", "engineer",
            "engineer: plan approval requested", body=PLAN, created_at=T0 + 30,
        ),
        Approval(
            "perm-1767225650000@researcher", "permission", "researcher", "researcher: Bash",
            body='{\n  "command": "git status --short"\n}', tool_name="Bash",
            tool_input={"command": "git status --short"}, suggestion="Bash(git status:*)",
            created_at=T0 + 50,
        ),
        Approval(
            "shutdown-1767225660000@tester", "shutdown", "tester",
            "tester: shutdown requested", body="tests are covered", created_at=T0 + 60,
        ),
    ]  # fmt: skip


def transcripts() -> dict[str, list[TranscriptEntry]]:
    lead = [
        TranscriptEntry("team-lead", "user", "Build the auth module with token refresh."),
        TranscriptEntry("team-lead", "assistant", "I'll create a team and split the work."),
        TranscriptEntry(
            "team-lead",
            "tool_call",
            "TeamCreate",
            {"tool": "TeamCreate", "tool_use_id": "t1", "input": {"team_name": "alpha"}},
        ),
        TranscriptEntry("team-lead", "tool_result", "created team alpha", {"tool_use_id": "t1"}),
    ]
    researcher = [
        TranscriptEntry("researcher", "user", "Survey auth/ and report the entry points."),
        TranscriptEntry(
            "researcher", "tool_call", "Bash",
            {"tool": "Bash", "tool_use_id": "b1", "input": {"command": "grep -rn def auth/"}},
        ),
        TranscriptEntry(
            "researcher", "tool_result", "\n".join(f"auth/x.py:{i}: def f{i}()" for i in range(30)),
            {"tool_use_id": "b1"},
        ),
        TranscriptEntry("researcher", "assistant", "Found **two**:\n\n- login\n- logout"),
    ]  # fmt: skip
    return {"team-lead": lead, "researcher": researcher}


def make_runtime() -> FakeRuntime:
    return FakeRuntime(TEAM, agents(), approvals(), transcripts())


def make_app(
    root: Path, runtime: FakeRuntime | None = None, *, demo: bool = False, **options: Any
) -> TeamDeckApp:
    """The app over the test team: steered through ``runtime``, else a viewer of its files
    (``options``: the ``TeamSource``'s, e.g. team, goal, modes, pick)."""
    home = build_home(root) if not (root / "teams" / TEAM).exists() else Home(root)
    if runtime is not None and getattr(runtime, "cwd", None) is None:
        runtime.cwd = root  # the project's folder (diffs: ``app.dashboard.review``)
    source = runtime.source(**options) if runtime is not None else FilesSource(**options)
    return TeamDeckApp(home, source, clock=fixed_clock, watch=False, demo=demo)

"""A large team on few cores: the person's process first, work proportional to what changed.

Each test counts work (nice values, wake-ups, config writes, model calls), never time.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core import Home
from app.core.mailbox import Mailbox
from app.core.models import TeamMember
from app.core.paths import LEAD_NAME
from app.core.teams import COLORS
from app.runtime.agent import teammate as teammate_module
from app.runtime.offline import ModelRequest, reply, text
from app.runtime.offline.plans import tool_use
from app.runtime.runners.priority import TEAM_SESSION_NICE
from app.runtime.team.runtime import IN_PROCESS_CALLS, TeamRuntime
from tests.conformance.test_conformance_headless import run_here
from tests.runtime.conftest import Router, Script, call_tool, settle, until

TEAM = "scale"


def _nice_of(pid: int) -> int:
    """The nice value of a process (``/proc/PID/stat``, field 19)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


async def test_teammate_processes_run_nicer_than_the_dashboard(
    home: Home, project: Path, runtimes: list[TeamRuntime]
) -> None:
    runtime = TeamRuntime(home, cwd=project, decider="person", teammate_backend="process")
    runtimes.append(runtime)
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    for name in ("w1", "w2"):
        await runtime.spawn_teammate(name, "Wait for tasks.")
    pids = await until(
        lambda: (
            [p for r in runtime.runners.values() if (p := getattr(r, "pid", None))]
            if all(getattr(r, "pid", None) for r in runtime.runners.values())
            else None
        ),
        "the teammate processes' pids",
        within=120,
    )
    mine = os.nice(0)
    # Nicer by 10 than the dashboard, not 20: the fork server's children are not lowered twice.
    assert [_nice_of(pid) for pid in pids] == [min(19, mine + 10)] * 2
    mine_group = _autogroup("self")
    if mine_group is not None:
        # The scheduler weighs sessions first (their autogroups), then the processes of one:
        # the team is one session (the fork server's), not a session per teammate at the
        # dashboard's weight each.
        groups = {tuple(_autogroup(str(pid)) or ["?"]) for pid in pids}
        assert len(groups) == 1 and mine_group[0] not in {g[0] for g in groups}
        # ... and weighed less than the dashboard's (the person's process first), though not
        # as little as a lone teammate's session.
        assert groups.pop()[-1] == str(TEAM_SESSION_NICE)


async def test_a_teammate_process_started_without_the_fork_server_lowers_its_session(
    home: Home, project: Path, runtimes: list[TeamRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exec'd, a teammate process leads a session of its own: its autogroup goes to nice 10
    (its process nice alone would weigh nothing against the dashboard's session)."""
    if _autogroup("self") is None:
        pytest.skip("no autogroups here")
    monkeypatch.setenv("TEAMDECK_FORKSERVER", "0")
    runtime = TeamRuntime(home, cwd=project, decider="person", teammate_backend="process")
    runtimes.append(runtime)
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    await runtime.spawn_teammate("w1", "Wait for tasks.")
    pid = await until(lambda: getattr(runtime.runners["w1"], "pid", None), "its pid", within=120)
    group = await until(
        lambda: g if (g := _autogroup(str(pid))) and g[-1] == "10" else None,
        "its session at autogroup nice 10",
        within=120,
    )
    assert group[0] != (_autogroup("self") or ["?"])[0]


def _autogroup(pid: str) -> list[str] | None:
    """``["/autogroup-N", "nice", "K"]`` of a process, or None without autogroups."""
    try:
        fields = Path(f"/proc/{pid}/autogroup").read_text().split()
    except OSError:
        return None
    # Some kernels and sandboxes (gVisor) show the file but leave it empty: no autogroups there.
    return fields if len(fields) == 3 else None


async def _idle_team(make_runtime: Any, home: Home, project: Path, size: int) -> TeamRuntime:
    """A runtime whose ``size`` in-process teammates answer every prompt with a line and idle."""
    runtime: TeamRuntime = make_runtime(Router(default=Script(then="Done.")))
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    for k in range(size):
        await runtime.spawn_teammate(f"w{k + 1}", "Wait for tasks.")
    await until(
        lambda: all(s.status == "idle" for s in runtime.snapshot()[1:]), "every teammate idle"
    )
    return runtime


async def test_a_new_task_wakes_one_idle_teammate_not_the_whole_team(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An idle teammate also looks at the board every FALLBACK_POLL seconds: on a loaded
    # machine that look could claim the task before the wake did, and then nobody is woken.
    # Here only the wake may find the task.
    monkeypatch.setattr(teammate_module, "FALLBACK_POLL", 3600.0)
    runtime = await _idle_team(make_runtime, home, project, 8)
    await until(  # each teammate past its last look at the board, waiting on its wake
        lambda: all(t.wake.waiting for t in runtime.teammates.values()), "every teammate parked"
    )
    wakes: Counter[str] = Counter()
    for name, teammate in runtime.teammates.items():
        original = teammate.wake.set

        def counted(name: str = name, original: Callable[[], None] = original) -> None:
            wakes[name] += 1
            original()

        teammate.wake.set = counted  # type: ignore[method-assign]
    tasks = home.tasks(TEAM)
    task = tasks.create("Count the files", "One task for a team of eight")
    owner = await until(lambda: tasks.get(task.id).owner, "the task claimed")  # type: ignore[union-attr]
    await until(
        lambda: all(s.status == "idle" for s in runtime.snapshot()[1:]), "the team idle again"
    )
    await settle()
    # One claimable task: one teammate woken (a second count of the same burst may wake it
    # again before its claim lands), never the other seven.
    assert set(wakes) == {owner}
    assert wakes[owner] <= 2


async def test_a_team_spawned_in_one_response_is_registered_in_two_config_writes(
    make_runtime: Any, home: Home, project: Path
) -> None:
    size = 20
    spawns = [
        tool_use("Task", {"name": "worker", "prompt": "Wait for tasks.", "team_name": TEAM})
        for _ in range(size)
    ]
    lead = Script([reply(tool_use("TeamCreate", {"team_name": TEAM})), reply(*spawns), "Spawned."])
    runtime: TeamRuntime = make_runtime(Router(default=Script(then="Done."), team_lead=lead))
    additions: list[int] = []
    modify = home.teams.modify

    def counted(team: str, change: Any, **kw: Any) -> Any:
        def counting(config: Any) -> None:
            before = len(config.members)
            change(config)
            if len(config.members) > before:
                additions.append(len(config.members) - before)

        return modify(team, counting, **kw)

    home.teams.modify = counted  # type: ignore[method-assign]
    await runtime.start()
    runtime.submit("Spawn a team of twenty.")
    await until(lambda: len(lead.requests) == 3, "the lead's three model calls")
    names = [m.name for m in home.teams.require(TEAM).members]
    # Every spawn of the response has its own name and colour, as sequential ones have.
    assert names == ["team-lead", "worker", *(f"worker-{k}" for k in range(2, size + 1))]
    colors = [m.color for m in home.teams.require(TEAM).members[1:]]
    assert len(set(colors)) == min(size, len(set(COLORS)))
    # The first spawn's write, then the nineteen that overlapped it: not one write each.
    assert len(additions) <= 2 and sum(additions) == size


async def test_a_refused_oversized_message_is_not_sent_back_to_the_model(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scripted model streams the megabyte in one delta (the SDK re-parses partial JSON at
    # each delta: thousands of small ones take minutes on a loaded machine).
    monkeypatch.setattr("app.runtime.offline.transport.JSON_CHARS_PER_DELTA", 4 << 20)
    huge = "x" * (1024 * 1024 + 10)
    send = {"type": "message", "recipient": "quiet", "content": huge, "summary": "big"}
    lead = Script([reply(tool_use("SendMessage", send)), "Too big, then.", "Still here."])
    runtime: TeamRuntime = make_runtime(Router(default=Script(then="Done."), team_lead=lead))
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    home.teams.add_member(TEAM, TeamMember(agent_id="", name="quiet", agent_type="worker"))
    runtime.submit("Send quiet the whole log.")
    await until(lambda: len(lead.requests) == 2, "the lead's call after the refusal")
    runtime.submit("Anything else?")
    await until(lambda: len(lead.requests) == 3, "the lead's next turn")
    refusal = json.dumps(lead.requests[1].body["messages"])
    assert "at most 1,048,576 are allowed" in refusal  # the model was told why
    for request in lead.requests[1:]:  # and the refused megabyte is not sent again
        assert len(json.dumps(request.body)) < 200_000
    assert home.mailbox(TEAM).read("quiet") == []


def test_a_headless_run_takes_its_team_size_and_task_count(
    home: Home,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``teamdeck run --teammates N --tasks M``: the offline lead makes that team and that
    many tasks, and the run ends when all are done. Through the entry function in this
    process (the usage errors below run the console script)."""
    flags = ["--json", "--teammates", "5", "--tasks", "12"]
    goal = "Describe the python files"
    done = run_here(monkeypatch, capsys, home.root, project, dict(os.environ), goal, *flags)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    finished = {e["agent"] for e in lines if e.get("status") == "completed"}
    assert finished == {f"worker-{k}" for k in range(1, 6)}
    notes = [json.loads(e["text"]) for e in lines if '"task_completed"' in e.get("text", "")]
    assert sorted(int(n["taskId"]) for n in notes) == list(range(1, 13))
    assert lines[-1] == {"event": "done", "code": 0, "reason": "team finished"}


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--teammates", "0"], "must be from 1 to 1000, not 0"),
        (["--tasks", "many"], "not a whole number: 'many'"),
    ],
)
def test_a_bad_team_size_is_a_one_line_usage_error(home: Home, argv: list[str], error: str) -> None:
    teamdeck = Path(sys.executable).parent / "teamdeck"
    done = subprocess.run(
        [str(teamdeck), "--home", str(home.root), "run", "x", "--headless", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert error in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


async def test_an_agent_creates_at_most_its_share_of_tasks(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.runtime.tools.tasks.MAX_TASKS_PER_AGENT", 5)
    runtime: TeamRuntime = make_runtime(Router(default=Script(then="Done.")))
    await runtime.start()
    session = runtime.lead_session
    content, failed = await call_tool(session, "TeamCreate", {"team_name": TEAM})
    assert not failed, content
    results = [
        await call_tool(session, "TaskCreate", {"subject": f"Task {k}", "description": "-"})
        for k in range(7)
    ]
    assert [failed for _, failed in results] == [False] * 5 + [True] * 2
    assert "team-lead has created 5 tasks in team scale, the most one agent may" in results[5][0]
    assert len(home.tasks(TEAM).list()) == 5
    # The person's own task creation is not an agent's: not capped.
    home.tasks(TEAM).create("From the person", "-")
    assert len(home.tasks(TEAM).list()) == 6


class _Held:
    """A model that holds every teammate's call until released, counting those under way."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.active = 0
        self.most = 0
        self.calls = 0

    async def respond(self, request: ModelRequest) -> Any:
        with self.lock:
            self.active += 1
            self.calls += 1
            self.most = max(self.most, self.active)
        try:
            await asyncio.to_thread(self.release.wait, 60)
        finally:
            with self.lock:
                self.active -= 1
        return reply(text("Done."))


async def test_in_process_teammates_make_a_few_model_calls_at_once(
    make_runtime: Any, home: Home, project: Path
) -> None:
    held = _Held()
    runtime: TeamRuntime = make_runtime(Router(default=held))
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    await asyncio.gather(*(runtime.spawn_teammate(f"w{k}", "Say hello.") for k in range(8)))
    await until(lambda: held.active == IN_PROCESS_CALLS, "the first calls under way")
    await settle(50)
    assert held.active == IN_PROCESS_CALLS  # the other four wait for a slot
    held.release.set()
    await until(lambda: held.calls == 8 and held.active == 0, "every teammate's call")
    assert held.most == IN_PROCESS_CALLS < 8


async def test_a_turns_task_completed_and_idle_reach_the_lead_in_one_write(
    make_runtime: Any, home: Home, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker = Script(
        [
            reply(tool_use("TaskUpdate", {"taskId": "1", "status": "completed"})),
            "Task #1 is done.",
        ]
    )
    runtime: TeamRuntime = make_runtime(Router(default=Script(then="Noted."), w1=worker))
    await runtime.start()
    home.teams.create(TEAM, description="scale", cwd=str(project))
    runtime.team_created(TEAM)
    home.tasks(TEAM).create("Count the files", "-", owner="w1", status="in_progress")
    writes: list[tuple[str, int]] = []
    append = Mailbox.append

    def counted(self: Mailbox, agent: str, message: Any, **kw: Any) -> None:
        writes.append((agent, 1 + len(kw.get("more", ()))))
        append(self, agent, message, **kw)

    monkeypatch.setattr(Mailbox, "append", counted)
    await runtime.spawn_teammate("w1", "Finish task #1.")
    await until(lambda: len(worker.requests) == 2, "the worker's two calls")
    await until(lambda: runtime.status_of("w1") == "idle", "the worker idle")
    await settle()
    # One write of the lead's inbox for the turn, with both messages in Claude Code's shapes.
    assert [w for w in writes if w[0] == LEAD_NAME] == [(LEAD_NAME, 2)]
    raw = json.loads(home.mailbox(TEAM).path(LEAD_NAME).read_text())
    frames = [json.loads(entry["text"]) for entry in raw]
    assert [f["type"] for f in frames] == ["task_completed", "idle_notification"]
    assert frames[0]["taskId"] == "1", frames
    assert {entry["from"] for entry in raw} == {"w1"}


def test_a_teammate_process_wakes_only_for_task_changes_that_may_free_work(home: Home) -> None:
    """``task_news``: another teammate's claim or progress is no news for an idle teammate;
    a new task, one returned to the board, one completed (it may unblock others) or deleted
    is -- from this process's writes (the content is in the event) and from another's
    (``task=None``: the file is read)."""
    from app.core.events import TaskChanged
    from app.runtime.runners.task_news import TaskNews

    def frees_work(home: Home, event: TaskChanged) -> bool:
        return TaskNews(home, "w9").frees_work(event)

    home.teams.create(TEAM, description="scale")
    tasks = home.tasks(TEAM)
    seen: list[TaskChanged] = []
    unsubscribe = home.subscribe(lambda e: seen.append(e) if isinstance(e, TaskChanged) else None)

    def news(write: Callable[[], object]) -> tuple[bool, bool]:
        """(from this process's event, as another process's watcher sees it)."""
        seen.clear()
        write()
        event = seen[-1]
        return frees_work(home, event), frees_work(home, TaskChanged(TEAM, event.task_id))

    task = tasks.create("Build", "the thing")
    assert news(lambda: tasks.create("Test", "it")) == (True, True)
    assert news(lambda: tasks.update(task.id, owner="w1", status="in_progress")) == (
        False,
        False,
    )
    assert news(lambda: tasks.update(task.id, active_form="building")) == (False, False)
    assert news(lambda: tasks.update(task.id, owner=None, status="pending")) == (True, True)
    assert news(lambda: tasks.update(task.id, status="completed")) == (True, True)
    assert frees_work(home, TaskChanged(TEAM, "999"))  # gone: look at the board
    # its own task, taken from it by another process: it is no longer busy
    watch = TaskNews(home, "w9")
    seen.clear()
    mine = tasks.create("Mine", "")
    tasks.update(mine.id, owner="w9", status="in_progress")
    assert not watch.wakes(seen[:], idle=False)  # its own claim, read while it works
    tasks.update(mine.id, owner="w1")
    assert watch.wakes([TaskChanged(TEAM, mine.id)], idle=True)
    assert not watch.wakes([TaskChanged(TEAM, mine.id)], idle=True)  # not twice
    assert not watch.wakes([TaskChanged(TEAM, task.id)], idle=False)  # working: never
    unsubscribe()

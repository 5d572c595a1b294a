"""The task list: ids, update, delete, claim (all five failure reasons), dependencies, unassign."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core import DependencyCycleError, Home, NotFoundError, TaskChanged, TaskList
from app.core.errors import TaskBlockedError
from app.core.files import dumps

TEAM = "t"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    return home


@pytest.fixture
def tasks(home: Home) -> TaskList:
    return home.tasks(TEAM)


def task_file(home: Home, task_id: str) -> Path:
    return home.root / "tasks" / TEAM / f"{task_id}.json"


def load(home: Home, task_id: str) -> dict:  # type: ignore[type-arg]
    return json.loads(task_file(home, task_id).read_text())


def test_ids_count_up_from_one(home: Home, tasks: TaskList) -> None:
    created = [tasks.create(f"task {i}", description=f"d{i}") for i in range(1, 6)]
    assert [t.id for t in created] == ["1", "2", "3", "4", "5"]
    assert [t.subject for t in tasks.list()] == [f"task {i}" for i in range(1, 6)]
    assert (home.root / "tasks" / TEAM / ".highwatermark").read_text() == "5"
    text = task_file(home, "1").read_text()
    assert text == dumps(
        {
            "id": "1",
            "subject": "task 1",
            "description": "d1",
            "status": "pending",
            "blocks": [],
            "blockedBy": [],
        }
    )


def test_create_options(home: Home, tasks: TaskList) -> None:
    task = tasks.create(
        "Ship", "it", active_form="Shipping", metadata={"k": 1}, owner="r", status="in_progress"
    )
    assert list(load(home, task.id)) == [
        "id",
        "subject",
        "description",
        "activeForm",
        "status",
        "owner",
        "blocks",
        "blockedBy",
        "metadata",
    ]
    with pytest.raises(ValueError, match="subject"):
        tasks.create("   ")
    with pytest.raises(ValueError, match="unknown task status"):
        tasks.create("x", status="done")
    assert tasks.ids_on_disk() == [1]


def test_get_update_and_require(home: Home, tasks: TaskList) -> None:
    tasks.create("a")
    assert tasks.get("2") is None
    with pytest.raises(NotFoundError, match="#2"):
        tasks.require("2")
    updated = tasks.update(
        "1", status="in_progress", owner="researcher", subject="A", metadata={"x": 1, "y": 2}
    )
    assert (updated.status, updated.owner, updated.subject) == ("in_progress", "researcher", "A")
    tasks.update("1", metadata={"x": None, "z": 3})
    assert tasks.require("1").metadata == {"y": 2, "z": 3}
    tasks.update("1", owner=None)
    assert "owner" not in load(home, "1")  # like JavaScript's `owner: undefined`
    with pytest.raises(ValueError):
        tasks.update("1", status="bogus")
    with pytest.raises(NotFoundError):
        tasks.update("9", status="completed")
    assert tasks.get(1) is not None  # type: ignore[arg-type]  # an int id is accepted


def test_events(home: Home, tasks: TaskList) -> None:
    seen: list[object] = []
    home.subscribe(seen.append)
    tasks.create("a")
    tasks.update("1", status="completed")
    tasks.delete("1")
    assert seen == [TaskChanged(TEAM, "1")] * 3


def test_delete_cleans_references_and_keeps_ids_monotonic(home: Home, tasks: TaskList) -> None:
    for subject in "abcd":
        tasks.create(subject)
    tasks.add_dependency("1", "2")
    tasks.add_dependency("2", "3")
    tasks.add_dependency("2", "4")
    deleted = tasks.delete("2")
    assert deleted.subject == "b"
    assert not task_file(home, "2").exists()
    assert tasks.require("1").blocks == []
    assert tasks.require("3").blocked_by == []
    assert tasks.require("4").blocked_by == []
    # Deleting the highest id must not let it be reused.
    tasks.delete("4")
    assert tasks.create("e").id == "5"
    assert (home.root / "tasks" / TEAM / ".highwatermark").read_text() == "5"
    with pytest.raises(NotFoundError):
        tasks.delete("4")


# ----------------------------------------------------------------------------- claim


def test_claim_success_and_idempotence(tasks: TaskList) -> None:
    tasks.create("a")
    result = tasks.claim("1", "researcher")
    assert result.success and result.reason is None
    assert result.task is not None and result.task.owner == "researcher"
    assert tasks.require("1").owner == "researcher"
    assert tasks.claim("1", "researcher").success  # claiming your own task again is fine


def test_claim_task_not_found(tasks: TaskList) -> None:
    result = tasks.claim("42", "researcher")
    assert (result.success, result.reason) == (False, "task_not_found")


def test_claim_already_claimed(tasks: TaskList) -> None:
    tasks.create("a")
    tasks.claim("1", "researcher")
    result = tasks.claim("1", "tester")
    assert (result.success, result.reason) == (False, "already_claimed")
    assert result.task is not None and result.task.owner == "researcher"
    assert tasks.require("1").owner == "researcher"


@pytest.mark.parametrize("status", ["completed", "deleted"])
def test_claim_already_resolved(tasks: TaskList, status: str) -> None:
    tasks.create("a")
    tasks.update("1", status=status)
    result = tasks.claim("1", "researcher")
    assert (result.success, result.reason) == (False, "already_resolved")
    assert tasks.require("1").owner is None


def test_claim_blocked_until_blockers_resolve(tasks: TaskList) -> None:
    for subject in "abc":
        tasks.create(subject)
    tasks.add_dependency("1", "3")
    tasks.add_dependency("2", "3")
    result = tasks.claim("3", "researcher")
    assert (result.success, result.reason, result.blocked_by) == (False, "blocked", ["1", "2"])
    tasks.update("1", status="completed")
    assert tasks.claim("3", "researcher").blocked_by == ["2"]
    tasks.delete("2")  # a deleted blocker no longer blocks
    assert tasks.claim("3", "researcher").success


def test_an_owned_blocked_task_does_not_start(tasks: TaskList) -> None:
    """Starting obeys the claim's rule: not while a blocker is unfinished, whoever owns it."""
    tasks.create("first")
    tasks.create("second", owner="researcher")
    tasks.add_dependency("1", "2")
    with pytest.raises(TaskBlockedError, match=r"#2 cannot start.*blocked.*#1"):
        tasks.update("2", status="in_progress")
    assert tasks.require("2").status == "pending"
    tasks.update("2", description="other fields still change")  # only starting is refused
    tasks.update("1", status="completed")
    assert tasks.update("2", status="in_progress").status == "in_progress"


def test_claim_agent_busy(tasks: TaskList) -> None:
    for subject in "abc":
        tasks.create(subject)
    assert tasks.claim("1", "researcher", check_busy=True).success
    result = tasks.claim("2", "researcher", check_busy=True)
    assert (result.success, result.reason, result.busy_with) == (False, "agent_busy", ["1"])
    assert tasks.require("2").owner is None
    assert tasks.claim("2", "researcher").success  # without the check it may take more
    assert tasks.claim("3", "tester", check_busy=True).success  # others are not busy
    tasks.update("1", status="completed")
    tasks.update("2", status="completed")
    tasks.create("d")
    assert tasks.claim("4", "researcher", check_busy=True).success


def test_available(tasks: TaskList) -> None:
    for subject in "abcd":
        tasks.create(subject)
    tasks.add_dependency("1", "2")
    tasks.claim("3", "r")
    tasks.update("4", status="completed")
    assert [t.id for t in tasks.available()] == ["1"]
    tasks.update("1", status="completed")
    assert [t.id for t in tasks.available()] == ["2"]


def test_claim_next_takes_the_lowest_available_task_with_the_busy_check(
    tasks: TaskList,
) -> None:
    """What an idle teammate does between turns: blocked, owned, resolved and internal tasks
    are passed over; an agent owning an unresolved task claims nothing."""
    tasks.create("hidden", metadata={"_internal": True})  # 1
    for subject in "abcde":  # 2..6
        tasks.create(subject)
    tasks.add_dependency("6", "2")  # 2 is blocked by 6
    tasks.claim("3", "tester")
    tasks.update("4", status="completed")
    result = tasks.claim_next("researcher", status="in_progress")
    assert result is not None and result.success and result.task is not None
    assert (result.task.id, result.task.owner, result.task.status) == (
        "5",
        "researcher",
        "in_progress",
    )
    assert tasks.require("5").owner == "researcher"  # written, not only returned
    busy = tasks.claim_next("researcher")
    assert busy is not None and (busy.success, busy.reason, busy.busy_with) == (
        False,
        "agent_busy",
        ["5"],
    )
    assert tasks.require("6").owner is None
    won = tasks.claim_next("writer")
    assert won is not None and won.task is not None and won.task.id == "6"
    assert tasks.claim_next("reviewer") is None  # 2 is still blocked by 6
    tasks.update("6", status="completed")
    late = tasks.claim_next("reviewer")
    assert late is not None and late.task is not None and late.task.id == "2"


# ----------------------------------------------------------------------------- dependencies


def test_dependencies_are_symmetric(home: Home, tasks: TaskList) -> None:
    for subject in "abcd":
        tasks.create(subject)
    tasks.add_dependency("1", "2")
    tasks.add_dependency("1", "2")  # idempotent
    assert load(home, "1")["blocks"] == ["2"] and load(home, "2")["blockedBy"] == ["1"]
    tasks.update("3", add_blocks=["4"], add_blocked_by=["1"])
    assert tasks.require("3").blocks == ["4"] and tasks.require("4").blocked_by == ["3"]
    assert tasks.require("3").blocked_by == ["1"] and tasks.require("1").blocks == ["2", "3"]
    tasks.remove_dependency("1", "2")
    assert tasks.require("1").blocks == ["3"] and tasks.require("2").blocked_by == []
    with pytest.raises(NotFoundError):
        tasks.add_dependency("1", "99")


@pytest.mark.parametrize(
    ("edges", "closing"),
    [
        ([], ("1", "1")),
        ([("1", "2")], ("2", "1")),
        ([("1", "2"), ("2", "3")], ("3", "1")),
        ([("1", "2"), ("2", "3"), ("3", "4")], ("4", "2")),
    ],
)
def test_cycles_are_rejected(
    home: Home, tasks: TaskList, edges: list[tuple[str, str]], closing: tuple[str, str]
) -> None:
    for subject in "abcd":
        tasks.create(subject)
    for blocker, blocked in edges:
        tasks.add_dependency(blocker, blocked)
    before = {i: task_file(home, i).read_bytes() for i in "1234"}
    with pytest.raises(DependencyCycleError, match="cycle"):
        tasks.add_dependency(*closing)
    with pytest.raises(DependencyCycleError):
        tasks.update(closing[0], add_blocks=[closing[1]])
    assert {i: task_file(home, i).read_bytes() for i in "1234"} == before


def test_cycle_detection_follows_one_sided_links(home: Home, tasks: TaskList) -> None:
    for subject in "ab":
        tasks.create(subject)
    # Another program recorded only "2 is blocked by 1" (no "blocks" on #1).
    data = load(home, "2")
    data["blockedBy"] = ["1"]
    task_file(home, "2").write_text(dumps(data))
    with pytest.raises(DependencyCycleError):
        tasks.add_dependency("2", "1")


# ----------------------------------------------------------------------------- unassign


def test_unassign_message_matches_the_seeds(tasks: TaskList) -> None:
    for subject in ("Research auth", "Write tests", "Done already", "Someone else's"):
        tasks.create(subject)
    tasks.update("1", owner="researcher", status="in_progress")
    tasks.update("2", owner="researcher@t")
    tasks.update("3", owner="researcher", status="completed")
    tasks.update("4", owner="tester", status="in_progress")
    result = tasks.unassign("researcher", agent_id="researcher@t")
    assert result.notification_message == (
        'researcher has shut down. 2 task(s) were unassigned: #1 "Research auth", '
        '#2 "Write tests". Use TaskList to check availability and TaskUpdate with owner '
        "to reassign them to idle teammates."
    )
    assert result.unassigned_tasks == [
        {"id": "1", "subject": "Research auth"},
        {"id": "2", "subject": "Write tests"},
    ]
    for task_id in ("1", "2"):
        task = tasks.require(task_id)
        assert (task.owner, task.status) == (None, "pending")
    assert tasks.require("3").owner == "researcher"  # completed work keeps its owner
    assert tasks.require("4").owner == "tester"


def test_unassign_terminated_and_nothing_owned(tasks: TaskList) -> None:
    tasks.create("Only task")
    tasks.update("1", owner="tester", status="in_progress")
    result = tasks.unassign("tester", reason="terminated")
    assert result.notification_message == (
        'tester was terminated. 1 task(s) were unassigned: #1 "Only task". Use TaskList to '
        "check availability and TaskUpdate with owner to reassign them to idle teammates."
    )
    empty = tasks.unassign("tester")
    assert empty.notification_message == "tester has shut down."
    assert empty.unassigned_tasks == []


# ----------------------------------------------------------------------------- _internal


def test_internal_tasks_are_hidden_by_default(tasks: TaskList) -> None:
    tasks.create("visible")
    tasks.create("hidden", metadata={"_internal": True})
    assert [t.subject for t in tasks.list()] == ["visible"]
    assert [t.subject for t in tasks.list(include_internal=True)] == ["visible", "hidden"]
    assert tasks.get("2") is not None
    assert [t.id for t in tasks.available()] == ["1"]

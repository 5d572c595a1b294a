"""The per-process task board (``app.core.task_board``) behind ``claim_next`` and ``list``: a
change made by another process between two calls is seen, by inotify and by file identity
alike; a corrupt file is still an error; a copy handed out never changes the board."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import Home, TaskList, inotify, task_board
from app.core.errors import CorruptFileError

TEAM = "t"


@pytest.fixture(params=["inotify", "identity"])
def tasks(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TaskList]:
    if request.param == "identity":
        monkeypatch.setattr(inotify, "available", lambda: False)
        monkeypatch.setattr(task_board, "RACY_NS", 0)  # files written just now are trusted
    elif not inotify.available():
        pytest.skip("no inotify here")
    monkeypatch.setattr(task_board, "_boards", {})
    home = Home(tmp_path / "home")
    home.teams.create(TEAM)
    yield home.tasks(TEAM)
    for board in task_board._boards.values():
        board.close()


def rewrite_elsewhere(path: Path, **fields: object) -> None:
    """Another process rewrites the task file in place (as Node's ``writeFileSync`` does)."""
    script = (
        "import json, sys; p = sys.argv[1]; d = json.load(open(p));"
        " d.update(json.loads(sys.argv[2]));"
        " f = open(p, 'w'); f.write(json.dumps(d, indent=2)); f.close()"
    )
    subprocess.run([sys.executable, "-c", script, str(path), json.dumps(fields)], check=True)


def test_a_task_given_back_by_another_process_is_claimed_next(tasks: TaskList) -> None:
    for i in range(3):
        tasks.create(f"task {i + 1}")
    assert tasks.claim_next("a").task.id == "1"  # type: ignore[union-attr]
    assert tasks.claim_next("b").task.id == "2"  # type: ignore[union-attr]
    rewrite_elsewhere(tasks.dir / "1.json", owner=None, status="pending")
    result = tasks.claim_next("c")
    assert result is not None and result.task is not None and result.task.id == "1"
    assert tasks.get("1").owner == "c"  # type: ignore[union-attr]


def test_a_task_taken_or_finished_elsewhere_is_not_claimed(tasks: TaskList) -> None:
    for i in range(3):
        tasks.create(f"task {i + 1}")
    tasks.claim_next("warm")  # the board is built
    rewrite_elsewhere(tasks.dir / "2.json", owner="someone")
    rewrite_elsewhere(tasks.dir / "3.json", status="completed")
    assert tasks.claim_next("x") is None
    # ...and an agent given a task elsewhere is busy
    result = tasks.claim_next("someone")
    assert result is not None and result.reason == "agent_busy" and result.busy_with == ["2"]


def test_a_blocker_completed_elsewhere_unblocks(tasks: TaskList) -> None:
    tasks.create("blocker")
    tasks.create("blocked")
    tasks.add_dependency("1", "2")
    tasks.claim_next("a")  # takes #1; #2 is blocked
    assert tasks.claim_next("b") is None
    rewrite_elsewhere(tasks.dir / "1.json", status="completed")
    result = tasks.claim_next("b")
    assert result is not None and result.task is not None and result.task.id == "2"


def test_tasks_created_and_deleted_elsewhere_are_seen(tasks: TaskList, tmp_path: Path) -> None:
    tasks.create("one")
    assert [t.subject for t in tasks.list()] == ["one"]
    script = (
        "import sys; from app.core import Home; t = Home(sys.argv[1]).tasks('t');"
        " t.create('two'); t.delete('1')"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "home")], check=True)
    assert [t.subject for t in tasks.list()] == ["two"]
    assert tasks.claim_next("a").task.subject == "two"  # type: ignore[union-attr]
    subprocess.run(
        [sys.executable, "-c", script.replace("'1'", "'2'"), str(tmp_path / "home")], check=True
    )
    assert tasks.create("four").id == "4"  # after #3, made elsewhere: ids never reused


def test_a_file_corrupted_elsewhere_is_an_error_never_a_claim(tasks: TaskList) -> None:
    tasks.create("one")
    tasks.create("two")
    assert len(tasks.list()) == 2
    (tasks.dir / "1.json").write_text("{ not json")
    listed, errors = tasks.scan()
    assert [t.id for t in listed] == ["2"] and "1.json" in errors["1"]
    with pytest.raises(CorruptFileError, match="1.json"):
        tasks.get("1")
    assert tasks.claim_next("a").task.id == "2"  # type: ignore[union-attr]


def test_a_listed_task_is_the_callers_own(tasks: TaskList) -> None:
    tasks.create("one", metadata={"k": [1]})
    first = tasks.list()[0]
    first.subject = "changed"
    first.blocks.append("9")
    first.metadata["k"].append(2)  # type: ignore[index]
    again = tasks.list()[0]
    assert (again.subject, again.blocks, again.metadata) == ("one", [], {"k": [1]})

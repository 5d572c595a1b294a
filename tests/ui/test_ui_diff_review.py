"""Diff review: an Edit request's dialog shows what it would change (unified at 80 columns,
side by side at 120: snapshots), ``d`` on a teammate shows its work so far file by file and
``a`` approves its request from there; a plan's dialog lists the files its teammate touched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from app.dashboard.app import TeamDeckApp
from app.dashboard.screens.permission import PermissionScreen
from app.dashboard.screens.plan_review import PlanReviewScreen
from app.dashboard.screens.work_review import WorkReviewScreen
from app.runtime.api import Approval
from tests.ui.data import make_app, make_runtime
from tests.ui.fake_runtime import T0, FakeRuntime
from tests.ui.helpers import ready, screen_text, steady, wait_for
from widgets.diff_view import DiffView

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])

OLD = "def refresh(token):\n    return token\n\n\ndef expires(token):\n    return 0\n"
EDIT_ID = "perm-1767225700000@researcher"


def git(cwd: Path, *args: str) -> None:
    when = f"@{int(T0 - 3600)} +0000"  # before the agents started (T0)
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, env=env, check=True, capture_output=True,
    )  # fmt: skip


def project(root: Path) -> Path:
    """A git project: auth.py committed before the team started, then changed and a new
    notes.md (the work so far)."""
    folder = root / "project"
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / "auth.py").write_text(OLD)
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "start")
    (folder / "auth.py").write_text(OLD.replace("return 0", "return 3600"))
    (folder / "notes.md").write_text("# Notes\n\nrefresh before expiry\n")
    return folder


def edit_runtime(root: Path) -> FakeRuntime:
    runtime = make_runtime()
    runtime.cwd = project(root)
    del runtime._approvals["perm-1767225650000@researcher"]  # the Edit is researcher's request
    edit = {
        "file_path": str(runtime.cwd / "auth.py"),
        "old_string": "def refresh(token):\n    return token\n",
        "new_string": "def refresh(token, now):\n    return token.renew(now)\n",
    }
    runtime.add_approval(
        Approval(EDIT_ID, "permission", "researcher", "researcher: Edit",
                 body=str(edit), tool_name="Edit", tool_input=edit, created_at=T0 + 70)
    )  # fmt: skip
    return runtime


async def open_request(pilot: Pilot[Any], request_id: str, screen: type) -> None:
    app = await ready(pilot)
    await wait_for(pilot, lambda: any(a.request_id == request_id for a in app.approvals))
    approval = next(a for a in app.approvals if a.request_id == request_id)
    app.leader.open_approval(approval)
    await wait_for(pilot, lambda: isinstance(app.screen, screen))
    await steady(pilot)


@SIZES
def test_edit_request_shows_its_diff(snap_compare: Any, tmp_path: Path, size: Any) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await open_request(pilot, EDIT_ID, PermissionScreen)

    app = make_app(tmp_path, edit_runtime(tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_edit_diff_is_unified_narrow_and_side_by_side_wide(tmp_path: Path) -> None:
    for size, side_by_side in (((80, 24), False), ((120, 40), True)):
        root = tmp_path / f"{size[0]}"
        root.mkdir()
        app = make_app(root, edit_runtime(root))
        async with app.run_test(size=size) as pilot:
            await open_request(pilot, EDIT_ID, PermissionScreen)
            text = screen_text(app)
            assert "auth.py" in text and "+2 -2" in text
            assert "token.renew(now)" in text
            # side by side: the old line and its new one on the same row
            row = next(line for line in text.splitlines() if "refresh(token, now)" in line)
            assert ("refresh(token):" in row) is side_by_side, row


async def test_d_shows_the_work_so_far_and_a_approves_from_there(tmp_path: Path) -> None:
    runtime = edit_runtime(tmp_path)
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("1")  # researcher
        await wait_for(pilot, lambda: app.leader.selection == "researcher")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, WorkReviewScreen))
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "researcher's work so far · file 1 of 2" in text
        assert "auth.py" in text and "return 3600" in text
        assert "Pending: researcher's Edit request" in text
        await pilot.press("right_square_bracket")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert "file 2 of 2" in text and "notes.md" in text and "refresh before expiry" in text
        assert app.screen.query_one(DiffView).diff is not None
        await pilot.press("left_square_bracket")
        await pilot.pause(0.1)
        assert "file 1 of 2" in screen_text(app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not isinstance(app.screen, WorkReviewScreen))
        await wait_for(pilot, lambda: any(c[1:2] == (EDIT_ID,) for c in runtime.calls))
        assert ("answer_permission", EDIT_ID, True, False) in runtime.calls


async def test_a_plan_lists_the_files_its_teammate_touched(tmp_path: Path) -> None:
    runtime = edit_runtime(tmp_path)
    app = make_app(tmp_path, runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_request(pilot, "plan_approval-1767225630000@engineer", PlanReviewScreen)
        text = screen_text(app)
        assert "Files touched so far: auth.py (+1 -1), notes.md (new, +3 -0)" in text


async def test_d_outside_a_repository_says_so_in_one_line(tmp_path: Path) -> None:
    app: TeamDeckApp = make_app(tmp_path, make_runtime())
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("2", "d")  # engineer
        await wait_for(pilot, lambda: isinstance(app.screen, WorkReviewScreen))
        await pilot.pause(0.2)
        assert "not a git repository: no diff to show" in screen_text(app)
        await pilot.press("a")  # engineer's plan is pending: approved from here too
        await wait_for(pilot, lambda: not isinstance(app.screen, WorkReviewScreen))

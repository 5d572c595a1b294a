"""Two goals in a row in one dashboard, in a real terminal (tmux): ``teamdeck --home H`` on
the offline model, a first goal typed, its plan approved with keys, the team finishes; then a
second goal typed into the same dashboard. While the second team waits for its plan, the screen
shows its panels (names, statuses, counts) and nothing of the first team (header, board,
feed). Skipped where tmux is not installed."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from tests.ui.test_demo_tmux import Tmux, _teamdeck, digits

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

FIRST = "Describe the python files in this project"
SECOND = "Describe the markdown docs in this project"
SIDE = 31  # columns of the left side (team panels, approvals) at 120x40


def side(screen: str) -> str:
    """The team panels and the approvals queue (the left column)."""
    return "\n".join(line[:SIDE] for line in screen.splitlines()[1:])


def panel(screen: str, title: str) -> str:
    """The right-hand panel whose top border carries ``title``, as text."""
    lines = [line[SIDE:] for line in screen.splitlines()[1:]]
    start = next(i for i, line in enumerate(lines) if f"─ {title}" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("╰"))
    return "\n".join(lines[start + 1 : end])


def type_goal(tmux: Tmux, goal: str) -> None:
    tmux.run("send-keys", "-t", tmux.session, "-l", goal)
    tmux.keys("Enter")


def approve_the_plan(tmux: Tmux, screen: str) -> None:
    tmux.keys("Escape")  # out of the input: keys act
    time.sleep(0.5)  # an escape right before a key would read as alt+key
    tmux.keys(*digits(screen, "awaiting"), "a")


def test_a_second_goal_shows_only_the_second_team(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "alpha.py").write_text('"""Alpha: the first module."""\n')
    (project / "beta.py").write_text('"""Beta: the second module."""\n')
    (project / "guide.md").write_text("# Guide\n\nHow to use it.\n")
    home = tmp_path / "home"
    env = {
        "TEAMDECK_OFFLINE_PACE": "0.002",
        "TERM": "xterm-256color",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "HOME": str(tmp_path),
    }
    tmux = Tmux(tmp_path, 120, 40)
    tmux.start(f"sh -c 'cd {project} && {_teamdeck()} --home {home}; echo EXIT=$?'", env)
    try:
        tmux.wait_for(lambda s: "Type a goal for the lead" in s, "the first screen")
        type_goal(tmux, FIRST)
        screen = tmux.wait_for(lambda s: "writer" in s and "awaiting" in s, "the first plan")
        approve_the_plan(tmux, screen)
        first = tmux.wait_for(
            lambda s: "run finished" in s and side(s).count("completed") == 3,
            "the first team to finish",
        )
        assert "describe-python-files (deleted)" in first.splitlines()[0]
        assert "approved shutdown" in panel(first, "Messages")  # the first team's last lines

        tmux.keys("n")  # a new goal
        time.sleep(0.3)
        type_goal(tmux, SECOND)
        screen = tmux.wait_for(
            lambda s: "describe-markdown-docs" in s.splitlines()[0] and "awaiting" in s,
            "the second team's plan",
        )
        # The toasts (drawn over the board and feed) have gone, and the two whose tasks are
        # done have ended their turns (a status lags its task by a moment: the plan may come
        # first, and toasts no longer wait five seconds each).
        screen = tmux.wait_for(
            lambda s: (
                "▌" not in "".join(line[SIDE:] for line in s.splitlines())
                and bool(re.search(r"researcher +idle", side(s)))
                and bool(re.search(r"analyst +idle", side(s)))
            ),
            "no toasts, the researcher and the analyst idle",
        )
        header = screen.splitlines()[0]
        assert "describe-python-files" not in header and "(deleted)" not in header
        assert "3 teammates" in header and "1 open task" in header
        assert "1 pending approval" in header
        team = side(screen)
        panels = re.findall(r"[▌▶](\d) (\S+)", team)  # each panel's first line: key, name
        assert panels == [
            ("0", "team-lead"),
            ("1", "researcher"),
            ("2", "analyst"),
            ("3", "writer"),
        ]
        assert re.search(r"researcher +idle", team) and re.search(r"analyst +idle", team)
        assert re.search(r"writer +awaiting", team)
        assert "completed" not in team  # nobody of the finished team
        board = panel(screen, "Tasks (1 open)")
        assert re.search(r"1 +Inventory the files +completed +researcher", board)
        assert re.search(r"3 +Summarize what each file does +(pending|in_progress) +writer", board)
        feed = panel(screen, "Messages")
        # The second team found the one Markdown file; the first had found two Python files.
        assert "Found 1 files in 1 folder" in feed and "Found 2 files" not in feed, feed
        assert ".py" not in feed and "shutdown" not in feed, feed  # the first team's are gone

        approve_the_plan(tmux, screen)
        screen = tmux.wait_for(
            lambda s: "describe-markdown-docs (deleted)" in s, "the second team to finish"
        )
        time.sleep(0.5)
        tmux.keys("C-q")
        tmux.wait_for(lambda s: "EXIT=0" in s, "the dashboard to quit")
    finally:
        tmux.kill()

"""Keys that do only what the person means, in a real terminal (tmux), issue 30.

H1: in a teammate's view with a request pending, the keys a newcomer pressed (esc to use a
key, enter expecting to type again, then a sentence) approved the request and shut the
teammate down, and the text was lost. Now typing is a mode: text goes only into the compose
box, and a letter outside it is a command or ignored with a hint. Skipped where tmux is not
installed.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.ui.test_demo_tmux import Tmux, _teamdeck, demo_env, demo_homes

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

REQUEST = "▶ researcher: Bash waiting"
TYPING = "typing — esc to leave"


def inbox(tmp_path: Path, name: str) -> str:
    """``name``'s inbox in the demo's team, as text ("" before it exists)."""
    [home] = demo_homes(tmp_path)
    found = sorted(home.glob(f"teams/*/inboxes/{name}.json"))
    return found[0].read_text(encoding="utf-8") if found else ""


def nothing_acted(tmp_path: Path, screen: str) -> None:
    """The researcher's request still waits and nobody asked it to shut down."""
    assert REQUEST in screen, screen
    assert "shutdown" not in inbox(tmp_path, "researcher")
    assert "shutting down" not in screen and "Ask researcher" not in screen, screen


def open_researchers_view(tmux: Tmux) -> None:
    tmux.wait_for(lambda s: REQUEST in s, "the researcher's request, named above the footer")
    tmux.keys("1")
    time.sleep(0.5)  # a person reads the line before the next key
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "researcher · " in s and REQUEST in s, "the researcher's view")
    time.sleep(0.5)  # the view just opened: a letter within 0.3 s is ignored


def test_h1_keys_in_a_teammates_view_keep_the_text_and_answer_nothing(tmp_path: Path) -> None:
    tmux = Tmux(tmp_path, 80, 24)
    tmux.start(_teamdeck() + " demo; echo EXIT=$?", demo_env(tmp_path))
    try:
        open_researchers_view(tmux)
        tmux.keys("Enter")  # the compose box: typing is a mode one can see
        tmux.wait_for(lambda s: TYPING in s, "the compose box")
        # H1's keys: esc (to use a key), enter (expecting to type again), then a sentence.
        tmux.keys("Escape")
        tmux.keys("Enter")
        tmux.keys("-l", "please summarize")
        screen = tmux.wait_for(lambda s: "please summarize" in s, "the text in the box")
        assert TYPING in screen, screen
        time.sleep(1.0)  # whatever the letters could have done has been done
        screen = tmux.screen()
        nothing_acted(tmp_path, screen)
        assert "please summarize" in screen, screen
        tmux.keys("Enter")  # sends it; the box closes, the keys act again
        tmux.wait_for(
            lambda s: TYPING not in s and "please summarize" in s, "the message in its transcript"
        )
        nothing_acted(tmp_path, tmux.screen())
    finally:
        tmux.kill()


def test_letters_outside_the_box_and_esc_with_a_letter_answer_nothing(tmp_path: Path) -> None:
    """A sentence typed into no box is ignored with a hint, letter by letter; esc with a
    letter right after it (a terminal reads alt+letter) is esc, the letter ignored."""
    tmux = Tmux(tmp_path, 80, 24)
    tmux.start(_teamdeck() + " demo; echo EXIT=$?", demo_env(tmp_path))
    try:
        open_researchers_view(tmux)
        tmux.keys("-l", "please summarize")  # no box open
        screen = tmux.wait_for(lambda s: "no key here" in s, "the hint")
        time.sleep(1.0)
        nothing_acted(tmp_path, tmux.screen())
        time.sleep(0.5)
        tmux.keys("Escape", "a")  # one read: alt+a
        screen = tmux.wait_for(lambda s: "researcher · " not in s, "the leader view")
        time.sleep(1.0)
        screen = tmux.screen()
        nothing_acted(tmp_path, screen)
    finally:
        tmux.kill()


def offline_env(tmp_path: Path) -> dict[str, str]:
    return {
        "TEAMDECK_OFFLINE_PACE": "0.002",
        "TERM": "xterm-256color",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "HOME": str(tmp_path),
    }


def test_h2_a_pasted_goal_keeps_every_line_and_waits_for_enter(tmp_path: Path) -> None:
    """Eight pasted lines (~800 characters) stay eight lines in the compose box, and nothing
    starts until enter sends them all."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "alpha.py").write_text('"""Alpha: the first module."""\n')
    home = tmp_path / "home"
    lines = [
        f"Line {n}: describe the python files of this project, {'x' * 50} end{n}"
        for n in range(1, 9)
    ]
    goal = "\n".join(lines)
    assert len(goal) > 700
    (tmp_path / "goal.txt").write_text(goal)
    tmux = Tmux(tmp_path, 100, 30)
    tmux.start(
        f"sh -c 'cd {project} && {_teamdeck()} --home {home}; echo EXIT=$?'", offline_env(tmp_path)
    )
    try:
        tmux.wait_for(lambda s: "Type a goal for the lead" in s and TYPING in s, "the first screen")
        tmux.run("load-buffer", "-b", "goal", str(tmp_path / "goal.txt"))
        tmux.run("paste-buffer", "-p", "-b", "goal", "-t", tmux.session)  # bracketed, as a terminal
        screen = tmux.wait_for(lambda s: f"8 lines · {len(goal)} chars" in s, "the pasted lines")
        time.sleep(1.5)  # a paste sends nothing
        screen = tmux.screen()
        assert "no team yet" in screen.splitlines()[0], screen
        assert not (home / "teams").exists() or not any((home / "teams").iterdir())
        assert "end8" in screen, screen  # the box shows where the cursor is: the last line
        tmux.keys("Enter")
        screen = tmux.wait_for(
            lambda s: TYPING not in s and "no team yet" not in s.splitlines()[0], "the team"
        )
        assert "line-1-describe" in screen.splitlines()[0]  # the goal's team (the Pilot test
        # test_ui_compose.py checks that enter sends every line)
    finally:
        tmux.kill()


def test_h3_the_team_resumed_is_never_offered_for_deletion(tmp_path: Path) -> None:
    """``teamdeck --team alpha`` on a home where alpha was left: the start-up dialog of teams
    left on disk does not list it (here it is the only one: no dialog), and ``d`` deletes
    nothing."""
    from tests.ui.data import TEAM, build_home

    home = build_home(tmp_path / "home")
    project = tmp_path / "project"
    project.mkdir()
    tmux = Tmux(tmp_path, 80, 24)
    command = f"{_teamdeck()} --home {home.root} --team {TEAM}"
    tmux.start(f"sh -c 'cd {project} && {command}; echo EXIT=$?'", offline_env(tmp_path))
    try:
        tmux.wait_for(lambda s: TEAM in s.splitlines()[0], "the team resumed")
        time.sleep(2.0)  # the dialog would be up by now
        screen = tmux.screen()
        assert "left on disk" not in screen, screen
        tmux.keys("d")
        time.sleep(1.0)
        assert (home.root / "teams" / TEAM / "config.json").exists()
        assert "(deleted)" not in tmux.screen().splitlines()[0]
    finally:
        tmux.kill()

"""Keys that do only what the person means, in a real terminal (tmux), issue 30.

H1: in a teammate's view with a request pending, the keys a newcomer pressed (esc to use a
key, enter expecting to type again, then a sentence) approved the request and shut the
teammate down, and the text was lost. Now typing is a mode: text goes only into the compose
box, and a letter outside it is a command or ignored with a hint. Skipped where tmux is not
installed.
"""

from __future__ import annotations

import json
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
        tmux.wait_for(lambda s: TYPING not in s, "the box to close")
        [sent] = [m for m in json.loads(inbox(tmp_path, "researcher")) if m["from"] == "user"]
        assert sent["text"] == "please summarize"
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

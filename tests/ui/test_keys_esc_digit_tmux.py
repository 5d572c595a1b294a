"""H1's second case in a real terminal (tmux), issue 30: ``esc 3 a enter`` typed fast in the
compose box of a teammate's view with a request pending, then a sentence.

The terminal sends ``esc`` and the ``3`` right after it as one sequence. Textual read it as
"£" (the character WezTerm on macOS sends for Option+3): the box stayed open, "£a" joined the
text, enter sent it, and the sentence typed next ran as commands (its first ``a`` allowed the
researcher's Bash request, its ``d`` opened the diffs). Now it is esc (the 3 ignored with a
hint), the keys read with it are not typed, and the letters after it wait out the key guard.
Skipped where tmux is not installed.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from tests.ui.test_demo_tmux import Tmux, _teamdeck, demo_env
from tests.ui.test_keys_tmux import TYPING, inbox, nothing_acted, open_researchers_view

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def hi_in_the_researchers_box(tmp_path: Path) -> Tmux:
    """The demo at 80x24, in the researcher's view with its request pending, "hi" typed in
    the compose box."""
    tmux = Tmux(tmp_path, 80, 24)
    tmux.start(_teamdeck() + " demo; echo EXIT=$?", demo_env(tmp_path))
    try:
        open_researchers_view(tmux)
        tmux.keys("Enter")  # the compose box
        tmux.wait_for(lambda s: TYPING in s, "the compose box")
        tmux.keys("-l", "hi")
        tmux.wait_for(lambda s: "1 line · 2 chars" in s, "the text in the box")
    except BaseException:
        tmux.kill()
        raise
    return tmux


def test_h1_esc_3_a_enter_in_the_box_sends_nothing_and_answers_nothing(tmp_path: Path) -> None:
    tmux = hi_in_the_researchers_box(tmp_path)
    try:
        tmux.keys("Escape", "3", "a", "Enter")  # one read, as typed fast
        tmux.keys("-l", "add a line about calc.div")
        tmux.wait_for(lambda s: "Key ignored" in s or "› you:" in s, "a hint (or the message)")
        time.sleep(1.5)  # whatever the keys could have done has been done
        screen = tmux.screen()
        nothing_acted(tmp_path, screen)
        assert "Work so far" not in screen and "work so far" not in screen, screen  # no d
        sent = inbox(tmp_path, "researcher")
        assert "£" not in sent and "calc.div" not in sent and '"hi' not in sent, sent
        assert "› you:" not in screen, screen  # nothing was sent
        if TYPING not in screen:  # the enter read with the esc may have opened it again
            time.sleep(0.5)
            tmux.keys("i")
            screen = tmux.wait_for(lambda s: TYPING in s, "the compose box again")
        # The text is kept, and only it: no "£", no letter of the keys read with the esc
        # (the sentence may follow it, typed into the box the enter opened: text, not keys).
        box = screen[screen.index(TYPING) :]
        assert re.search(r"▊ hi(add a line about calc\.div)? +▎", box), box
        nothing_acted(tmp_path, screen)
    finally:
        tmux.kill()


def test_h1_esc_and_enter_typed_fast_keep_the_text_and_send_nothing(tmp_path: Path) -> None:
    """esc then enter a few milliseconds apart (one read) with text in the box: the parser read
    them as enter alone and sent the text; now the box stays open with it, still typing."""
    tmux = hi_in_the_researchers_box(tmp_path)
    try:
        tmux.keys("Escape", "Enter")  # one read, as typed fast
        tmux.keys("-l", " please summarize")
        screen = tmux.wait_for(lambda s: "hi please summarize" in s, "the sentence in the box")
        assert TYPING in screen, screen
        time.sleep(1.0)  # whatever the keys could have done has been done
        screen = tmux.screen()
        nothing_acted(tmp_path, screen)
        assert "› you:" not in screen, screen  # nothing was sent
        assert '"hi' not in inbox(tmp_path, "researcher")
    finally:
        tmux.kill()

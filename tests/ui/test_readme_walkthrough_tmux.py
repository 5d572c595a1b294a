"""README's demo walkthrough, keystroke for keystroke, in a real terminal (tmux) at 80x24 and
120x40 (issue 19): no key before the ones README names. Skipped where tmux is not installed."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from tests.ui.test_demo_tmux import Tmux, _teamdeck, demo_env, demo_homes

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

README = Path(__file__).parents[2] / "README.md"
DIALOG = re.compile(r"Allow once \(y/a\)|Approve \(a\)")
#: The "needs you" line above the footer, naming the request a / r / v answer.
NEEDS = re.compile(r"▶ (researcher: Bash|writer's plan)(\(wc -l[^)]*\))? waiting")


def walkthrough() -> str:
    text = README.read_text(encoding="utf-8")
    return text[text.index("<!-- demo walkthrough -->") : text.index("<!-- end of the demo")]


def test_readme_names_the_keys_this_test_presses() -> None:
    steps = walkthrough()
    assert "`teamdeck demo`" in steps
    assert "press `v`" in steps and "then `a`" in steps and "`ctrl+q`" in steps
    assert "esc" not in steps  # nothing to press before the keys
    # The writer's task is blocked by the researcher's, so its plan comes second: the README
    # once said "in either order", and a newcomer waited for a plan that could not come yet.
    assert "either order" not in steps and "one after the other" in steps
    assert steps.index("The researcher asks") < steps.index("the writer asks you to approve")
    assert "▶ researcher: Bash(wc -l …) waiting" in steps and "▶ writer's plan waiting" in steps


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_readme_demo_walkthrough_works_as_written(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    tmux = Tmux(tmp_path, *size)
    tmux.start(_teamdeck() + " demo; echo EXIT=$?", demo_env(tmp_path))
    try:
        answered: list[str] = []
        while len(answered) < 2:  # the researcher's wc -l, then the writer's plan
            screen = tmux.wait_for(
                lambda s: NEEDS.search(s) is not None, "the needs-you line to name a request"
            )
            named = NEEDS.search(screen)
            assert named is not None
            # A person reads the line before the key (a letter within 0.3 s of a dialog
            # closing is ignored, with a hint: the key guard).
            time.sleep(0.5)
            tmux.keys("v")  # README: press v to read it...
            tmux.wait_for(lambda s: DIALOG.search(s) is not None, "its dialog")
            tmux.keys("a")  # ...then a
            shown = named.group(0)
            # The dialog has a footer of its own: the view's ("? Help ...") is back once the
            # dialog is closed, and the line names the next request once this one is answered.
            tmux.wait_for(
                lambda s: not DIALOG.search(s) and "? Help" in s and shown not in s,  # noqa: B023
                "the dialog to close and the request to be answered",
            )
            answered.append(named.group(1))
        assert answered == ["researcher: Bash", "writer's plan"]  # in the README's order
        screen = tmux.wait_for(lambda s: "(deleted)" in s, "the team to be deleted")
        tmux.keys("C-q")  # README: ctrl+q quits
        tmux.wait_for(lambda s: "EXIT=0" in s, "the demo to exit")
        assert demo_homes(tmp_path) == []
    finally:
        tmux.kill()

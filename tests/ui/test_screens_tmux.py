"""The header and the footer in a real terminal (tmux) at 80x24 and 120x40 (issue 19): with
demo, a permission mode, "(deleted)" and the cost the header still fits and keeps what
matters; a footer naming a long request keeps K Kill. Skipped where tmux is not installed."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from tests.ui.test_demo_tmux import Tmux, _teamdeck, demo_env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

REQUEST = re.compile(r"▶ (researcher: Bash|writer's plan)")


def rows(screen: str) -> list[str]:
    return [row for row in screen.splitlines() if row.strip()]


def settled(tmux: Tmux) -> str:
    """The screen once two captures a moment apart agree (not caught mid-redraw)."""
    last = [""]

    def same(screen: str) -> bool:
        agree, last[0] = screen == last[0], screen
        time.sleep(0.3)
        return agree

    return tmux.wait_for(same, "the screen to settle")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_header_and_footer_keep_what_matters(tmp_path: Path, size: tuple[int, int]) -> None:
    width = size[0]
    tmux = Tmux(tmp_path, *size)
    tmux.start(_teamdeck() + " demo; echo EXIT=$?", demo_env(tmp_path))
    try:
        for _ in range(2):  # the researcher's wc -l and the writer's plan, in either order
            tmux.wait_for(lambda s: REQUEST.search(s) is not None, "a named request")
            screen = settled(tmux)
            footer, needs = rows(screen)[-1], rows(screen)[-2]
            assert REQUEST.search(needs) and "K Kill" in footer, screen  # the steering keys stay
            for key in ("a Approve", "r Reject", "v Review", "s Shutdown"):
                assert key in footer, footer
            named = REQUEST.search(needs)
            assert named is not None
            tmux.keys("a")
            tmux.wait_for(lambda s: named.group(0) not in s, "the request to be answered")  # noqa: B023
        tmux.keys("BTab")  # shift+tab: the lead's permission mode, shown in the header
        screen = tmux.wait_for(
            lambda s: "(deleted)" in rows(s)[0] and "⏵⏵ accept edits" in rows(s)[0],
            "the deleted team's header with its mode",
        )
        header = rows(settled(tmux))[0]
        assert len(header.rstrip()) <= width - 1, header
        assert header.rstrip().endswith(" · $0"), header  # the cost stays, and "offline"...
        assert " · offline · " in header and "sandbox" in header, header  # ...and the sandbox
        # the mode stays whole at every width ("on" goes first at a narrow one)
        assert "demo" in header and "⏵⏵ accept edits" in header, header
        tmux.keys("C-q")
        tmux.wait_for(lambda s: "EXIT=0" in s, "the demo to exit")
    finally:
        tmux.kill()

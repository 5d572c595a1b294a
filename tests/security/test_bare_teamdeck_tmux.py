"""A bare ``teamdeck`` (what ``make run`` starts) is exactly ``teamdeck tui``: the sandbox and
the settings files' modes and rules apply, and its header says so, in a real terminal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.runtime.sandbox import bwrap_problem
from tests.ui.test_demo_tmux import Tmux, _teamdeck

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"{bwrap_problem()}"),
]


def header(screen: str) -> str:
    return (screen.splitlines() or [""])[0]


@pytest.mark.parametrize("words", [[], ["tui"]])
def test_bare_says_sandbox(tmp_path: Path, words: list[str]) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    # The settings file's mode reaches the bare dashboard too.
    (project / ".claude" / "settings.json").write_text(
        '{"permissions": {"defaultMode": "acceptEdits"}}'
    )
    env = {
        "TEAMDECK_OFFLINE_PACE": "0",
        "TERM": "xterm-256color",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "HOME": str(tmp_path),
        "TEAMDECK_HOME": str(tmp_path / "home"),
    }
    tmux = Tmux(tmp_path, 100, 30)
    tmux.start(f"sh -c 'cd {project} && {_teamdeck()} {' '.join(words)}'", env)
    try:
        screen = tmux.wait_for(lambda s: "open" in header(s), "the header")
        line = header(screen)
        assert " · sandbox" in line and "no sandbox" not in line, line
        assert "accept edits" in line.lower(), line
    finally:
        tmux.kill()

"""``teamdeck demo`` in a real terminal (tmux): approve the plan with `a`; the team finishes.

Drives the installed console script exactly as a person would: send-keys to type, capture-pane
to read the screen. Skipped where tmux is not installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

HANG_GUARD = 90.0  # seconds: only catches a hang, never a speed assertion


class Tmux:
    def __init__(self, tmp_path: Path, width: int, height: int) -> None:
        self.socket = str(tmp_path / "tmux.sock")
        self.session = f"demo-{uuid.uuid4().hex[:6]}"
        self.width, self.height = width, height

    def run(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=20
        )
        return result.stdout

    def start(self, command: str, env: dict[str, str]) -> None:
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        self.run(
            "new-session",
            "-d",
            "-s",
            self.session,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            f"env {exports} {command}; sleep 30",
        )

    def screen(self) -> str:
        return self.run("capture-pane", "-t", self.session, "-p")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def wait_for(self, predicate: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + HANG_GUARD
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")

    def kill(self) -> None:
        self.run("kill-server")


def digits(screen: str, status: str) -> list[str]:
    """The jump keys of the teammates whose panel shows ``status``."""
    return re.findall(rf"[▌▶]([1-9]) \S+ +{status}", screen)


def _teamdeck() -> str:
    script = Path(sys.executable).with_name("teamdeck")
    return str(script) if script.exists() else f"{sys.executable} -m app.cli"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_demo_runs_to_completion_with_keys(tmp_path: Path, size: tuple[int, int]) -> None:
    tmux = Tmux(tmp_path, *size)
    env = {
        "TEAMDECK_OFFLINE_PACE": "0.002",
        "TERM": "xterm-256color",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "HOME": str(tmp_path),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    assert "ANTHROPIC_API_KEY" not in env
    tmux.start(_teamdeck() + " demo", env)
    try:
        screen = tmux.wait_for(lambda s: "awaiting appr" in s, "a teammate awaiting approval")
        assert "writer" in screen
        tmux.keys("Escape")  # out of the lead's input: keys act
        time.sleep(0.5)  # an escape right before a key would read as alt+key
        tmux.keys(*digits(screen, "awaiting"), "a")  # select the writer, approve its plan
        # All tasks done -> the lead asks everyone to shut down -> each teammate answers its
        # own shutdown request (the person is not asked) -> the lead deletes the team.
        screen = tmux.wait_for(lambda s: "(deleted)" in s, "the team to be deleted")
        assert "completed" in screen
    finally:
        tmux.kill()

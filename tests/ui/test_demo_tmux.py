"""``teamdeck demo`` in a real terminal (tmux): approve the plan with `a`; the team finishes.

Drives the installed console script exactly as a person would: send-keys to type, capture-pane
to read the screen. Skipped where tmux is not installed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.timing import scaled

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

HANG_GUARD = 90.0  # seconds: only catches a hang, never a speed assertion


class Tmux:
    def __init__(self, tmp_path: Path, width: int, height: int) -> None:
        self.root = tmp_path
        self.socket = str(tmp_path / "tmux.sock")
        self.session = f"demo-{uuid.uuid4().hex[:6]}"
        self.width, self.height = width, height

    def run(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=20
        )
        return result.stdout

    def start(self, command: str, env: dict[str, str]) -> None:
        # Without -u, the pane inherits COLUMNS=80 LINES=24 from a pytest process (readline
        # exports them) and the app draws 80x24 whatever the pane's size.
        exports = " ".join(["-u COLUMNS -u LINES", *(f"{k}={v}" for k, v in env.items())])
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
        deadline = time.monotonic() + scaled(HANG_GUARD)
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")

    def kill(self) -> None:
        self.run("kill-server")
        stop_left_behind(self.root)


def stop_left_behind(root: Path) -> None:
    """End the teammate processes the test's dashboard left running under ``root``: they
    outlive their dashboard by design (``teamdeck attach`` adopts them), and a resumed team's
    went on after the test with the fork server that started them. Each is known by ``root``
    in its command line or its environment (``HOME``: a forked teammate carries the fork
    server's command line until it names itself). The dashboard is left to quit its own way
    (the hangup: some tests check what it does then)."""
    give_up = time.monotonic() + 10
    while (left := _processes_under(root)) and time.monotonic() < give_up:
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _processes_under(root: Path) -> list[int]:
    """The teammate processes and fork servers whose command line or environment names
    ``root``."""
    found = []
    mark = str(root).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes()
            if b"app.runtime.agent_main" not in argv and b"runners.forkserver" not in argv:
                continue
            if mark in argv or mark in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def digits(screen: str, status: str) -> list[str]:
    """The jump keys of the teammates whose panel shows ``status``."""
    return re.findall(rf"[▌▶]([1-9]) \S+ +{status}", screen)


def _teamdeck() -> str:
    script = Path(sys.executable).with_name("teamdeck")
    return str(script) if script.exists() else f"{sys.executable} -m app.cli.main"


def demo_env(tmp_path: Path) -> dict[str, str]:
    """An offline, fast demo whose temporary home goes into ``tmp_path / "tmp"``."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {
        "TEAMDECK_OFFLINE_PACE": "0.002",
        "TERM": "xterm-256color",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    assert "ANTHROPIC_API_KEY" not in env
    return env


def demo_homes(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "tmp").glob("teamdeck-demo-*"))


def wait_until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + scaled(HANG_GUARD)
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.mark.parametrize(("size", "answer"), [((80, 24), "y"), ((120, 40), "A")])
def test_demo_runs_to_completion_with_keys(
    tmp_path: Path, size: tuple[int, int], answer: str
) -> None:
    """The demo meets each kind of request a person answers: the researcher's ``wc -l``
    (a permission: y allows it once, A always) and the writer's plan (a approves it). The
    teammates answer their own shutdown requests; quitting removes the demo's home."""
    tmux = Tmux(tmp_path, *size)
    tmux.start(_teamdeck() + " demo; echo EXIT=$?", demo_env(tmp_path))
    try:
        # The writer's plan may come before, with or after it (its claim races the lead's).
        tmux.wait_for(lambda s: "1" in digits(s, "awaiting"), "the researcher's request")
        [home] = demo_homes(tmp_path)
        tmux.keys("Escape")  # out of the lead's input: keys act
        time.sleep(0.5)  # an escape right before a key would read as alt+key
        tmux.keys("1", "v")  # select the researcher, review its request
        screen = tmux.wait_for(lambda s: "wants to use Bash" in s, "the permission dialog")
        assert "wc -l" in screen and "Always allow adds the rule Bash(wc:*)" in screen
        tmux.keys(answer)
        # A person reads the footer before the next key: the view's own ("? Help", hidden
        # under the dialog) is back and names the writer's plan.
        screen = tmux.wait_for(
            lambda s: (
                "wants to use Bash" not in s
                and digits(s, "awaiting") == ["3"]  # only
                and "? Help" in s
                and "▶ writer's plan waiting" in s
            ),
            "the dialog closed and the needs-you line naming the writer's plan",
        )
        time.sleep(0.5)  # a letter within 0.3 s of a dialog closing is ignored (key guard)
        tmux.keys(*digits(screen, "awaiting"), "a")  # select the writer, approve its plan
        # All tasks done -> the lead asks everyone to shut down -> each teammate answers its
        # own shutdown request (the person is not asked) -> the lead deletes the team.
        screen = tmux.wait_for(lambda s: "(deleted)" in s, "the team to be deleted")
        assert "completed" in screen
        rules = (home / "settings.local.json").read_text() if answer == "A" else ""
        assert ("Bash(wc:*)" in rules) == (answer == "A")  # only "always" writes a rule
        time.sleep(0.5)
        tmux.keys("C-q")  # the team is gone: quits without asking
        tmux.wait_for(lambda s: "EXIT=0" in s, "the demo to exit")
        assert demo_homes(tmp_path) == [], "the demo left its temporary home behind"
    finally:
        tmux.kill()


def test_closing_the_terminal_mid_run_removes_the_demo_home(tmp_path: Path) -> None:
    """The terminal goes away (SIGHUP) while the team works: the demo quits the normal way
    and its temporary home goes with it."""
    tmux = Tmux(tmp_path, 80, 24)
    tmux.start(_teamdeck() + " demo", demo_env(tmp_path))
    try:
        tmux.wait_for(lambda s: "awaiting" in s, "the team at work")
        [home] = demo_homes(tmp_path)
        assert (home / "teams").is_dir()
    finally:
        tmux.kill()  # the pane's processes get SIGHUP
    wait_until(lambda: demo_homes(tmp_path) == [], "the demo's home to be removed")

"""The real Claude Code run interactively, in tmux, next to teamdeck.

Teams form only in interactive sessions (2.1.332: ``-p`` runs an ``Agent`` call as a background
subagent), so the teammate tests start ``claude PROMPT`` in a terminal of their own tmux server
(the prompt is submitted at start: no typing), with ``teammateMode`` set in its settings. A
pane teammate runs in a tmux server Claude Code starts itself (``tmux -L claude-swarm-<pid>``);
``TMUX_TMPDIR`` puts its socket in the test's own short temporary folder, so the test can stop
it, and nothing of another test's or the person's.

``teamdeck --claude`` (the dashboard) runs in a second terminal of the same server: keys go to
it with ``send-keys``, what it shows is read with ``capture-pane``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.runtime.bridge import client as bridge_client
from app.runtime.bridge import wire
from tests.claude_code.conftest import ClaudeHome
from tests.claude_code.server import Rule, call
from tests.timing import scaled

ROOT = Path(__file__).resolve().parents[2]

SPAWN = {
    "description": "worker task",
    "prompt": "WORKER TASK: please run the command",
    "name": "worker",
    "subagent_type": "general-purpose",
}


def teamdeck_command() -> str:
    script = Path(sys.executable).with_name("teamdeck")
    return str(script) if script.exists() else f"{sys.executable} -P -m app.cli.main"


def teamdeck(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "app.cli.main", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def held(env: dict[str, str]) -> list[dict[str, Any]]:
    """The requests the teamdeck listening in ``env``'s home holds, asked over its socket from
    this process: what ``teamdeck approvals --json`` lists, without starting a ``teamdeck``
    (a quarter of a second of CPU each look). Waits poll this; what a test then checks is read
    once through the CLI."""
    found = bridge_client.pending_requests(wire.socket_path(Path(env["TEAMDECK_HOME"])))
    return found or []


def wait_until(predicate: Callable[[], Any], what: str, within: float = 60.0) -> Any:
    """``predicate()``'s first truthy value, polled; a hang guard, not a speed check."""
    end = time.monotonic() + scaled(within)
    start = time.monotonic()
    while time.monotonic() < end:
        value = predicate()
        if value:
            if os.environ.get("TD_TIMING"):
                print(f"{time.monotonic() - start:6.2f}s {what}")
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Terminals:
    """A tmux server of the test's own: one window per program."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.socket = str(folder / "tmux.sock")
        self.started = False

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=20
        )
        return done.stdout

    def start(self, name: str, command: list[str], env: dict[str, str], cwd: Path) -> None:
        """``command`` in window ``name``, with exactly ``env`` (nothing of the test's)."""
        line = shlex.join(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *command])
        size = ["-x", "160", "-y", "45"]
        if not self.started:
            self.tmux("new-session", "-d", "-s", "t", "-n", name, *size, "-c", str(cwd), line)
            self.started = True
        else:
            self.tmux("new-window", "-d", "-t", "t", "-n", name, "-c", str(cwd), line)
        self.tmux("set-option", "-t", "t", "remain-on-exit", "on")

    def screen(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", f"t:{name}")

    def keys(self, name: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", f"t:{name}", *keys)

    def wait_for(self, name: str, predicate: Callable[[str], bool], what: str) -> str:
        def shown() -> str:
            screen = self.screen(name)
            return screen if predicate(screen) else ""

        try:
            return str(wait_until(shown, what))
        except AssertionError:
            screen = self.screen(name)
            raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}") from None

    def kill(self) -> None:
        if self.started:
            self.tmux("kill-server")


class Session:
    """One test's Claude Code session and teamdeck, in their terminals (see the module doc)."""

    def __init__(self, claude_home: ClaudeHome, folder: Path) -> None:
        self.home = claude_home
        self.terminals = Terminals(folder)
        # short: tmux sockets live under it, and AF_UNIX paths are limited to 107 bytes
        self.tmux_tmp = Path(tempfile.mkdtemp(prefix="tdcc-"))
        self.td_home = folder / "td"
        self.env = {
            **os.environ,
            "TEAMDECK_HOME": str(self.td_home),
            "CLAUDE_CONFIG_DIR": str(claude_home.root),
        }

    def setup(self, teammate_mode: str) -> None:
        """``teamdeck claude setup``, then Claude Code's ``teammateMode``."""
        done = teamdeck(self.env, "claude", "setup")
        assert done.returncode == 0, done.stderr
        settings = self.home.settings()
        settings["teammateMode"] = teammate_mode
        self.home.write_settings(settings)

    def script_worker(self, command: dict[str, str]) -> None:
        """The lead spawns ``worker``, whose first act is ``command`` (a Bash call)."""
        api = self.home.api
        api.add(Rule(call("Agent", SPAWN), last="Please spawn a worker", tool="Agent"))
        api.add(Rule(call("Bash", command), last="WORKER TASK", tool="Bash"))

    def start_dashboard(self, *, in_shell: bool = False) -> None:
        """``teamdeck --claude`` in the ``deck`` window; ``in_shell``: as a shell's child, not
        the window's own program (tmux resumes a stopped program of its own at once)."""
        env = {
            "HOME": str(self.home.root.parent / "user-home"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "TEAMDECK_HOME": str(self.td_home),
            "CLAUDE_CONFIG_DIR": str(self.home.root),
        }
        command = [*shlex.split(teamdeck_command()), "--claude"]
        if in_shell:
            command = ["sh", "-c", '"$@"; :', "sh", *command]
        self.terminals.start("deck", command, env, ROOT)
        wait_until(self.listening, "the dashboard listening for the hooks")

    def listening(self) -> bool:
        try:
            wire.connect(wire.socket_path(self.td_home), timeout=0.5).close()
        except OSError:
            return False
        return True

    def start_claude(self, prompt: str, mode: str = "manual") -> None:
        env = self.home.env(TEAMDECK_HOME=str(self.td_home), TMUX_TMPDIR=str(self.tmux_tmp))
        command = [str(self.home.binary), "--permission-mode", mode]
        command += ["--debug-file", str(self.home.debug_log), prompt]
        self.terminals.start("claude", command, env, self.home.project)

    def held(self) -> list[dict[str, Any]]:
        """:func:`held`: cheap to poll."""
        return held(self.env)

    def first_pending(self, what: str) -> dict[str, Any]:
        """The first request ``teamdeck approvals --json`` lists, listed once one is held."""
        found: dict[str, Any] = wait_until(
            lambda: self.held() and next(iter(self.pending()), None), what
        )
        return found

    def pending(self) -> list[dict[str, Any]]:
        """The requests ``teamdeck approvals --json`` lists."""
        done = teamdeck(self.env, "approvals", "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    def team_config(self) -> dict[str, Any] | None:
        for path in (self.home.root / "teams").glob("session-*/config.json"):
            with contextlib.suppress(OSError, ValueError):
                return json.loads(path.read_text())  # type: ignore[no-any-return]
        return None

    def stop_swarm(self) -> None:
        """Stop the tmux server Claude Code started for its pane teammates."""
        swarm = self.tmux_tmp / f"tmux-{os.getuid()}"
        for sock in swarm.glob("*") if swarm.is_dir() else []:
            command = ["tmux", "-S", str(sock), "kill-server"]
            subprocess.run(command, capture_output=True, timeout=20, check=False)

    def stop(self) -> None:
        self.terminals.kill()
        self.stop_swarm()
        shutil.rmtree(self.tmux_tmp, ignore_errors=True)

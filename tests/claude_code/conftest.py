"""Fixtures for running the real Claude Code binary offline against the scripted API.

The pinned ``@anthropic-ai/claude-code`` is installed from npm once into a cache outside the
clone (``~/.cache/teamdeck/claude-code``, ~400 MB; ``TEAMDECK_CLAUDE_CODE_CACHE`` moves it) and
reused by every later run. npm skips the wrapper's postinstall, so the platform package's
``claude`` executable is run directly. The suite skips, with one line, only when node/npm are
missing.

Each test gets its own ``CLAUDE_CONFIG_DIR`` with the first-run flags already set (onboarding
done, the fake API key approved, the project folder trusted, the start-up notices seen) and an
environment that keeps Claude Code off every network address but the scripted server.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.claude_code.server import ClaudeServer

if TYPE_CHECKING:
    from tests.claude_code.interactive import Session  # noqa: F401

VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
FAKE_KEY = "sk-ant-api03-teamdeck-offline-0123456789abcdef"


def cache_dir() -> Path:
    configured = os.environ.get("TEAMDECK_CLAUDE_CODE_CACHE")
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "teamdeck" / "claude-code"


def _platform_package() -> str:
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system(), platform.system())
    machine = {"x86_64": "x64", "AMD64": "x64", "aarch64": "arm64"}.get(
        platform.machine(), platform.machine()
    )
    return f"claude-code-{system}-{machine}"


def binary_path(cache: Path) -> Path:
    return cache / "node_modules" / "@anthropic-ai" / _platform_package() / "claude"


def _version_of(binary: Path) -> str:
    try:
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except OSError:
        return ""
    return out.split(" ")[0].strip()


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    """The pinned Claude Code executable, installed into the cache on first use."""
    cache = cache_dir()
    binary = binary_path(cache)
    if binary.exists() and _version_of(binary) == VERSION:
        return binary
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node/npm not found: the Claude Code end-to-end tests need them")
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(cache)]
        + [f"{PACKAGE}@{VERSION}"],
        check=True,
        capture_output=True,
        timeout=1800,
    )
    version = _version_of(binary)
    assert version == VERSION, f"{binary} reports {version!r}, expected {VERSION}"
    return binary


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ClaudeServer]:
    with ClaudeServer(log=tmp_path / "requests.jsonl") as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Demo project\n")
    return root


@dataclass
class ClaudeHome:
    """A ``CLAUDE_CONFIG_DIR`` for one test, with its settings file and its environment."""

    root: Path
    project: Path
    api: ClaudeServer
    binary: Path

    @property
    def settings_path(self) -> Path:
        return self.root / "settings.json"

    def settings(self) -> dict[str, Any]:
        if not self.settings_path.exists():
            return {}
        return json.loads(self.settings_path.read_text())  # type: ignore[no-any-return]

    def write_settings(self, settings: dict[str, Any]) -> None:
        self.settings_path.write_text(json.dumps(settings, indent=2) + "\n")

    def add_hook(self, event: str, command: str, timeout: float | None = None) -> None:
        settings = self.settings()
        hook: dict[str, Any] = {"type": "command", "command": command}
        if timeout is not None:
            hook["timeout"] = timeout
        settings.setdefault("hooks", {}).setdefault(event, []).append(
            {"matcher": "*", "hooks": [hook]}
        )
        self.write_settings(settings)

    def env(self, **extra: str) -> dict[str, str]:
        """Only what Claude Code needs: nothing from the person's own setup leaks in."""
        env = {
            "HOME": str(self.root.parent / "user-home"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "TMPDIR": str(self.root.parent / "tmp"),
            "ANTHROPIC_BASE_URL": self.api.url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "CLAUDE_CONFIG_DIR": str(self.root),
            "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1",
            # keep it off the network: telemetry, error reports, updates, marketplace fetches
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        env.update(extra)
        return env

    def run_print(
        self, prompt: str, *args: str, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """``claude -p PROMPT`` in the project, its debug log in ``<home>/../debug.log``."""
        command = [str(self.binary), "-p", prompt, "--debug-file", str(self.debug_log), *args]
        return subprocess.run(
            command,
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    @property
    def debug_log(self) -> Path:
        return self.root.parent / "debug.log"


def first_run_state(project: Path) -> dict[str, Any]:
    """``.claude.json`` as Claude Code leaves it once its first-run dialogs are answered."""
    return {
        "hasCompletedOnboarding": True,
        "hasSeenAutoDefaultNotice": True,
        "lastReleaseNotesSeen": VERSION,
        "customApiKeyResponses": {"approved": [FAKE_KEY[-20:]], "rejected": []},
        "officialMarketplaceAutoInstallAttempted": True,
        # interactive sessions retry the marketplace download unless told it failed for good
        "officialMarketplaceAutoInstallRetryCount": 1,
        "officialMarketplaceAutoInstallNextRetryTime": 4102444800000,  # 2100-01-01
        "projects": {str(project): {"hasTrustDialogAccepted": True, "allowedTools": []}},
    }


#: What Claude Code's debug log says when it tries to reach a host (DNS lookups included).
OFF_LOOPBACK = ("getaddrinfo", "ENOTFOUND", "EAI_AGAIN")


@pytest.fixture
def claude_home(
    tmp_path: Path, project: Path, api: ClaudeServer, claude_binary: Path
) -> Iterator[ClaudeHome]:
    """After the test, the debug log must show no attempt to reach any host but the server."""
    root = tmp_path / "claude-config"
    root.mkdir()
    for folder in ("user-home", "tmp"):
        (tmp_path / folder).mkdir()
    (root / ".claude.json").write_text(json.dumps(first_run_state(project), indent=2))
    home = ClaudeHome(root, project, api, claude_binary)
    yield home
    if home.debug_log.exists():
        log = home.debug_log.read_text(errors="replace").splitlines()
        reached = [line for line in log if any(word in line for word in OFF_LOOPBACK)]
        assert not reached, f"Claude Code tried to leave the loopback: {reached[:3]}"


def hook_command(script: Path, *args: str) -> str:
    """A hook command line running ``script`` with this Python, isolated (``-I``)."""
    return " ".join([sys.executable, "-I", str(script), *args])


@pytest.fixture
def session(claude_home: ClaudeHome, tmp_path: Path) -> Iterator[Session]:
    """An interactive Claude Code session next to teamdeck, in tmux (``interactive``)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed: the interactive Claude Code tests need it")
    from tests.claude_code.interactive import Session  # it imports this module

    running = Session(claude_home, tmp_path)
    try:
        yield running
    finally:
        running.stop()

"""How the lead's runtime starts teammate processes (shared by ``process``/``tmux``).

The command runs this interpreter on this installation (``python -P -m app.runtime.agent_main``,
what ``teamdeck agent`` runs too), so a teammate process is the same teamdeck as its lead. Its
environment is the runtime's without the API credentials (``child_env``), plus Claude Code's
teammate variables (``CLAUDE_CODE_TEAM_NAME``, ``CLAUDE_CODE_AGENT_ID``,
``CLAUDE_CODE_AGENT_NAME``, ``CLAUDE_CODE_AGENT_TYPE``, ``CLAUDE_CODE_PLAN_MODE_REQUIRED``);
the credentials (:meth:`AgentLaunch.credentials`) go through ``handoff`` instead, over a
socket only the teammate process holds, and so does the team's key (``app.core.authority``),
offline too. An offline runtime starts offline teammates (``--offline``, no API credentials),
whatever their environment holds.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from app.core.authority import HANDOFF_ENTRY
from app.runtime.model.credentials import held_credentials
from app.runtime.runners.base import TeammateSpec
from app.runtime.sandbox import SandboxConfig
from app.runtime.tools.workspace import child_env

#: The teammate entry point a teammate process runs (named, not imported: it sits above the
#: runners, and the fork server imports it in the process that runs it).
AGENT_MAIN = "app.runtime.agent_main"

#: Variables a teammate process takes from the runtime's environment when it cannot inherit it
#: (a tmux window starts from the tmux server's environment).
PASSED_ENV = (
    "ANTHROPIC_BASE_URL",
    "TEAMDECK_MODEL",
    "TEAMDECK_READ_TIMEOUT",
    "TEAMDECK_OFFLINE_PACE",
    "TEAMDECK_OFFLINE_TTFT",
    "TEAMDECK_OFFLINE_TPS",
    "TEAMDECK_ORPHAN_TIMEOUT",
    "CLAUDE_CONFIG_DIR",
    "PYTHONPATH",
)


def teammate_env(spec: TeammateSpec) -> dict[str, str]:
    """Claude Code's variables for a teammate process (seed 001)."""
    return {
        "CLAUDE_CODE_TEAM_NAME": spec.team,
        "CLAUDE_CODE_AGENT_ID": f"{spec.name}@{spec.team}",
        "CLAUDE_CODE_AGENT_NAME": spec.name,
        "CLAUDE_CODE_AGENT_TYPE": spec.agent_type,
        "CLAUDE_CODE_PLAN_MODE_REQUIRED": "true" if spec.plan_mode else "false",
    }


@dataclass(frozen=True)
class AgentLaunch:
    """What every teammate process of one runtime is started with."""

    home: Path
    offline: bool
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    permission_timeout: float = 300.0
    sandbox: SandboxConfig | None = None
    #: The team's key (hex), handed over with the credentials, never shown.
    team_key: str | None = field(default=None, repr=False)

    def command(self, spec: TeammateSpec, backend: str) -> list[str]:
        """The teammate process's command line for ``spec`` (the credentials are handed over
        separately: see :meth:`credentials`)."""
        # -P: the teammate's working folder is not put on sys.path (a folder holding an
        # ``app.py``, such as teamdeck's own package in the demo, would shadow ``app``).
        return [sys.executable, "-P", "-m", AGENT_MAIN, *self.arguments(spec, backend)]

    def arguments(self, spec: TeammateSpec, backend: str) -> list[str]:
        """The arguments of :meth:`command` after the module (what a forked child runs)."""
        cmd = ["--home", str(self.home)]
        cmd += ["--team", spec.team, "--name", spec.name, "--backend", backend]
        cmd += ["--permission-timeout", f"{self.permission_timeout:g}"]
        if self.offline:
            cmd.append("--offline")
        for rule in self.allow:
            cmd += ["--allow", rule]
        for rule in self.deny:
            cmd += ["--deny", rule]
        # No configuration (a library caller's runtime): unconfined, as in-process teammates.
        cmd += self.sandbox.arguments() if self.sandbox is not None else ["--no-sandbox"]
        return cmd

    def credentials(self) -> dict[str, str]:
        """What a teammate process gets through ``handoff``: the API credentials (none when
        offline) and the team's key."""
        held = {} if self.offline else held_credentials()
        return {**held, HANDOFF_ENTRY: self.team_key} if self.team_key else held

    def environment(self, spec: TeammateSpec) -> dict[str, str]:
        """The whole environment of a child process (``process`` mode)."""
        return {**self.base_environment(), **teammate_env(spec)}

    @staticmethod
    def base_environment() -> dict[str, str]:
        """What every teammate process's environment starts from (the fork server's too)."""
        return {**child_env(), "PYTHONUNBUFFERED": "1"}

    def passed_environment(self, spec: TeammateSpec) -> dict[str, str]:
        """What a tmux window needs on top of the tmux server's own environment."""
        env = child_env()
        passed = {name: env[name] for name in PASSED_ENV if env.get(name)}
        return {**passed, **teammate_env(spec)}

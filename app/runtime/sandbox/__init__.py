"""The sandbox that Bash commands and hooks run in: a boundary, unlike permission rules.

Rules decide whether a command may start; once it runs, only the sandbox limits what it does.
With bubblewrap (``bwrap``) a command sees the project (or the teammate's worktree)
read-write, the rest of the file system read-only, a private ``/tmp``, its own PID namespace
(so no ancestor's ``/proc/<pid>/environ`` or ``/proc/<pid>/mem``), and no network unless a
setting allows it; no Unix socket and no socket family it does not need (:mod:`.seccomp`);
teamdeck's keys and bridge, ``~/.claude`` and ``/run/user`` hidden (:mod:`.layout`); its
environment is an allowlist (:mod:`.env`). Where ``bwrap`` is missing or cannot run, commands
and hooks refuse to run, with one line saying how to install it, unless the person turned the
sandbox off (``--no-sandbox``, settings ``sandbox.enabled: false``): fail closed.
"""

from __future__ import annotations

from app.runtime.sandbox.bwrap import (
    INSTALL_HINT,
    Sandbox,
    SandboxConfig,
    bwrap_problem,
    sandbox_for,
    shell_argv,
)
from app.runtime.sandbox.env import BASE_ENV, sandbox_env
from app.runtime.sandbox.layout import PROTECTED_NAMES, protected_paths

__all__ = [
    "BASE_ENV",
    "INSTALL_HINT",
    "PROTECTED_NAMES",
    "Sandbox",
    "SandboxConfig",
    "bwrap_problem",
    "protected_paths",
    "sandbox_env",
    "sandbox_for",
    "shell_argv",
]

"""Commands wrapped in bubblewrap: what they may see, write and reach."""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap, or dnf install bubblewrap)"

#: Paths in a project that hold configuration which runs code (hooks, git's fsmonitor,
#: aliases, submodules, MCP servers): read-only inside the sandbox, whatever the command.
PROTECTED_NAMES: tuple[str, ...] = (".claude", ".git", ".gitmodules", ".mcp.json")


@dataclass(frozen=True)
class SandboxConfig:
    """The person's choices: on or off, the network, the variables passed through."""

    enabled: bool = True
    #: Hosts the sandbox may reach. bubblewrap cannot filter by host: any entry turns the
    #: network on for sandboxed commands (the README says so); none keeps it off.
    allowed_hosts: tuple[str, ...] = ()
    #: Environment variables passed besides the allowlist (``--pass-env``, ``sandbox.passEnv``).
    pass_env: tuple[str, ...] = ()

    @property
    def network(self) -> bool:
        return bool(self.allowed_hosts)

    @property
    def active(self) -> bool:
        """On, and bubblewrap works here."""
        return self.enabled and bwrap_problem() is None

    def arguments(self) -> list[str]:
        """The ``teamdeck agent`` options that give a teammate process this configuration."""
        args = [] if self.enabled else ["--no-sandbox"]
        for host in self.allowed_hosts:
            args += ["--sandbox-host", host]
        for name in self.pass_env:
            args += ["--pass-env", name]
        return args

    def describe(self) -> str:
        """For the header: ``sandbox`` / ``no sandbox`` / ``no sandbox (no bwrap)`` (short: the
        header has 80 columns; the reason is the warning line at start)."""
        if not self.enabled:
            return "no sandbox"
        if bwrap_problem() is not None:
            return "no sandbox (no bwrap)"
        return "sandbox + network" if self.network else "sandbox"


def sandbox_for(cwd: Path, roots: Sequence[Path], network: bool) -> Sandbox:
    """The sandbox of an agent working in ``cwd`` (its project, or its worktree) with the
    extra folders its permission rules open (``roots``). A worktree's commits go into the
    main repository's ``.git`` (read-write, its config and hooks read-only)."""
    extra = list(roots)
    parent = cwd.parent
    if parent.name == "worktrees" and parent.parent.name == ".claude":
        main_git = parent.parent.parent / ".git"
        if main_git.is_dir():
            extra.append(main_git)
    return Sandbox.for_project(cwd, network=network, extra_writable=extra)


@functools.cache
def bwrap_problem() -> str | None:
    """Why commands cannot be sandboxed here (``None``: they can). Checked once per process by
    running a trivial command the way :class:`Sandbox` will."""
    exe = shutil.which("bwrap")
    if exe is None:
        return f"bwrap not found: {INSTALL_HINT}"
    try:
        done = subprocess.run(
            [
                exe,
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--unshare-pid",
                "--unshare-net",
                "--die-with-parent",
                "true",
            ],  # fmt: skip
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot run: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap cannot run here: {why[-1] if why else f'exit {done.returncode}'}"
    return None


def protected_paths(root: Path) -> list[Path]:
    """The code-running configuration under ``root`` that exists (made read-only)."""
    return [root / name for name in PROTECTED_NAMES if (root / name).exists()]


@dataclass(frozen=True)
class Sandbox:
    """Where one agent's commands run: ``writable`` read-write (its project, or its worktree
    and the repository's object store), everything else read-only."""

    writable: tuple[Path, ...]
    network: bool = False
    #: Read-only inside the writable paths (see :data:`PROTECTED_NAMES`).
    protected: tuple[Path, ...] = field(default=())
    #: Protected folders that do not exist (a project's ``.claude``): an empty read-only
    #: folder inside, so that a command cannot create settings there either (the empty
    #: folder it is mounted on stays in the project).
    sealed: tuple[Path, ...] = field(default=())
    exe: str = "bwrap"

    @classmethod
    def for_project(
        cls, project: Path, *, network: bool = False, extra_writable: Sequence[Path] = ()
    ) -> Sandbox:
        """The sandbox of an agent working in ``project``. A git worktree also writes its
        objects and refs into the main repository's ``.git`` (listed in ``extra_writable`` by
        the caller); that ``.git``'s config and hooks stay read-only."""
        roots = [project.resolve(), *(p.resolve() for p in extra_writable)]
        protected: list[Path] = []
        sealed: list[Path] = []
        for root in roots:
            if root.name == ".git":
                protected += [p for p in (root / "config", root / "hooks") if p.exists()]
            else:
                protected += protected_paths(root)
                if not (root / ".claude").exists():
                    sealed.append(root / ".claude")
        exe = shutil.which("bwrap") or "bwrap"
        return cls(tuple(roots), network, tuple(protected), tuple(sealed), exe)

    def argv(self, command: Sequence[str], cwd: Path) -> list[str]:
        """``command`` as bubblewrap runs it in ``cwd``."""
        args = [
            self.exe,
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ]  # fmt: skip
        if not self.network:
            args.append("--unshare-net")
        for path in self.writable:  # after the tmpfs: a project under /tmp stays visible
            if path.exists():
                args += ["--bind", str(path), str(path)]
        for path in self.protected:
            args += ["--ro-bind", str(path), str(path)]
        for path in self.sealed:
            if not path.is_symlink():
                args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        args += ["--chdir", str(cwd)]
        return [*args, "--", *command]


def shell_argv(command: str) -> list[str]:
    """A shell command line as the argv bubblewrap runs (bash where there is one)."""
    return [shutil.which("bash") or "/bin/sh", "-c", command]

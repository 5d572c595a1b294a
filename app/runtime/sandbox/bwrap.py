"""Commands wrapped in bubblewrap: what they may see, write and reach."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.runtime.sandbox.layout import (
    PROTECTED_NAMES,
    git_mounts,
    hidden_paths,
    protected_paths,
    sealed_names,
    worktree_git,
)
from app.runtime.sandbox.seal import EXCLUDE_INSIDE, git_exclude, seal_stand_ins
from app.runtime.sandbox.seccomp import filter_fd, filter_problem
from app.runtime.sandbox.sockets import unlisted_sockets

Fds = tuple[int, ...]
INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap, or dnf install bubblewrap)"


@dataclass(frozen=True)
class SandboxConfig:
    """The person's choices: on or off, the network, the variables passed through."""

    enabled: bool = True
    #: Hosts the sandbox may reach. bubblewrap cannot filter by host: any entry turns the
    #: network on for sandboxed commands (the README says so); none keeps it off.
    allowed_hosts: tuple[str, ...] = ()
    #: Environment variables passed besides the allowlist (``--pass-env``, ``sandbox.passEnv``).
    pass_env: tuple[str, ...] = ()
    #: Unix sockets commands may connect to (``--allow-unix-socket PATH``, settings
    #: ``sandbox.network.allowUnixSockets``); ``("*",)`` for all (``allowAllUnixSockets``).
    #: Empty: none (see :mod:`.seccomp`).
    unix_sockets: tuple[str, ...] = ()

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
        for path in self.unix_sockets:
            args += ["--allow-unix-socket", path]
        return args

    def describe(self) -> str:
        """For the header: ``sandbox`` / ``no sandbox`` / ``sandbox: no bwrap`` (short: the
        header has 80 columns; the reason is the warning line at start)."""
        if not self.enabled:
            return "no sandbox"
        if bwrap_problem() is not None:
            return "sandbox: no bwrap"
        return "sandbox + network" if self.network else "sandbox"

    def refusal(self) -> str | None:
        """Why commands and hooks must not run (``None``: they may): the sandbox is wanted but
        bubblewrap cannot run here. Fail closed: one line naming the fix."""
        if not self.enabled:
            return None
        problem = bwrap_problem()
        if problem is None:
            return None
        return (
            f"no sandbox: {problem}; commands and hooks do not run unconfined "
            "(or run teamdeck with --no-sandbox)"
        )

    def sandbox(self, cwd: Path, roots: Sequence[Path] = (), homes: Sequence[Path] = ()) -> Sandbox:
        """The :class:`Sandbox` of a command run in ``cwd`` under this configuration."""
        sockets = (
            None
            if not self.unix_sockets
            else [os.path.expanduser(p) for p in self.unix_sockets if p != "*"]
        )
        return sandbox_for(
            cwd,
            roots,
            self.network,
            unix_sockets=sockets,
            homes=homes,
            every_socket="*" in self.unix_sockets,
        )


def sandbox_for(
    cwd: Path,
    roots: Sequence[Path],
    network: bool,
    *,
    unix_sockets: Sequence[str] | None = None,
    homes: Sequence[Path] = (),
    every_socket: bool = False,
) -> Sandbox:
    """The sandbox of an agent working in ``cwd`` (its project, or its worktree) with the
    extra folders its permission rules open (``roots``). A worktree's commits go into the
    main repository's ``.git`` (read-write, its config, hooks, info and worktrees read-only
    but for the worktree's own HEAD, index and logs). ``homes``: teamdeck homes whose keys
    and bridge are hidden besides ``$TEAMDECK_HOME``'s."""
    extra = list(roots)
    tree = worktree_git(cwd.resolve())
    if tree is not None:
        extra.append(tree[0])
    sockets = None if unix_sockets is None else [Path(p) for p in unix_sockets]
    return Sandbox.for_project(
        cwd,
        network=network,
        extra_writable=extra,
        unix_sockets=sockets,
        homes=homes,
        every_socket=every_socket,
    )


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


@dataclass(frozen=True)
class Sandbox:
    """Where one agent's commands run: ``writable`` read-write (its project, or its worktree
    and the repository's object store), everything else read-only, the desk's sockets and
    secrets hidden, and a socket filter (:mod:`.seccomp`) in front of every other socket."""

    writable: tuple[Path, ...]
    network: bool = False
    #: Read-only inside the writable paths (see :data:`.layout.PROTECTED_NAMES`).
    protected: tuple[Path, ...] = field(default=())
    #: Protected folders that do not exist (a project's ``.claude`` or ``.git``): an empty
    #: read-only folder inside, so that a command cannot create them either.
    sealed: tuple[Path, ...] = field(default=())
    #: Protected files that do not exist (``.mcp.json``, ``.gitmodules``): an empty read-only
    #: file inside. The stand-ins teamdeck makes for them are removed after the command.
    sealed_files: tuple[Path, ...] = field(default=())
    #: Folders replaced by an empty one (teamdeck's keys and bridge, ``~/.claude``, ``/run/user``).
    hidden: tuple[Path, ...] = field(default=())
    #: Inside the read-only paths: writable again (a worktree's own administrative folder).
    rewritable: tuple[Path, ...] = field(default=())
    #: Unix sockets: ``None`` refuses them all; a tuple lists the paths allowed (mounted back
    #: where they are hidden, every other socket covered: :mod:`.sockets`).
    unix_sockets: tuple[Path, ...] | None = None
    exe: str = "bwrap"
    #: Every Unix socket allowed (``allowAllUnixSockets``): none covered (:mod:`.sockets`).
    every_socket: bool = False

    @classmethod
    def for_project(
        cls,
        project: Path,
        *,
        network: bool = False,
        extra_writable: Sequence[Path] = (),
        unix_sockets: Sequence[Path] | None = None,
        homes: Sequence[Path] = (),
        every_socket: bool = False,
    ) -> Sandbox:
        """The sandbox of an agent working in ``project``. A git worktree also writes its
        objects and refs into the main repository's ``.git`` (listed in ``extra_writable`` by
        the caller); that ``.git``'s config, hooks, info and worktrees stay read-only, except
        the worktree's own HEAD, index and logs."""
        roots = [project.resolve(), *(p.resolve() for p in extra_writable)]
        protected: list[Path] = []
        rewritable: list[Path] = []
        for root in roots:
            if root.name == ".git":
                tree = worktree_git(project.resolve())
                admin = tree[1] if tree is not None and tree[0].resolve() == root else None
                read_only, again = git_mounts(root, admin)
                protected += read_only
                rewritable += again
            else:
                protected += protected_paths(root)
        dirs, files = sealed_names(roots)
        exe = shutil.which("bwrap") or "bwrap"
        return cls(
            tuple(roots),
            network,
            tuple(protected),
            tuple(dirs),
            tuple(files),
            tuple(hidden_paths(homes)),
            tuple(rewritable),
            None if unix_sockets is None else tuple(Path(p) for p in unix_sockets),
            exe,
            every_socket,
        )

    def argv(self, command: Sequence[str], cwd: Path, seccomp_fd: int | None = None) -> list[str]:
        """``command`` as bubblewrap runs it in ``cwd`` (``seccomp_fd``: the socket filter's
        program). Start commands through :meth:`launch`, which makes the stand-ins the sealed
        names are mounted on and passes the filter."""
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
        inside = [h for h in self.hidden if any(w in h.parents for w in self.writable)]
        for path in self.hidden:  # before the binds: a project inside one stays visible
            if path not in inside:
                args += ["--tmpfs", str(path)]
        for path in self.writable:  # after the tmpfs: a project under /tmp stays visible
            if path.exists():
                args += ["--bind", str(path), str(path)]
        for path in inside:  # a home inside the project: hidden all the same
            args += ["--tmpfs", str(path)]
        for path in self.protected:
            args += ["--ro-bind", str(path), str(path)]
        for path in self.rewritable:
            args += ["--bind", str(path), str(path)]
        for path in self.protected:  # pointers inside a rewritable folder: read-only again
            if any(r in path.parents for r in self.rewritable):
                args += ["--ro-bind", str(path), str(path)]
        for path in self.sealed:
            if not path.is_symlink():
                args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        for path in self.sealed_files:  # an empty file, read-only
            if not path.is_symlink():
                args += ["--ro-bind", str(path), str(path)]
        exclude = git_exclude(self.sealed_files)
        if exclude is not None:  # git in there does not list (nor add) the stand-ins
            args += ["--ro-bind", str(exclude), EXCLUDE_INSIDE]
            args += ["--setenv", "GIT_CONFIG_COUNT", "1"]
            args += ["--setenv", "GIT_CONFIG_KEY_0", "core.excludesFile"]
            args += ["--setenv", "GIT_CONFIG_VALUE_0", EXCLUDE_INSIDE]
        if self.unix_sockets is not None and not self.every_socket:  # only the listed ones
            for path in unlisted_sockets(self.unix_sockets, self.hidden, self.writable):
                args += ["--ro-bind", "/dev/null", str(path)]
        for path in self.unix_sockets or ():  # back in sight (a hidden folder, /tmp)
            if os.path.exists(path):
                args += ["--ro-bind", str(path), str(path)]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--chdir", str(cwd)]
        return [*args, "--", *command]

    @contextlib.contextmanager
    def launch(
        self, command: Sequence[str], cwd: Path
    ) -> Iterator[tuple[list[str], tuple[int, ...]]]:
        """``(argv, pass_fds)`` to start ``command`` with (pass the descriptors to the child):
        the socket filter's program is one of them, closed here afterwards. The stand-ins
        for sealed files are made first and removed afterwards when no other sandboxed
        command (of any process) still has them mounted."""
        fd = (
            filter_fd(allow_unix=self.unix_sockets is not None)
            if filter_problem() is None
            else None
        )
        with seal_stand_ins(self.writable) as (dirs, files):
            try:
                fds = () if fd is None else (fd,)
                yield self._names_now(dirs, files).argv(command, cwd, fd), fds
            finally:
                if fd is not None:
                    os.close(fd)

    def _names_now(self, dirs: Sequence[Path], files: Sequence[Path]) -> Sandbox:
        """This sandbox with its protected names as they are now, under the stand-ins' lock:
        existing ones (another command's stand-ins among them) read-only where they are,
        the absent ones sealed."""
        roots = [r for r in self.writable if r.name != ".git"]
        names = {r / n for r in roots for n in PROTECTED_NAMES}
        protected = [p for p in self.protected if p not in names]
        for root in roots:
            protected += protected_paths(root)
        return replace(
            self, protected=tuple(protected), sealed=tuple(dirs), sealed_files=tuple(files)
        )


def shell_argv(command: str) -> list[str]:
    """A shell command line as the argv bubblewrap runs (bash where there is one)."""
    return [shutil.which("bash") or "/bin/sh", "-c", command]

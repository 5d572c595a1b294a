"""``--worktrees``: a git worktree per teammate, so teammates never edit the same files.

At spawn, ``WorktreeManager.create(name)`` runs ``git worktree add -b teamdeck/<team>/<name>``
from the repository's current ``HEAD`` into ``<repo>/.claude/worktrees/<team>-<name>`` (the
folder Claude Code also uses for worktrees) and the teammate works there (its cwd; the
member's ``worktreePath`` in the team config). At shutdown ``release(...)``:

- a worktree with no uncommitted change (untracked files count) and no commit of its own is
  removed, and so is its branch;
- otherwise it is kept, with its branch, and ``Release.summary`` says why ("2 changed files,
  1 commit") for the lead's report.

Outside a git repository the manager cannot be built: ``WorktreeError`` with one line. Every
git call is synchronous (run it in a thread from async code) and serialised per manager.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import TeamdeckError

GIT_TIMEOUT = 60.0
BRANCH_PREFIX = "teamdeck"


class WorktreeError(TeamdeckError):
    """Worktrees are impossible here (no git repository) or a git command failed."""


@dataclass(frozen=True)
class Worktree:
    name: str
    path: Path
    branch: str
    base: str  # the commit it started from
    #: Its administrative folder in the repository (``.git/worktrees/<name>``), read when it
    #: was made: later git commands name it instead of trusting the worktree's own ``.git``
    #: file, which the teammate working there could point at a config that runs code.
    git_dir: Path | None = None
    #: The main repository's ``.git`` (the common dir), read when it was made: a worktree
    #: whose ``commondir`` file says otherwise later is refused, never inspected.
    common_dir: Path | None = None


@dataclass(frozen=True)
class Release:
    """What shutdown did with a worktree."""

    worktree: Worktree
    removed: bool
    changed_files: int = 0
    commits: int = 0
    error: str = ""
    #: Files git ignores (build output, a local ``.env``...): kept too, never deleted unseen.
    ignored_files: int = 0

    @property
    def summary(self) -> str:
        if self.removed:
            return f"removed worktree {self.worktree.path} (no changes)"
        if self.error:
            return f"kept worktree {self.worktree.path}: {self.error}"
        parts = []
        if self.changed_files:
            parts.append(f"{self.changed_files} changed file{'s' * (self.changed_files != 1)}")
        if self.commits:
            parts.append(f"{self.commits} commit{'s' * (self.commits != 1)}")
        if self.ignored_files:
            parts.append(f"{self.ignored_files} ignored file{'s' * (self.ignored_files != 1)}")
        return (
            f"kept worktree {self.worktree.path} on branch {self.worktree.branch} "
            f"({', '.join(parts)})"
        )


#: Settings that make git run programs, switched off for every git command teamdeck runs
#: itself (a teammate may have written them into the repository's config), and no optional
#: lock (a status does not rewrite the index).
_SAFE = [
    "--no-optional-locks",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.untrackedCache=false",
    "-c", "diff.external=",
]  # fmt: skip
#: Only the repository's own config: no system or global file (nor their filters, helpers),
#: no system attributes, no prompt.
_SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
#: Variables that would point git at another repository or configuration.
_GIT_VARS = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES",
    "GIT_EXEC_PATH", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_SSH", "GIT_SSH_COMMAND",
)  # fmt: skip


def _git(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in _GIT_VARS}
    environment.update(_SAFE_ENV)
    environment.update(env or {})
    try:
        return subprocess.run(
            ["git", *_SAFE, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=environment,
        )
    except FileNotFoundError:
        raise WorktreeError("--worktrees needs git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise WorktreeError(f"git {args[0]} took longer than {GIT_TIMEOUT:g}s") from None


def _check(result: subprocess.CompletedProcess[str], what: str) -> str:
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        raise WorktreeError(f"{what} failed: {lines[-1] if lines else f'exit {result.returncode}'}")
    return result.stdout.strip()


def repository_root(cwd: Path) -> Path:
    """The top of the git work tree containing ``cwd``; WorktreeError if there is none."""
    if not cwd.is_dir():
        raise WorktreeError(f"--worktrees: {cwd} is not a directory")
    result = _git(["rev-parse", "--show-toplevel"], cwd)
    if result.returncode != 0:
        raise WorktreeError(f"--worktrees needs a git repository, and {cwd} is not inside one")
    root = Path(result.stdout.strip())
    head = _git(["rev-parse", "--verify", "--quiet", "HEAD"], root)
    if head.returncode != 0:
        raise WorktreeError(f"--worktrees needs a commit to branch from; {root} has none yet")
    return root


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def branch_name(team: str, name: str) -> str:
    """``teamdeck/<team>/<name>`` with anything git would refuse replaced by ``-``."""
    parts = [_UNSAFE.sub("-", p).strip(".-") or "x" for p in (team, name)]
    return "/".join([BRANCH_PREFIX, *parts])


class WorktreeManager:
    """Creates and releases the worktrees of one team's teammates."""

    def __init__(self, cwd: Path, team: str, base_dir: Path | None = None) -> None:
        self.root = repository_root(cwd)
        self.team = team
        self.base_dir = base_dir or self.root / ".claude" / "worktrees"
        self._lock = threading.Lock()

    def path_for(self, name: str) -> Path:
        return self.base_dir / branch_name(self.team, name).split("/", 1)[1].replace("/", "-")

    def create(self, name: str) -> Worktree:
        """A new worktree for teammate ``name`` on its own branch from ``HEAD``."""
        with self._lock:
            base = _check(_git(["rev-parse", "HEAD"], self.root), "git rev-parse HEAD")
            branch = branch_name(self.team, name)
            path = self.path_for(name)
            if path.exists():
                raise WorktreeError(f"cannot create the worktree for {name}: {path} exists")
            exists = _git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], self.root)
            if exists.returncode == 0:
                raise WorktreeError(
                    f"cannot create the worktree for {name}: branch {branch} already exists "
                    "(a kept worktree of an earlier run?)"
                )
            self.base_dir.mkdir(parents=True, exist_ok=True)
            _check(
                _git(["worktree", "add", "-b", branch, str(path), base], self.root),
                f"git worktree add for {name}",
            )
            git_dir = _check(_git(["rev-parse", "--absolute-git-dir"], path), "git rev-parse")
            common = _check(
                _git(["rev-parse", "--path-format=absolute", "--git-common-dir"], self.root),
                "git rev-parse",
            )
            return Worktree(name, path, branch, base, Path(git_dir), Path(common))

    def create_free(self, name: str, tries: int = 20) -> Worktree:
        """Like ``create``, on ``teamdeck/<team>/<name>-2``, ``-3``... when the plain branch or
        folder is taken (a worktree kept by an earlier teammate of that name, or an earlier
        run of a team with this name). The worktree's ``name`` stays the teammate's."""
        last: WorktreeError | None = None
        for attempt in range(1, tries + 1):
            label = name if attempt == 1 else f"{name}-{attempt}"
            try:
                tree = self.create(label)
            except WorktreeError as exc:
                if "exists" not in str(exc):
                    raise
                last = exc
                continue
            return Worktree(name, tree.path, tree.branch, tree.base, tree.git_dir, tree.common_dir)
        assert last is not None
        raise last

    def changes(self, worktree: Worktree) -> tuple[int, int, int]:
        """(uncommitted changed paths incl. untracked, commits on its branch since creation,
        ignored files). WorktreeError (one line) when the worktree no longer points at the
        repository it was made in."""
        env = _pinned(worktree)
        status = _check(
            _git(
                ["status", "--porcelain", "--untracked-files=all", "--ignored"],
                worktree.path,
                env,
            ),
            "git status",
        )
        lines = [line for line in status.splitlines() if line.strip()]
        ignored = sum(line.startswith("!!") for line in lines)
        count = _check(
            _git(["rev-list", "--count", f"{worktree.base}..HEAD"], worktree.path, env),
            "git rev-list",
        )
        return len(lines) - ignored, int(count or 0), ignored

    def release(self, worktree: Worktree) -> Release:
        """Remove the worktree and its branch if nothing changed; keep both otherwise. A
        worktree whose state cannot be read is kept (never delete what might be work)."""
        with self._lock:
            if not worktree.path.is_dir():
                return Release(worktree, False, error="its folder is gone")
            try:
                changed, commits, ignored = self.changes(worktree)
            except WorktreeError as exc:
                return Release(worktree, False, error=str(exc))
            if changed or commits or ignored:
                return Release(worktree, False, changed, commits, ignored_files=ignored)
            try:
                _pinned(worktree)  # checked again just before git reads the worktree once more
                _check(
                    _git(["worktree", "remove", str(worktree.path)], self.root),
                    "git worktree remove",
                )
            except WorktreeError as exc:
                return Release(worktree, False, error=str(exc))
            _git(["branch", "-D", worktree.branch], self.root)  # no commits of its own
            return Release(worktree, True)


def _pinned(worktree: Worktree) -> dict[str, str]:
    """The environment naming the worktree's repository as recorded when it was made (its
    administrative folder, the common dir, the work tree): git then trusts neither the
    worktree's ``.git`` file nor the ``commondir`` file. WorktreeError (one line) when that
    file no longer names the recorded common dir (a teammate pointed it at a config of its
    own: its filters and fsmonitor would run as the person)."""
    if worktree.git_dir is None:
        return {}
    env = {"GIT_DIR": str(worktree.git_dir), "GIT_WORK_TREE": str(worktree.path)}
    if worktree.common_dir is None:
        return env
    pointer = worktree.git_dir / "commondir"
    try:
        text = pointer.read_text().strip()
    except OSError as exc:
        raise WorktreeError(f"cannot read {pointer}: {exc.strerror or exc}") from None
    named = Path(os.path.normpath(worktree.git_dir / text))
    if named.resolve() != worktree.common_dir.resolve():
        raise WorktreeError(
            f"refused: {pointer} was changed (it names {text!r}, not {worktree.common_dir}); "
            "teamdeck runs no git command there"
        )
    env["GIT_COMMON_DIR"] = str(worktree.common_dir)
    return env

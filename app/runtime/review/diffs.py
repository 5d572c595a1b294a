"""Diffs from git: what an Edit/Write/MultiEdit request would change (``proposed_diff``) and
what a teammate changed so far (``work_diff``), split into one ``FileDiff`` per file.

git is the differ: ``git diff --no-index`` between temporary files for a proposed edit, ``git
diff BASE`` (and ``--no-index`` against ``/dev/null`` for untracked files) for work so far.
teamdeck only cuts its output per file and says in one line what it does not show (a binary
file, a large one). Every git call switches off the settings that run programs (a teammate
may have written them into the repository's config), external diff tools and textconv.
Calls are synchronous: run them in a thread from async code.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import TeamdeckError

GIT_TIMEOUT = 30.0
#: A file larger than this is not diffed: "large file (2.1 MB): not shown".
MAX_FILE_BYTES = 1_000_000
#: A file's diff longer than this is not shown either (a generated file rewritten).
MAX_DIFF_CHARS = 200_000
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit"})
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_SAFE = [
    "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
    "-c", "diff.external=", "-c", "core.pager=cat",
]  # fmt: skip
_DIFF_FLAGS = ["--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/"]


class ReviewError(TeamdeckError):
    """No diff can be had: git is missing, the folder is no repository, git failed."""


@dataclass(frozen=True)
class FileDiff:
    """One file's change: ``text`` is git's unified diff from its first ``@@`` (empty when
    ``note`` says in one line why it is not shown)."""

    path: str
    text: str = ""
    note: str = ""
    new: bool = False
    deleted: bool = False

    @property
    def added(self) -> int:
        return sum(1 for line in self.text.splitlines() if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.text.splitlines() if line.startswith("-"))

    @property
    def summary(self) -> str:
        """``app/x.py (new, +12)``, ``big.bin (binary file)``."""
        if self.note:
            return f"{self.path} ({self.note})"
        kind = "new, " if self.new else "deleted, " if self.deleted else ""
        return f"{self.path} ({kind}+{self.added} -{self.removed})"


def _git(
    args: list[str], cwd: Path, ceiling: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
    if ceiling is not None:  # no repository is looked for above ``cwd``
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    try:
        return subprocess.run(
            ["git", "--no-pager", *_SAFE, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except FileNotFoundError:
        raise ReviewError("diffs need git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise ReviewError(f"git {args[0]} took longer than {GIT_TIMEOUT:g}s") from None


def _failed(result: subprocess.CompletedProcess[str], what: str) -> ReviewError:
    lines = (result.stderr or result.stdout).strip().splitlines()
    return ReviewError(f"{what} failed: {lines[-1] if lines else f'exit {result.returncode}'}")


# ---------------------------------------------------------------------- git's output per file

_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")


def split_diff(text: str) -> list[FileDiff]:
    """git's unified diff of many files as one ``FileDiff`` each."""
    files: list[FileDiff] = []
    for chunk in re.split(r"(?m)^(?=diff --git )", text):
        if not chunk.startswith("diff --git "):
            continue
        head, _, body = chunk.partition("\n@@")
        first = head.splitlines()[0]
        match = _HEADER.match(first)
        path = match.group(2) if match else first.removeprefix("diff --git ")
        gone = "\n+++ /dev/null" in head
        for line in head.splitlines():
            if line.startswith("+++ b/") or (gone and line.startswith("--- a/")):
                path = line[6:]
        new = "\nnew file mode" in head or "\n--- /dev/null" in head
        deleted = "\ndeleted file mode" in head or "\n+++ /dev/null" in head
        if "\nBinary files " in head or head.startswith("Binary files "):
            files.append(FileDiff(path, note="binary file: not shown", new=new, deleted=deleted))
            continue
        hunks = "@@" + body if body else ""
        if len(hunks) > MAX_DIFF_CHARS:
            size = _size(len(hunks))
            files.append(FileDiff(path, note=f"large diff ({size}): not shown", new=new))
            continue
        files.append(FileDiff(path, hunks.rstrip("\n"), new=new, deleted=deleted))
    return files


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} KB"


# ---------------------------------------------------------------------- a proposed edit


def diff_texts(old: str | None, new: str | None, path: str) -> FileDiff:
    """git's diff of ``old`` -> ``new`` (``None``: no file) as ``path``'s ``FileDiff``."""
    with tempfile.TemporaryDirectory(prefix="teamdeck-diff-") as tmp:
        sides: list[str] = []
        for name, text in (("a", old), ("b", new)):
            if text is None:
                sides.append("/dev/null")
                continue
            (Path(tmp) / name).write_text(text, encoding="utf-8", errors="surrogateescape")
            sides.append(name)
        result = _git(
            ["diff", "--no-index", *_DIFF_FLAGS, "--", *sides], Path(tmp), Path(tmp).parent
        )
    if result.returncode not in (0, 1):
        raise _failed(result, "git diff")
    found = split_diff(result.stdout)
    if not found:
        return FileDiff(path, note="no change")
    one = found[0]
    return FileDiff(path, one.text, one.note, new=old is None, deleted=new is None)


def _apply_edit(text: str, edit: Mapping[str, Any]) -> str | None:
    old, new = edit.get("old_string"), edit.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    if old == "":
        return new if text == "" else None
    if old not in text:
        return None
    return text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)


def proposed_diff(
    tool_name: str | None, tool_input: Mapping[str, Any] | None, base: Path
) -> FileDiff | None:
    """What an Edit/Write/MultiEdit call would change, or ``None`` for other tools. A path
    is taken relative to ``base`` (the agent's folder). The file is read, never written."""
    if tool_name not in EDIT_TOOLS or not tool_input:
        return None
    raw = tool_input.get("file_path")
    if not isinstance(raw, str) or not raw:
        return FileDiff("(no file_path)", note="the request names no file")
    path = base / raw
    shown = raw
    if path.is_absolute() and path.is_relative_to(base):
        shown = str(path.relative_to(base))  # as the person reads it: from the agent's folder
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        old: str | None = None
    except OSError as exc:
        return FileDiff(shown, note=f"could not read it: {exc.strerror or exc}")
    else:
        if size > MAX_FILE_BYTES:
            return FileDiff(shown, note=f"large file ({_size(size)}): not shown")
        try:
            data = path.read_bytes()
        except OSError as exc:
            return FileDiff(shown, note=f"could not read it: {exc.strerror or exc}")
        if b"\0" in data:
            return FileDiff(shown, note="binary file: not shown")
        old = data.decode("utf-8", errors="surrogateescape")
    new = _new_text(tool_name, tool_input, old)
    if isinstance(new, FileDiff):
        return FileDiff(shown, note=new.note)
    if len(new) > MAX_FILE_BYTES:
        return FileDiff(shown, note=f"large file ({_size(len(new))}): not shown", new=old is None)
    return diff_texts(old, new, shown)


def _new_text(tool: str, data: Mapping[str, Any], old: str | None) -> str | FileDiff:
    if tool == "Write":
        content = data.get("content")
        return content if isinstance(content, str) else FileDiff("", note="no content given")
    edits = data.get("edits") if tool == "MultiEdit" else [data]
    if not isinstance(edits, list) or not edits:
        return FileDiff("", note="no edits given")
    text = old if old is not None else ""
    if old is None and not all(isinstance(e, dict) and e.get("old_string") == "" for e in edits):
        return FileDiff("", note="the file does not exist: the edit would fail")
    for number, edit in enumerate(edits, 1):
        changed = _apply_edit(text, edit) if isinstance(edit, dict) else None
        if changed is None:
            which = f"edit {number}'s " if tool == "MultiEdit" else ""
            return FileDiff("", note=f"{which}old_string is not in the file: the edit would fail")
        text = changed
    return text


# ---------------------------------------------------------------------- work so far


def work_diff(
    folder: Path, since: float | None = None, project: Path | None = None
) -> list[FileDiff]:
    """What changed in ``folder``'s repository since ``since`` (a Unix time: the last commit
    made before it is the base; ``None``: ``HEAD``), uncommitted and untracked files
    included. ``ReviewError`` if there is no repository or git fails.

    ``project``: the person's repository, when ``folder`` is a teammate's worktree of it. The
    worktree's ``.git`` file is the teammate's to write: git is then pointed at the worktree's
    administrative folder inside ``project``'s own git folder, and a ``.git`` file naming any
    other place is refused (it could name a config that runs programs)."""
    if not folder.is_dir():
        raise ReviewError(f"{folder} is not a folder")
    where: list[str] = []
    if project is not None and (folder / ".git").is_file():
        where = ["--git-dir", str(_worktree_git_dir(folder, project)), "--work-tree", str(folder)]
        root = folder
    else:
        top = _git(["rev-parse", "--show-toplevel"], folder)
        if top.returncode != 0:
            raise ReviewError("not a git repository: no diff to show")
        root = Path(top.stdout.strip())
    base = _base(root, since, where)
    tracked = _git([*where, "diff", *_DIFF_FLAGS, "-M", base, "--"], root)
    if tracked.returncode != 0:
        raise _failed(tracked, "git diff")
    files = split_diff(tracked.stdout)
    others = _git([*where, "ls-files", "--others", "--exclude-standard", "-z"], root)
    if others.returncode != 0:
        raise _failed(others, "git ls-files")
    for name in sorted(n for n in others.stdout.split("\0") if n):
        files.append(_untracked(root, name))
    return sorted(files, key=lambda f: f.path)


def _worktree_git_dir(folder: Path, project: Path) -> Path:
    common = _git(["rev-parse", "--path-format=absolute", "--git-common-dir"], project)
    if common.returncode != 0:
        raise ReviewError(f"{project} is not inside a git repository")
    admin = Path(common.stdout.strip()).resolve() / "worktrees"
    try:
        line = (folder / ".git").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewError(f"could not read {folder / '.git'}: {exc}") from None
    named = Path(line.removeprefix("gitdir:").strip())
    target = (folder / named).resolve()
    if not line.startswith("gitdir:") or target.parent != admin or not target.is_dir():
        raise ReviewError(f"{folder / '.git'} does not name a worktree of {project}: not diffed")
    return target


def _base(root: Path, since: float | None, where: list[str]) -> str:
    if since is not None:
        found = _git([*where, "rev-list", "-1", f"--before=@{int(since)}", "HEAD"], root)
        if found.returncode == 0:
            return found.stdout.strip() or _EMPTY_TREE  # every commit is newer
    head = _git([*where, "rev-parse", "--verify", "--quiet", "HEAD"], root)
    return head.stdout.strip() if head.returncode == 0 else _EMPTY_TREE


def _untracked(root: Path, name: str) -> FileDiff:
    """A file git does not track yet, as a new file (read here, diffed away from the
    repository: ``--no-index`` inside it would still read its config)."""
    path = root / name
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return FileDiff(name, note=f"large file ({_size(size)}): not shown", new=True)
        data = path.read_bytes()
    except OSError as exc:
        return FileDiff(name, note=f"could not read it: {exc.strerror or exc}", new=True)
    if b"\0" in data:
        return FileDiff(name, note="binary file: not shown", new=True)
    if not data:
        return FileDiff(name, note="new empty file", new=True)
    return diff_texts(None, data.decode("utf-8", errors="surrogateescape"), name)


def recorded_diff(tool_name: str | None, tool_input: Any) -> FileDiff | None:
    """An Edit/Write/MultiEdit call as it was made, for a replay (the file as it was then is
    not kept): an edit's old text against its new one, a write as a new file's content."""
    if tool_name not in EDIT_TOOLS or not isinstance(tool_input, dict):
        return None
    path = str(tool_input.get("file_path") or "(no file_path)")
    if tool_name == "Write":
        content = tool_input.get("content")
        return diff_texts(None, content, path) if isinstance(content, str) else None
    edits = tool_input.get("edits") if tool_name == "MultiEdit" else [tool_input]
    if not isinstance(edits, list):
        return None
    olds: list[str] = []
    news: list[str] = []
    for edit in edits:
        if isinstance(edit, dict):
            old, new = edit.get("old_string"), edit.get("new_string")
            if isinstance(old, str) and isinstance(new, str):
                olds.append(old)
                news.append(new)
    if not olds:
        return None
    return diff_texts("\n".join(olds) + "\n", "\n".join(news) + "\n", path)

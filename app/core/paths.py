"""The home layout, name sanitising, agent ids and path confinement.

Layout (Claude Code's): ``teams/{team}/config.json``, ``teams/{team}/inboxes/{agent}.json``,
``tasks/{team}/{id}.json``, ``tasks/{team}/.lock``, ``tasks/{team}/.highwatermark``.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from app.core.errors import InvalidNameError, NotFoundError, UnsafePathError, clip

LEAD_NAME = "team-lead"
USER_NAME = "user"
LockStyle = Literal["flock", "mkdir"]

_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_TASK_ID = re.compile(r"[0-9]{1,18}")
_FORBIDDEN = ("/", "\\", "\x00", "\n", "\r")
MAX_NAME_LENGTH = 100


def default_home() -> Path:
    """``$TEAMDECK_HOME``, else ``~/.teamdeck``."""
    env = os.environ.get("TEAMDECK_HOME")
    return Path(env).expanduser() if env else Path.home() / ".teamdeck"


def claude_home() -> Path:
    """Claude Code's own home: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def check_raw_name(name: str, kind: str = "name") -> None:
    """Reject names that are unusable before sanitising (empty, path-like, control, bidi and
    zero-width characters: the sanitiser would turn those into ``-`` without a word)."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidNameError(f"{kind} must not be empty")
    if len(name) > MAX_NAME_LENGTH:  # first: no message below echoes a name this long
        raise InvalidNameError(
            f"{kind} {clip(name)!r} is longer than {MAX_NAME_LENGTH} characters ({len(name)})"
        )
    if name in (".", ".."):
        raise InvalidNameError(f"{kind} {name!r} is not allowed")
    for bad in _FORBIDDEN:
        if bad in name:
            raise InvalidNameError(f"{kind} {name!r} must not contain {bad!r}")
    hidden = _hidden_char(name)
    if hidden is not None:
        raise InvalidNameError(
            f"{kind} {name!r} must not contain {hidden!r} (control, bidi or invisible "
            "characters: a name must read as what it is)"
        )


#: Unicode categories a name never holds: controls (ESC...), format characters (bidi
#: overrides and isolates, zero-width characters), line and paragraph separators, surrogates.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _hidden_char(name: str) -> str | None:
    """The first character of ``name`` that does not show as itself, else ``None``."""
    if name.isprintable():
        return None
    return next((c for c in name if unicodedata.category(c) in _HIDDEN_CATEGORIES), None)


def sanitize_name(name: str, kind: str = "name") -> str:
    """Claude Code's normaliser: non-alphanumerics become ``-``, then lower-case.

    Raises InvalidNameError for names that are unusable or sanitise to nothing but dashes.
    """
    check_raw_name(name, kind)
    clean = _NON_ALNUM.sub("-", ascii_letters(name, kind)).lower()
    if not clean.strip("-"):
        raise InvalidNameError(f"{kind} {name!r} has no letters or digits")
    return clean


def ascii_letters(name: str, kind: str = "name") -> str:
    """``name`` if its letters and digits are all ASCII; InvalidNameError otherwise, with the
    ASCII spelling to use where there is one (``"ünïcöde"``: use ``"unicode"``). The sanitiser
    would turn each such letter into ``-``, silently (``"ünïcødé"`` -> ``"-n-c-d-"``)."""
    if name.isascii():
        return name
    foreign = "".join(dict.fromkeys(c for c in name if not c.isascii() and c.isalnum()))
    if not foreign:
        return name  # only symbols (an emoji, a dash...): they become "-" like ASCII ones
    text = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    left = any(not c.isascii() and c.isalnum() for c in text)
    hint = "" if left else f", e.g. {_NON_ALNUM.sub('-', text).lower()!r}"
    raise InvalidNameError(
        f"{kind} {name!r} has letters other than a-z ({clip(foreign, 20)}): use a-z, 0-9 "
        f"and '-'{hint}"
    )


def path_component(name: str, kind: str = "name") -> str:
    """The file-name form of an existing agent or team name (``@`` becomes ``-``)."""
    check_raw_name(name, kind)
    return name.replace("@", "-")


def is_task_id(value: str) -> bool:
    """A task id is a decimal number in ASCII digits (``"²"`` passes ``str.isdigit``, not this)."""
    return _TASK_ID.fullmatch(value) is not None


def agent_id(name: str, team: str) -> str:
    return f"{name}@{team}"


def parse_agent_id(value: str) -> tuple[str, str] | None:
    """``"name@team"`` -> ``(name, team)``; ``None`` without an ``@``."""
    idx = value.find("@")
    if idx == -1:
        return None
    return value[:idx], value[idx + 1 :]


def strip_team_suffix(recipient: str) -> str:
    """``researcher@my-team`` -> ``researcher`` (recipients may be given as agent ids)."""
    parsed = parse_agent_id(recipient)
    return parsed[0] if parsed else recipient


@dataclass(frozen=True)
class Layout:
    """Pure path arithmetic for one home; every path is checked to stay inside ``root``."""

    root: Path

    @property
    def teams_dir(self) -> Path:
        return self.root / "teams"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    def team_dir(self, team: str) -> Path:
        return self.confine(self.teams_dir / path_component(team, "team name"))

    def config_path(self, team: str) -> Path:
        return self.team_dir(team) / "config.json"

    def inboxes_dir(self, team: str) -> Path:
        return self.confine(self.teams_dir / path_component(team, "team name") / "inboxes")

    def inbox_path(self, team: str, agent: str) -> Path:
        """``teams/{team}/inboxes/{agent}.json``, its folder confined (:meth:`confine`).

        Every inbox operation asks for it, so the path and the text of each folder below the
        root are kept from the first time: later calls repeat only the check that matters,
        confining's fast path -- an ``lstat`` of each folder, none a symlink -- without the
        path arithmetic. Anything else (a folder missing, or a symlink, even one that stays
        inside the home) is confined afresh, refused if it leads out of the home. The file
        itself is never vouched for here: reads open it with ``O_NOFOLLOW``, and writes
        replace it by a rename, which never follows a symlink."""
        known = self._inboxes.get((team, agent))
        if known is not None and _no_symlink(known[1]):
            return known[0]
        inboxes = self.teams_dir / path_component(team, "team name") / "inboxes"
        path = self.confine(inboxes) / f"{path_component(agent, 'agent name')}.json"
        folders = [os.fspath(inboxes.parent.parent), os.fspath(inboxes.parent)]
        if len(self._inboxes) >= 4096:
            self._inboxes.clear()
        self._inboxes[(team, agent)] = (path, [*folders, os.fspath(inboxes)])
        return path

    @cached_property
    def _inboxes(self) -> dict[tuple[str, str], tuple[Path, list[str]]]:
        return {}

    def agents_dir(self, team: str) -> Path:
        """teamdeck's per-agent files (not Claude Code's): ``{name}.jsonl`` (the agent's event
        log) and ``{name}.json`` (its process record, the heartbeat in its mtime)."""
        return self.confine(self.teams_dir / path_component(team, "team name") / "agents")

    def agent_log_path(self, team: str, agent: str) -> Path:
        return self.agents_dir(team) / f"{path_component(agent, 'agent name')}.jsonl"

    def agent_record_path(self, team: str, agent: str) -> Path:
        return self.agents_dir(team) / f"{path_component(agent, 'agent name')}.json"

    def task_dir(self, team: str) -> Path:
        return self.confine(self.tasks_dir / path_component(team, "team name"))

    def task_path(self, team: str, task_id: str | int) -> Path:
        task_id = str(task_id)
        if not is_task_id(task_id):
            raise InvalidNameError(f"task id {clip(task_id)!r} is not a number")
        return self.task_dir(team) / f"{int(task_id)}.json"

    def tasklist_lock_path(self, team: str) -> Path:
        return self.task_dir(team) / ".lock"

    def highwatermark_path(self, team: str) -> Path:
        return self.task_dir(team) / ".highwatermark"

    @cached_property
    def _root_text(self) -> str:
        return os.fspath(self.root)

    @cached_property
    def _resolved_root(self) -> Path:
        return self.root.resolve()

    def confine(self, path: Path) -> Path:
        """Refuse a path that resolves outside the root (e.g. through a planted symlink).

        Fast path: no component below the root is a symlink (one ``lstat`` each, stopping at
        the first that does not exist). Otherwise the path is resolved in full; a symlink that
        stays inside the root is accepted."""
        text = os.fspath(path)  # a Path's text is normalised: one separator between parts
        base = self._root_text
        if text == base:
            return path
        prefix = os.path.join(base, "")
        if text.startswith(prefix):  # as ``relative_to``, on text: a Path per part costs more
            parts = text[len(prefix) :].split(os.sep)
            if ".." not in parts:
                current = base
                for part in parts:
                    current = os.path.join(current, part)
                    try:
                        mode = os.lstat(current).st_mode
                    except (FileNotFoundError, NotADirectoryError):
                        return path  # nothing below exists, so there is nothing to follow
                    if stat.S_ISLNK(mode):
                        break
                else:
                    return path
        root = self._resolved_root
        resolved = path.resolve()
        if resolved != root and root not in resolved.parents:
            raise UnsafePathError(f"{path} resolves outside {root}")
        return path


def _no_symlink(folders: list[str]) -> bool:
    """Whether every one of ``folders`` exists and none is a symlink (``lstat``)."""
    try:
        for folder in folders:  # a plain loop: a generator costs a tenth of the lstats
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                return False
    except OSError:
        return False
    return True


def existing_team(layout: Layout, name: str) -> str:
    """The on-disk name of a team given as typed (``"My Team"`` finds ``my-team``).

    A team exists if its ``teams/{name}/`` or ``tasks/{name}/`` directory does, so nothing is
    ever created for a mistyped name (NotFoundError instead)."""
    check_raw_name(name, "team name")
    candidates = [name]
    sanitized = sanitize_name(name, "team name")
    if sanitized != name:
        candidates.append(sanitized)
    for candidate in candidates:
        if layout.team_dir(candidate).is_dir() or layout.task_dir(candidate).is_dir():
            return candidate
    raise NotFoundError(f"team {name!r} does not exist")


def project_of(cwd: Path) -> Path:
    """The project a working directory belongs to: for a teammate's worktree
    (``<project>/.claude/worktrees/<team>-<name>``, see ``WorktreeManager.path_for``) the
    project, where its settings files are; any other directory is its own project."""
    parent = cwd.parent
    if parent.name == "worktrees" and parent.parent.name == ".claude":
        return parent.parent.parent
    return cwd

"""Team configs: create (with name dedupe), read, list, member registry, delete + cleanup."""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from app.core.errors import (
    CorruptFileError,
    InvalidNameError,
    NameCollisionError,
    NotFoundError,
    TeamdeckError,
    TeamNotEmptyError,
)
from app.core.events import TeamChanged, TeamRemoved
from app.core.files import atomic_write_json, ensure_dir, load_json, parse_with_retry
from app.core.home_parts import HomeParts
from app.core.locks import LockError
from app.core.member_states import MemberStates
from app.core.models import TeamConfig, TeamMember, now_ms
from app.core.paths import LEAD_NAME, agent_id, sanitize_name

if TYPE_CHECKING:
    from collections.abc import Callable

COLORS = ("blue", "green", "yellow", "magenta", "cyan", "red", "orange", "purple", "pink")
#: Times a team's folder is removed before giving up (a writer may slip a file in meanwhile).
REMOVE_TRIES = 5


def _parse_config(data: bytes) -> TeamConfig:
    raw = load_json(data)
    if not isinstance(raw, dict):
        raise ValueError("team config is not a JSON object")
    try:
        return TeamConfig.model_validate(raw)
    except Exception as exc:  # pydantic ValidationError: report as corrupt, one line
        raise ValueError(f"invalid team config: {str(exc).splitlines()[0]}") from None


@dataclass(frozen=True)
class TeamListing:
    """``Teams.scan()``: the readable configs and one error line per unreadable one."""

    teams: list[TeamConfig]
    errors: dict[str, str]


class Teams:
    def __init__(self, home: HomeParts) -> None:
        self.home = home
        self.layout = home.layout
        self.states = MemberStates(self)
        """Member state changes (``isActive``, ``mode``), written to the config in batches."""

    # ------------------------------------------------------------------ read

    def get(self, name: str) -> TeamConfig | None:
        """The team's config, ``None`` if it does not exist; CorruptFileError if unreadable."""
        path = self.layout.config_path(name)
        return parse_with_retry(path, _parse_config)

    def require(self, name: str) -> TeamConfig:
        config = self.get(name)
        if config is None:
            raise NotFoundError(f"team {name!r} does not exist")
        return config

    def exists(self, name: str) -> bool:
        return self.layout.config_path(name).exists()

    def names(self) -> list[str]:
        teams_dir = self.layout.teams_dir
        if not teams_dir.is_dir():
            return []
        return sorted(
            e.name
            for e in os.scandir(teams_dir)
            if e.is_dir(follow_symlinks=False) and os.path.exists(Path(e.path) / "config.json")
        )

    def scan(self) -> TeamListing:
        teams: list[TeamConfig] = []
        errors: dict[str, str] = {}
        for name in self.names():
            try:
                config = self.get(name)
            except CorruptFileError as exc:
                errors[name] = str(exc)
                continue
            if config is not None:
                teams.append(config)
        return TeamListing(teams, errors)

    def list(self) -> list[TeamConfig]:
        """All readable teams (use ``scan()`` to see the unreadable ones too)."""
        return self.scan().teams

    # ------------------------------------------------------------------ create / delete

    def create(
        self,
        name: str,
        description: str | None = None,
        lead_session_id: str | None = None,
        *,
        agent_type: str | None = None,
        model: str | None = None,
        cwd: str | None = None,
        dedupe: bool = True,
    ) -> TeamConfig:
        """Create a team: config with the lead as first member, inbox dir and task list.

        A name already taken gets a ``-2``, ``-3``... suffix (Claude Code's dedupe, as the
        lead's TeamCreate does); with ``dedupe=False`` it is an error (NameCollisionError)."""
        base = sanitize_name(name, "team name")
        ensure_dir(self.layout.teams_dir)
        with self.home.lock(self.layout.teams_dir / ".create"):
            final = base
            counter = 2
            while self.layout.team_dir(final).exists() or self.layout.task_dir(final).exists():
                if not dedupe:
                    raise NameCollisionError(f"team {base!r} already exists")
                final = f"{base}-{counter}"
                counter += 1
            lead_id = agent_id(LEAD_NAME, final)
            now = now_ms()
            config = TeamConfig(
                name=final,
                description=description,
                created_at=now,
                lead_agent_id=lead_id,
                lead_session_id=lead_session_id or str(uuid.uuid4()),
                members=[
                    TeamMember(
                        agent_id=lead_id,
                        name=LEAD_NAME,
                        agent_type=agent_type or LEAD_NAME,
                        model=model,
                        joined_at=now,
                        tmux_pane_id="",
                        cwd=cwd or os.getcwd(),
                        subscriptions=[],
                    )
                ],
            )
            if description is None:
                config.__pydantic_fields_set__.discard("description")
            try:
                ensure_dir(self.layout.team_dir(final))
                ensure_dir(self.layout.inboxes_dir(final))
                self._write(config)
                self.home.tasks(final).init()
            except BaseException:
                # Nothing half-made stays (a full disk must not leave a team folder per try):
                # both folders were free when this began, under the lock.
                shutil.rmtree(self.layout.team_dir(final), ignore_errors=True)
                shutil.rmtree(self.layout.task_dir(final), ignore_errors=True)
                raise
        self.home.emit(TeamChanged(final))
        return config

    def delete(self, name: str, *, force: bool = False) -> builtins.list[str]:
        """Remove the team's directory, its task list and its members' git worktrees.

        Refuses (TeamNotEmptyError) while members other than the lead remain, unless ``force``.
        A corrupt config is an error too, unless ``force`` (its worktrees are then unknown).
        Returns the worktree paths removed.
        """
        try:
            config = self.get(name)
        except CorruptFileError:
            if not force:
                raise
            config = None
        if config is None and not self.layout.team_dir(name).exists():
            raise NotFoundError(f"team {name!r} does not exist")
        removed: builtins.list[str] = []
        if config is not None:
            active = config.teammates
            if active and not force:
                names = ", ".join(m.name for m in active)
                raise TeamNotEmptyError(
                    f"Cannot cleanup team with {len(active)} active member(s): {names}. "
                    "Use requestShutdown first."
                )
            for member in config.members:
                if member.worktree_path and remove_worktree(Path(member.worktree_path)):
                    removed.append(member.worktree_path)
        self.states.flush()  # pending member changes are written now, not into the removal
        for folder in (self.layout.team_dir(name), self.layout.task_dir(name)):
            for _ in range(REMOVE_TRIES):  # a file a writer slipped in meanwhile: again
                shutil.rmtree(folder, ignore_errors=True)
                if not folder.exists():
                    break
        self.home.emit(TeamRemoved(name))
        return removed

    # ------------------------------------------------------------------ members

    def unique_member_name(self, team: str, name: str) -> str:
        """Sanitise ``name`` and dedupe it within the team (``name-2``, ``name-3``...)."""
        clean = sanitize_name(name, "agent name")
        config = self.require(team)
        # Compared as add_member does: after sanitising (a Claude Code config may hold names
        # like "My_Agent", which would collide with "my-agent").
        taken = {_NON_ALNUM.sub("-", m.name).lower() for m in config.members}
        if clean not in taken:
            return clean
        counter = 2
        while f"{clean}-{counter}" in taken:
            counter += 1
        return f"{clean}-{counter}"

    def add_member(self, team: str, member: TeamMember) -> TeamConfig:
        """Register a member. Its name must be sanitised already (InvalidNameError otherwise)
        and must not collide with an existing member after sanitising and lower-casing
        (NameCollisionError): ``Researcher`` and ``researcher`` would share an inbox."""
        return self.modify(team, lambda config: _add_checked(config, team, member))

    def add_members(
        self, team: str, members: builtins.list[TeamMember]
    ) -> builtins.list[TeamdeckError | None]:
        """Register several members in one rewrite of the config (a team spawned at once: one
        lock and one atomic write instead of one per member, each longer than the last). Each
        is checked as :meth:`add_member` checks it; one refused is left out and its error
        returned in its place (``None``: registered). An unreadable config raises."""
        outcome: builtins.list[TeamdeckError | None] = [None] * len(members)

        def change(config: TeamConfig) -> None:
            for index, member in enumerate(members):
                try:
                    _add_checked(config, team, member)
                except TeamdeckError as exc:
                    outcome[index] = exc

        self.modify(team, change)
        return outcome

    def remove_member(
        self, team: str, name: str | None = None, agent_id: str | None = None
    ) -> bool:
        """Remove a member by name (case-blind) or agent id; ``False`` if it was not there."""
        if not name and not agent_id:
            return False
        removed = False

        def change(config: TeamConfig) -> None:
            nonlocal removed
            keep = [
                m
                for m in config.members
                if not (
                    (agent_id and m.agent_id == agent_id)
                    or (name and m.name.lower() == name.lower())
                )
            ]
            removed = len(keep) != len(config.members)
            config.members = keep

        self.modify(team, change)
        return removed

    def update_member(self, team: str, name: str, **fields: Any) -> TeamMember:
        """Set fields on a member (e.g. ``mode="acceptEdits"``, ``is_active=False``)."""
        found: builtins.list[TeamMember] = []

        def change(config: TeamConfig) -> None:
            member = config.member(name)
            if member is None:
                raise NotFoundError(f"team {team!r} has no member named {name!r}")
            for key, value in fields.items():
                setattr(member, _MEMBER_FIELDS.get(key, key), value)
            found.append(member)

        self.modify(team, change)
        return found[0]

    def update_members(self, team: str, members: dict[str, dict[str, Any]]) -> bool:
        """Set fields on several members in one rewrite (members no longer in the team, or a
        team deleted meanwhile, are skipped); whether the file was rewritten -- not if every
        value was already there."""
        if not self.layout.config_path(team).is_file():
            return False

        def change(config: TeamConfig) -> None:
            for name, fields in members.items():
                member = config.member(name)
                for key, value in fields.items() if member is not None else ():
                    setattr(member, _MEMBER_FIELDS.get(key, key), value)

        try:
            return self.modify(team, change, written=True) is not None
        except (NotFoundError, LockError):
            if self.layout.config_path(team).is_file():
                raise
            return False  # the team was deleted meanwhile

    # ------------------------------------------------------------------ hidden panes

    def hidden_pane_ids(self, team: str) -> builtins.list[str]:
        """The seeds' ``getHiddenPaneIds``: tmux panes of the team hidden from view."""
        return list(self.require(team).hidden_pane_ids or [])

    def is_pane_hidden(self, team: str, pane_id: str) -> bool:
        return pane_id in self.hidden_pane_ids(team)

    def set_pane_hidden(self, team: str, pane_id: str, hidden: bool = True) -> bool:
        """Add (or remove) a pane id in ``hiddenPaneIds``; ``False`` if nothing changed."""
        changed = False

        def change(config: TeamConfig) -> None:
            nonlocal changed
            panes = list(config.hidden_pane_ids or [])
            if hidden and pane_id not in panes:
                panes.append(pane_id)
            elif not hidden and pane_id in panes:
                panes.remove(pane_id)
            else:
                return
            changed = True
            config.hidden_pane_ids = panes

        self.modify(team, change)
        return changed

    @overload
    def modify(self, team: str, change: Callable[[TeamConfig], None]) -> TeamConfig: ...

    @overload
    def modify(
        self, team: str, change: Callable[[TeamConfig], None], *, written: bool
    ) -> TeamConfig | None: ...

    def modify(
        self, team: str, change: Callable[[TeamConfig], None], *, written: bool = False
    ) -> TeamConfig | None:
        """Read-modify-write the config under its lock. Nothing is written (and no change
        announced) if ``change`` left every value as it was: readers re-read the file at each
        write. ``written=True``: ``None`` in that case instead of the config."""
        path = self.layout.config_path(team)
        with self.home.lock(path):
            config = self.require(team)
            before = config.to_json_dict()
            change(config)
            after = config.to_json_dict()
            if after == before and list(after) == list(before):
                return None if written else config
            atomic_write_json(path, after)
        self.home.emit(TeamChanged(config.name))
        return config

    def _write(self, config: TeamConfig) -> None:
        atomic_write_json(self.layout.config_path(config.name), config.to_json_dict())


_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def _add_checked(config: TeamConfig, team: str, member: TeamMember) -> None:
    """Append ``member`` to ``config`` (``Teams.add_member``'s checks and defaults)."""
    clean = sanitize_name(member.name, "agent name")
    for existing in config.members:
        if _NON_ALNUM.sub("-", existing.name).lower() == clean:
            raise NameCollisionError(
                f"team {team!r} already has a member named {existing.name!r}"
                + (
                    f" ({member.name!r} differs only by case or punctuation)"
                    if existing.name != member.name
                    else ""
                )
            )
    if clean != member.name:
        raise InvalidNameError(f"agent name {member.name!r} is not normalised (use {clean!r})")
    if not member.agent_id:
        member.agent_id = agent_id(member.name, config.name)
    if not member.joined_at:
        member.joined_at = now_ms()
    if member.color is None:
        member.color = COLORS[(len(config.members) - 1) % len(COLORS)]
    config.members.append(member)


# update_member(**fields) takes attribute names or the JSON keys (``isActive``); other keys are
# kept as extra fields under that name.
_MEMBER_FIELDS: dict[str, str] = {
    **{name: name for name in TeamMember.model_fields},
    **{f.alias: name for name, f in TeamMember.model_fields.items() if f.alias},
}
_GITDIR = re.compile(r"^gitdir:\s*(.+)$")


def remove_worktree(path: Path) -> bool:
    """Remove a member's git worktree: ``git worktree remove --force``, else delete the folder.

    Only a folder that is a worktree (has a ``.git`` *file*) is touched, so a config cannot
    make teamdeck delete an arbitrary directory.
    """
    dot_git = path / ".git"
    if not dot_git.is_file():
        return False
    import subprocess  # here: listing teams (teamdeck team list) never needs it

    main_repo: Path | None = None
    with contextlib.suppress(OSError):
        match = _GITDIR.match(dot_git.read_text("utf-8").strip())
        if match:
            main_repo = Path(match.group(1)).resolve().parent.parent.parent
    if main_repo is not None and main_repo.is_dir():
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            result = subprocess.run(
                ["git", "worktree", "remove", "--force", str(path)],
                cwd=main_repo,
                capture_output=True,
                text=True,
                timeout=30,
            )
            if result.returncode == 0 and not path.exists():
                return True
    shutil.rmtree(path, ignore_errors=True)
    if main_repo is not None and main_repo.is_dir():
        # The folder is gone; drop the repository's record of it too.
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["git", "worktree", "prune"],
                cwd=main_repo,
                capture_output=True,
                timeout=30,
            )
    return not path.exists()

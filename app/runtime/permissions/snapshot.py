"""Hooks and permission rules as a run took them at its start.

A settings file holds code to run (hooks) and what may run without asking (rules); an agent
can write one (``.claude/settings.json`` in its project). So teamdeck reads them once, when the
run starts (:func:`take`), and every agent of the process uses that snapshot (:func:`current`),
never a later state of the files: a change during the run is shown to the person
(:mod:`app.runtime.team.settings_watch`) and used only once they accept it (:func:`replace`).

A teammate in a process of its own uses its lead's snapshot: the lead's runtime keeps it in
``teams/{team}/agents/settings.json`` (:func:`write_snapshot`; ``{"hooks": {event: [{"command",
"timeout", "matcher", "source"}]}, "permissions": {"allow", "ask", "deny"}}``: the accepted
hooks and the run's rules), which the teammate follows (:func:`follow`: read again when its
``stat`` changes, i.e. when the person accepted a change or answered "always allow"; its rules
through a ``RulesFeed`` before each tool call). Only the lead's runtime writes it, atomically,
and only with what the person accepted, signed with the team's key as the person's
(``app.core.authority``): a teammate follows no file its key did not sign (a rule change is
authority, like an answer). Without such a file (``teamdeck agent`` on a team no teamdeck
leads) it takes its own snapshot at its start.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from app.core import authority
from app.core.files import atomic_write_json
from app.runtime.permissions import PermissionRules, Rule
from app.runtime.permissions.settings import (
    HOOK_EVENTS,
    HookCommand,
    Settings,
    load_settings,
    settings_paths,
)

_lock = threading.Lock()
_taken: dict[Path, Settings] = {}
#: project -> (the lead's snapshot file, its stat when last read, the team's key)
_followed: dict[Path, tuple[Path, tuple[int, int, int] | None, authority.TeamKey | None]] = {}
#: The recipient a snapshot is signed for (no member is called that).
SIGNED_FOR = "*settings*"


def take(project: Path) -> Settings:
    """The snapshot of ``project``'s settings, read from the files the first time only."""
    key = project.absolute()
    with _lock:
        taken = _taken.get(key)
    if taken is not None:
        return taken
    settings = load_settings(key)
    with _lock:
        return _taken.setdefault(key, settings)


def current(project: Path) -> Settings:
    """The settings the agents of ``project`` use now: the snapshot (the lead's, if followed,
    read again when its file changed)."""
    key = project.absolute()
    with _lock:
        followed = _followed.get(key)
    if followed is not None:
        path, seen, team_key = followed
        now = _stat(path)
        if now is not None and now != seen:
            try:
                settings = read_snapshot(path, team_key)
            except (OSError, ValueError):
                settings = None  # half-written, gone or not signed: keep the one in use
            if settings is not None:
                with _lock:
                    _taken[key] = settings
                    _followed[key] = (path, now, team_key)
    return take(key)


def replace(project: Path, settings: Settings) -> None:
    """The person accepted ``settings``: the agents of ``project`` use them from now on."""
    with _lock:
        _taken[project.absolute()] = settings


def follow(project: Path, path: Path, team_key: authority.TeamKey | None = None) -> None:
    """Use the lead's snapshot in ``path`` for ``project`` (see the module docstring); with
    ``team_key``, only as long as it is signed with it."""
    key = project.absolute()
    seen = _stat(path)  # before reading: a write in between is read again at the next look
    settings = read_snapshot(path, team_key)
    with _lock:
        _taken[key] = settings
        _followed[key] = (path, seen, team_key)


def forget(project: Path) -> None:
    """Drop the snapshot of ``project`` (the next :func:`take` reads the files again)."""
    key = project.absolute()
    with _lock:
        _taken.pop(key, None)
        _followed.pop(key, None)


def file_stats(project: Path) -> tuple[tuple[int, int, int] | None, ...]:
    """What tells that a settings file of ``project`` changed (cheap: ``stat`` only)."""
    return tuple(_stat(path) for _, path in settings_paths(project.absolute()))


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


# ------------------------------------------------------------------------------ what changed


def _hook_keys(settings: Settings) -> set[tuple[str, str, float, str]]:
    return {
        (hook.event, hook.command, hook.timeout, hook.matcher)
        for hooks in settings.hooks.values()
        for hook in hooks
    }


def changes(old: Settings, new: Settings, known: PermissionRules | None = None) -> list[str]:
    """What ``new`` adds to or removes from ``old``, one line each (hooks and rules; a rule
    ``known`` has already, e.g. from an "always allow" answer, is no change)."""
    lines: list[str] = []
    before, after = _hook_keys(old), _hook_keys(new)
    for event, command, _, _ in sorted(after - before):
        lines.append(f"adds a {event} hook: {command}")
    for event, command, _, _ in sorted(before - after):
        lines.append(f"removes a {event} hook: {command}")
    for kind in ("allow", "ask", "deny"):
        was: list[Rule] = getattr(old.rules, kind)
        now: list[Rule] = getattr(new.rules, kind)
        have: list[Rule] = getattr(known, kind) if known is not None else []
        lines += [f"adds {kind} rule {rule}" for rule in now if rule not in was + have]
        lines += [f"removes {kind} rule {rule}" for rule in was if rule not in now]
    return lines


# ------------------------------------------------------------------------- the lead's file


def write_snapshot(
    path: Path,
    settings: Settings,
    rules: PermissionRules | None = None,
    team_key: authority.TeamKey | None = None,
) -> None:
    """Replace the snapshot file atomically with ``settings``' hooks and ``rules`` (the run's:
    its settings' rules, ``--allow``/``--deny``, "always allow" answers; default: the
    settings'). A follower sees every write (:func:`current` compares the file's ``stat``):
    a write that left the same ``stat`` (an inode used again, in the same clock tick, with
    the same size) moves the file's mtime on by a nanosecond."""
    hooks = {
        event: [
            {"command": h.command, "timeout": h.timeout, "matcher": h.matcher,
             "source": str(h.source) if h.source else None}
            for h in hooks
        ]
        for event, hooks in settings.hooks.items()
    }  # fmt: skip
    rules = settings.rules if rules is None else rules
    permissions = {
        kind: [str(r) for r in getattr(rules, kind)] for kind in ("allow", "ask", "deny")
    }
    data: dict[str, Any] = {"hooks": hooks, "permissions": permissions}
    if team_key is not None:
        data = team_key.sign(data, to=SIGNED_FOR, origin=authority.PERSON)
    before = _stat(path)
    atomic_write_json(path, data)
    after = _stat(path)
    if after is not None and after == before:
        os.utime(path, ns=(after[0] + 1, after[0] + 1))


def read_snapshot(path: Path, team_key: authority.TeamKey | None = None) -> Settings:
    """The settings in a snapshot file; ValueError if it is not one (or, with ``team_key``,
    not one signed with it)."""
    raw = path.read_bytes()
    data: Any = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a settings snapshot")
    text = raw.decode("utf-8", "replace")
    if team_key is not None and team_key.check(text, to=SIGNED_FOR) != authority.PERSON:
        raise ValueError(f"{path}: not signed with the team's key")
    settings = Settings(files=[path])
    for event, entries in (data.get("hooks") or {}).items():
        if event not in HOOK_EVENTS or not isinstance(entries, list):
            continue
        settings.hooks[event] = [
            HookCommand(event, str(e["command"]), float(e.get("timeout") or 60),
                        str(e.get("matcher") or ""), Path(e["source"]) if e.get("source") else None)
            for e in entries
            if isinstance(e, dict) and isinstance(e.get("command"), str)
        ]  # fmt: skip
    permissions = data.get("permissions") or {}
    settings.rules = PermissionRules.from_strings(
        *(permissions.get(kind) or () for kind in ("allow", "ask", "deny"))
    )
    return settings

"""Claude Code's settings files: permission rules, hooks, the default and teammate modes.

Where (lowest to highest precedence, as Claude Code reads them):

- user: ``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``;
- project: ``{cwd}/.claude/settings.json`` (shared, checked in);
- local: ``{cwd}/.claude/settings.local.json`` (personal, where "always allow" answers go).

Shape (only the keys teamdeck uses; every other key is left alone)::

    {
      "permissions": {"allow": ["Bash(git:*)"], "ask": [], "deny": ["Read(./.env)"],
                      "defaultMode": "acceptEdits", "disableBypassPermissionsMode": "disable"},
      "teammateMode": "in-process",
      "hooks": {
        "TaskCompleted": [{"matcher": "", "hooks": [{"type": "command",
                                                     "command": "make test", "timeout": 120}]}]
      }
    }

Rule lists and hooks of all files add up (deny wins over ask over allow when deciding, see
``permissions.decide``); for ``defaultMode`` and ``teammateMode`` the most specific file wins.
``disableBypassPermissionsMode: "disable"`` in any file turns bypassPermissions off for the run
(seed 001 §7: "Can be disabled via ... ``permissions.disableBypassPermissionsMode``"): a more
specific file cannot turn it back on.
A file that cannot be read or parsed, and every bad entry in one, becomes a one-line warning
in ``Settings.warnings``; the rest of the settings still load. Nothing here ever writes a file
except ``add_allow_rule``, which rewrites one settings file atomically keeping every other key.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.files import atomic_write_bytes, dumps, encode_text, load_json, read_bytes
from app.runtime.permissions import PERMISSION_MODES, PermissionRules, Rule

#: The hook events teamdeck runs (Claude Code's names).
HOOK_EVENTS: tuple[str, ...] = ("TeammateIdle", "TaskCreated", "TaskCompleted")
#: Seconds a hook may run when its entry gives no ``timeout`` (Claude Code's default).
DEFAULT_HOOK_TIMEOUT = 60.0
TEAMMATE_MODES: tuple[str, ...] = ("in-process", "process", "tmux")
_RULE_KINDS = ("allow", "ask", "deny")
_write_lock = threading.Lock()


class SettingsError(ValueError):
    """A settings file that cannot be changed safely (unreadable, not a JSON object...)."""


@dataclass(frozen=True)
class HookCommand:
    """One ``{"type": "command", "command": ..., "timeout": ...}`` entry of an event."""

    event: str
    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    matcher: str = ""
    source: Path | None = None


@dataclass
class Settings:
    """What the settings files say, merged, plus one warning line per problem."""

    rules: PermissionRules = field(default_factory=PermissionRules)
    hooks: dict[str, list[HookCommand]] = field(default_factory=dict)
    default_mode: str | None = None
    teammate_mode: str | None = None
    #: The settings file whose ``permissions.disableBypassPermissionsMode`` is ``"disable"``.
    bypass_disabled_by: Path | None = None
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    #: The ``sandbox`` blocks, merged (a later file's keys win): ``enabled``,
    #: ``network.allowedHosts``, ``passEnv`` (see ``app.runtime.sandbox.options``).
    sandbox: dict[str, Any] = field(default_factory=dict)

    def hooks_for(self, event: str) -> list[HookCommand]:
        return list(self.hooks.get(event, ()))


def user_settings_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (where the user settings live)."""
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def local_settings_path(cwd: Path) -> Path:
    """The personal project settings: where an "always allow" answer is recorded."""
    return cwd / ".claude" / "settings.local.json"


def settings_paths(cwd: Path, user_dir: Path | None = None) -> list[tuple[str, Path]]:
    """The settings files, lowest precedence first, labelled user / project / local."""
    user = (user_dir or user_settings_dir()) / "settings.json"
    return [
        ("user", user),
        ("project", cwd / ".claude" / "settings.json"),
        ("local", local_settings_path(cwd)),
    ]


def read_settings_file(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; ``None`` if there is no such file. OSError or
    SettingsError (one line, naming the file) if it cannot be read or is not an object."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if data is None:
        return None
    if not data.strip():
        return {}
    try:
        value = load_json(data)
    except (ValueError, UnicodeDecodeError) as exc:
        reason = " ".join(str(exc).split())
        raise SettingsError(f"{path}: not valid JSON ({reason})") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


def load_settings(
    cwd: Path, *, user_dir: Path | None = None, include_user: bool = True
) -> Settings:
    """Read and merge the settings files for ``cwd`` (see the module docstring)."""
    settings = Settings()
    for label, path in settings_paths(cwd, user_dir):
        if label == "user" and not include_user:
            continue
        try:
            data = read_settings_file(path)
        except (SettingsError, OSError) as exc:
            settings.warnings.append(f"ignoring settings file {exc}")
            continue
        if data is None:
            continue
        settings.files.append(path)
        _merge(settings, data, path)
    return settings


def _merge(settings: Settings, data: dict[str, Any], path: Path) -> None:
    warn = settings.warnings.append
    permissions = data.get("permissions")
    if permissions is not None and not isinstance(permissions, dict):
        warn(f"{path}: 'permissions' must be an object; ignored")
        permissions = None
    for kind in _RULE_KINDS:
        entries = (permissions or {}).get(kind)
        if entries is None:
            continue
        if not isinstance(entries, list):
            warn(f"{path}: 'permissions.{kind}' must be a list of rules; ignored")
            continue
        target: list[Rule] = getattr(settings.rules, kind)
        for entry in entries:
            try:
                rule = Rule.parse(entry)
            except ValueError as exc:
                warn(f"{path}: permissions.{kind}: {exc}; ignored")
                continue
            if rule not in target:
                target.append(rule)
    mode = (permissions or {}).get("defaultMode")
    if mode is not None:
        if mode in PERMISSION_MODES:
            settings.default_mode = mode
        else:
            warn(f"{path}: unknown permissions.defaultMode {mode!r}; ignored")
    disable = (permissions or {}).get("disableBypassPermissionsMode")
    if disable == "disable":
        settings.bypass_disabled_by = settings.bypass_disabled_by or path
    elif disable is not None:
        warn(f'{path}: permissions.disableBypassPermissionsMode must be "disable"; ignored')
    sandbox = data.get("sandbox")
    if isinstance(sandbox, dict):
        settings.sandbox.update(sandbox)
    elif sandbox is not None:
        warn(f"{path}: 'sandbox' must be an object; ignored")
    teammate_mode = data.get("teammateMode")
    if teammate_mode is not None:
        if teammate_mode == "auto":  # Claude Code: tmux inside tmux, else in-process
            teammate_mode = "tmux" if os.environ.get("TMUX") else "in-process"
        if teammate_mode in TEAMMATE_MODES:
            settings.teammate_mode = teammate_mode
        else:
            warn(f"{path}: unknown teammateMode {teammate_mode!r}; ignored")
    hooks = data.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        warn(f"{path}: 'hooks' must be an object; ignored")
        return
    for event in HOOK_EVENTS:
        if event in hooks:
            settings.hooks.setdefault(event, []).extend(
                _parse_event_hooks(event, hooks[event], path, warn)
            )


def _parse_event_hooks(event: str, groups: Any, path: Path, warn: Any) -> list[HookCommand]:
    """``[{"matcher": "...", "hooks": [{"type": "command", "command": ..., "timeout": s}]}]``."""
    where = f"{path}: hooks.{event}"
    if not isinstance(groups, list):
        warn(f"{where} must be a list of matcher groups; ignored")
        return []
    found: list[HookCommand] = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            warn(f"{where}: each entry needs a 'hooks' list; one ignored")
            continue
        matcher = group.get("matcher", "")
        matcher = matcher if isinstance(matcher, str) else ""
        for hook in group["hooks"]:
            if not isinstance(hook, dict) or hook.get("type", "command") != "command":
                kind = hook.get("type") if isinstance(hook, dict) else type(hook).__name__
                warn(f"{where}: only 'command' hooks are supported, not {kind!r}; one ignored")
                continue
            command = hook.get("command")
            if not isinstance(command, str) or not command.strip():
                warn(f"{where}: a hook without a 'command'; ignored")
                continue
            timeout = hook.get("timeout", DEFAULT_HOOK_TIMEOUT)
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
                warn(f"{where}: bad timeout {timeout!r}; using {DEFAULT_HOOK_TIMEOUT:g}s")
                timeout = DEFAULT_HOOK_TIMEOUT
            found.append(HookCommand(event, command, float(timeout), matcher, path))
    return found


def add_allow_rule(path: Path, rule: str) -> bool:
    """Add ``rule`` to ``permissions.allow`` of the settings file at ``path`` (created if
    missing), keeping every other key and the order of everything else. Returns False if the
    rule was already there. The file is replaced atomically (its mode is kept); a file that is
    unreadable, not JSON, or whose ``permissions``/``allow`` has the wrong type is left
    untouched and SettingsError says why."""
    text = str(Rule.parse(rule))  # ValueError for a bad rule
    with _write_lock:
        data = read_settings_file(path)
        data = {} if data is None else data
        permissions = data.setdefault("permissions", {})
        if not isinstance(permissions, dict):
            raise SettingsError(f"{path}: 'permissions' is not an object; not changed")
        allow = permissions.setdefault("allow", [])
        if not isinstance(allow, list):
            raise SettingsError(f"{path}: 'permissions.allow' is not a list; not changed")
        if text in allow:
            return False
        allow.append(text)
        try:
            mode: int | None = stat.S_IMODE(os.lstat(path).st_mode)
        except FileNotFoundError:
            mode = None
        atomic_write_bytes(path, encode_text(dumps(data) + "\n"))
        if mode is not None:
            os.chmod(path, mode)
    return True

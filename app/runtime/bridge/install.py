"""``teamdeck claude setup``: teamdeck's hook commands in a Claude Code settings file, and out.

The file is ``$CLAUDE_CONFIG_DIR/settings.json`` (else ``~/.claude/settings.json``), or a
project's ``.claude/settings.local.json``. teamdeck's entries are merged with the hooks already
there (one ``{"matcher": "*", "hooks": [{"type": "command", "command": ..., "timeout": ...}]}``
group per event, replaced in place when setup runs again: running it twice changes nothing).

Before the first write the file's bytes (or the fact that there was no file) are kept in
teamdeck's own home (``<home>/claude-setup/<key>/original``), and every later write keeps a
timestamped backup there first. ``remove`` puts the original bytes back, byte for byte, when the
file is still exactly what setup wrote; when it changed since (Claude Code rewrites it to add an
"always allow" rule) only teamdeck's entries are taken out and the result says so.

Every hook gets an explicit ``timeout`` (Claude Code's default is 600 s): a request waits for the
person up to ``REQUEST_TIMEOUT``, an event that is only told takes a moment.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.runtime.bridge import hook_client

#: Seconds Claude Code lets a request's hook wait for the person (``wire.REQUEST_WAIT`` is less).
REQUEST_TIMEOUT = 300
TELL_TIMEOUT = 10
#: The events teamdeck's hook is registered for, and each one's timeout.
EVENTS: dict[str, int] = {
    event: REQUEST_TIMEOUT if event in ("PermissionRequest", "PreToolUse") else TELL_TIMEOUT
    for event in hook_client.EVENTS
}
STATE_DIR = "claude-setup"


class SetupError(ValueError):
    """The settings file cannot be changed safely (not JSON, not an object...)."""


def hook_program() -> list[str]:
    """How Claude Code runs teamdeck's hook: this Python, isolated and without ``site``
    (``-I -S``), running the stdlib-only client script (``hook_client``): the cheapest start."""
    return [sys.executable, "-I", "-S", str(Path(hook_client.__file__).resolve())]


def hook_command(event: str, program: list[str] | None = None) -> str:
    return shlex.join([*(program or hook_program()), event])


def is_teamdeck_command(command: object) -> bool:
    """A hook command teamdeck's setup wrote (whichever installation it named)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if "app.cli.hook" in words or any(Path(w).name == "hook_client.py" for w in words):
        return True
    return len(words) >= 3 and Path(words[0]).name == "teamdeck" and words[1] == "hook"


def settings_target(*, project: bool, cwd: Path | None = None, env: Any = None) -> Path:
    env = os.environ if env is None else env
    if project:
        return (cwd or Path.cwd()) / ".claude" / "settings.local.json"
    configured = str(env.get("CLAUDE_CONFIG_DIR", "")).strip()
    base = Path(configured).expanduser() if configured else Path.home() / ".claude"
    return base / "settings.json"


def dumps(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def _digest(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _parse(path: Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SetupError(f"{path}: not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise SetupError(f"{path}: expected a JSON object; nothing was changed")
    data = dict(data)
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SetupError(f'{path}: its "hooks" is not an object; nothing was changed')
    return data


def _write(path: Path, data: bytes) -> None:
    """Atomically, keeping the file's permissions (0600 for a new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def merged(data: dict[str, Any], program: list[str] | None = None) -> dict[str, Any]:
    """``data`` with teamdeck's entry for every event (in place of an earlier one)."""
    result: dict[str, Any] = json.loads(json.dumps(data))
    hooks: dict[str, Any] = result.setdefault("hooks", {})
    for event, timeout in EVENTS.items():
        entry = {"type": "command", "command": hook_command(event, program), "timeout": timeout}
        groups = hooks.get(event)
        if not isinstance(groups, list):
            hooks[event] = [{"matcher": "*", "hooks": [entry]}]
            continue
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list):
                for index, hook in enumerate(inner):
                    if isinstance(hook, dict) and is_teamdeck_command(hook.get("command")):
                        inner[index] = entry
                        break
                else:
                    continue
                break
        else:
            groups.append({"matcher": "*", "hooks": [entry]})
    return result


def without_teamdeck(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every teamdeck hook taken out (and what that leaves empty)."""
    result: dict[str, Any] = json.loads(json.dumps(data))
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list):
                rest = [
                    h
                    for h in inner
                    if not (isinstance(h, dict) and is_teamdeck_command(h.get("command")))
                ]
                if not rest and inner:
                    continue
                group["hooks"] = rest
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del result["hooks"]
    return result


def _missing_programs(data: dict[str, Any]) -> list[str]:
    """Files teamdeck's hook commands run that are not there (teamdeck moved or reinstalled)."""
    missing: set[str] = set()
    hooks = data.get("hooks")
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else ():
                command = hook.get("command") if isinstance(hook, dict) else None
                if not is_teamdeck_command(command):
                    continue
                for word in shlex.split(str(command)):
                    if word.startswith("/") and not Path(word).exists():
                        missing.add(word)
    return sorted(missing)


def installed_events(data: dict[str, Any]) -> list[str]:
    hooks = data.get("hooks")
    found = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks") if isinstance(group, dict) else None
            if any(
                isinstance(h, dict) and is_teamdeck_command(h.get("command")) for h in inner or ()
            ):
                found.append(event)
                break
    return found


@dataclass
class SetupState:
    """What teamdeck keeps of one settings file it changed (in its own home)."""

    folder: Path
    target: Path
    existed: bool = True
    installed: str | None = None  # sha256 of the bytes setup last wrote
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def original(self) -> Path:
        return self.folder / "original"

    @classmethod
    def of(cls, home: Path, target: Path) -> SetupState:
        target = Path(os.path.abspath(target))
        key = hashlib.sha256(str(target).encode()).hexdigest()[:16]
        state = cls(home / STATE_DIR / key, target)
        with contextlib.suppress(FileNotFoundError, ValueError):
            saved = json.loads((state.folder / "state.json").read_text())
            state.existed = bool(saved.get("existed", True))
            state.installed = saved.get("installed")
        return state

    @property
    def recorded(self) -> bool:
        return (self.folder / "state.json").is_file()

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {"target": str(self.target), "existed": self.existed, "installed": self.installed}
        _write(self.folder / "state.json", (json.dumps(record, indent=2) + "\n").encode())

    def backup(self, raw: bytes | None) -> None:
        """Keep ``raw`` (the file before a write): as the original the first time, then as a
        timestamped backup."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.recorded:
            self.existed = raw is not None
            if raw is not None:
                _write(self.original, raw)
        elif raw is not None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            _write(self.folder / f"backup-{stamp}-{os.getpid()}", raw)

    def forget(self) -> None:
        for name in ("state.json", "original"):
            with contextlib.suppress(FileNotFoundError):
                (self.folder / name).unlink()


def install(target: Path, home: Path, program: list[str] | None = None) -> str:
    """Install teamdeck's hooks into ``target``; one line saying what happened."""
    raw = _read(target)
    data = _parse(target, raw)
    new = dumps(merged(data, program))
    state = SetupState.of(home, target)
    if new == raw:
        if not state.recorded:  # installed by hand, or teamdeck's record was lost
            state.existed, state.installed = True, _digest(raw)
            state.save()
        return f"teamdeck's hooks are already installed in {target}"
    state.backup(raw)
    _write(target, new)
    state.installed = _digest(new)
    state.save()
    return f"installed teamdeck's hooks ({len(EVENTS)} events) in {target}"


def remove(target: Path, home: Path) -> str:
    """Take teamdeck's hooks out of ``target``; one line saying how."""
    raw = _read(target)
    state = SetupState.of(home, target)
    if state.recorded and state.installed is not None and _digest(raw) == state.installed:
        if not state.existed:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
            state.forget()
            return f"removed {target} (there was none before setup)"
        if state.original.is_file():
            _write(target, state.original.read_bytes())
            state.forget()
            return f"restored {target} byte for byte"
    data = _parse(target, raw)
    if not installed_events(data):
        state.forget()
        return f"teamdeck's hooks are not installed in {target}"
    state.backup(raw)
    _write(target, dumps(without_teamdeck(data)))
    state.forget()
    return (
        f'{target} changed since setup (Claude Code rewrites it, e.g. for an "always allow" '
        "rule): removed only teamdeck's hook entries, kept everything else"
    )


def status(target: Path, home: Path) -> list[str]:
    """Lines saying what is installed in ``target``."""
    raw = _read(target)
    try:
        events = installed_events(_parse(target, raw))
    except SetupError as exc:
        return [str(exc)]
    state = SetupState.of(home, target)
    if not events:
        return [f"teamdeck's hooks are not installed in {target}"]
    lines = [f"teamdeck's hooks are installed in {target}: {', '.join(events)}"]
    missing = [e for e in EVENTS if e not in events]
    if missing:
        lines.append(f"missing: {', '.join(missing)} (run teamdeck claude setup again)")
    gone = _missing_programs(_parse(target, raw))
    if gone:
        lines.append(
            f"the hook command's program is missing ({', '.join(gone)}): Claude Code reports a "
            "hook error on every call; run teamdeck claude setup again"
        )
    if state.recorded and state.installed != _digest(raw):
        lines.append("the file changed since setup: --remove will take out only teamdeck's entries")
    elif state.recorded:
        lines.append("--remove restores the file as it was before setup, byte for byte")
    return lines

"""Rules teamdeck keeps for Claude Code where Claude Code takes none: "always allow" for a pane
teammate.

A pane teammate's calls are held at its ``PreToolUse`` hook, whose answer cannot add a rule to
Claude Code's settings (only a ``PermissionRequest`` answer can). So "always allow" there keeps
the rule in teamdeck's own home, ``<teamdeck home>/bridge/rules.json`` (0600, in the folder the
sandbox hides), and the bridge answers a later call the rule covers by itself, with a feed line
(``Bridge.report``). ``teamdeck claude rules`` lists them and ``--remove RULE`` takes one out.

The file: ``{"rules": [{"rule": "Bash(touch:*)", "added": <epoch s>, "origin": "..."}]}``;
written atomically under a lock, unknown fields kept. A file that cannot be read is an error
(:class:`KeptRulesError`), never "no rules": the bridge then answers nothing by itself (the
person is asked), and the CLI says why.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

RULES_NAME = "rules.json"


class KeptRulesError(ValueError):
    """The rules file cannot be read (its path and why, in one line)."""


def rules_path(folder: Path) -> Path:
    return folder / RULES_NAME


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {"rules": []}
    except OSError as exc:
        raise KeptRulesError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise KeptRulesError(f"{path}: not valid JSON ({exc}); left as it is") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules", []), list):
        raise KeptRulesError(f'{path}: expected {{"rules": [...]}}; left as it is')
    data.setdefault("rules", [])
    return data


def load(path: Path) -> list[dict[str, Any]]:
    """The kept rules (each ``{"rule", "added", "origin", ...}``); KeptRulesError if unreadable."""
    return [
        r for r in _read(path)["rules"] if isinstance(r, dict) and isinstance(r.get("rule"), str)
    ]


def rules(path: Path) -> list[str]:
    return [r["rule"] for r in load(path)]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def add(path: Path, rule: str, origin: str) -> bool:
    """Keep ``rule`` (False: it was kept already)."""
    with _locked(path):
        data = _read(path)
        if any(isinstance(r, dict) and r.get("rule") == rule for r in data["rules"]):
            return False
        data["rules"].append({"rule": rule, "added": time.time(), "origin": origin})
        _write(path, data)
    return True


def remove(path: Path, rule: str) -> bool:
    """Take ``rule`` out (False: it was not kept)."""
    with _locked(path):
        data = _read(path)
        kept = [r for r in data["rules"] if not (isinstance(r, dict) and r.get("rule") == rule)]
        if len(kept) == len(data["rules"]):
            return False
        data["rules"] = kept
        _write(path, data)
    return True

"""Authority: an answer acts only if the desk signed it (the one module that signs and checks).

Every answer has an *origin*: ``person`` (the dashboard, ``teamdeck approve``), ``lead`` (the
lead's runtime, answering for its model under ``--lead-approves``), ``rules`` (the rules
engine). The runtime also signs the frames its agents' code writes (requests, idle and shutdown
answers: ``runtime``). Message text a model writes (SendMessage ``message``/``broadcast``) is
never signed, so a frame-shaped text is only text: no receiver acts on it.

A signature is HMAC-SHA256 with the team's key over the team, the recipient and the frame's
JSON (keys sorted, origin included); it travels in the frame as one extra field
(``teamdeckAuthority: {"origin", "sig"}``), which Claude Code's readers ignore. A receiver acts
on an answer only if :func:`origin_of` finds a valid signature for it, addressed to it, in its
team; and only for a request it raised and still waits for (the receivers check that).

The key: 32 random bytes per team, made by the lead's runtime (or the first desk that needs
it) at ``<home>/keys/<team>.key``, mode 0600 in a 0700 folder that the sandbox hides from
commands. It reaches a teammate process only over the private descriptor that carries the API
key (``runners.handoff``, entry :data:`HANDOFF_ENTRY`), never in an environment, an argument, a
log, or a file under the team's folder. A team without a key file (a Claude Code home, a team
made before keys existed) is *unsigned*: :func:`origin_of` then answers :data:`UNSIGNED` for
every frame, and receivers take only what the seeds' protocol gives (see the README, "Signed
answers").
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from app.core.errors import TeamdeckError
from app.core.paths import path_component

log = logging.getLogger(__name__)

PERSON: Final = "person"
LEAD: Final = "lead"
RULES: Final = "rules"
RUNTIME: Final = "runtime"
#: Not a signature: what :func:`origin_of` says for every frame of a team without a key.
UNSIGNED: Final = "unsigned"
ORIGINS: Final = frozenset({PERSON, LEAD, RULES, RUNTIME})
#: Origins whose answer decides a request (a ``runtime`` signature decides nothing).
DECIDERS: Final = frozenset({PERSON, LEAD, RULES})

FIELD: Final = "teamdeckAuthority"
#: The entry of the handoff payload (``runners.handoff``) that carries the team key.
HANDOFF_ENTRY: Final = "teamdeckTeamKey"
KEYS_DIR: Final = "keys"
_DOMAIN = b"teamdeck-authority-v1\0"
_KEY_BYTES = 32


class KeyError_(TeamdeckError):  # noqa: N801 - ``KeyError`` is a builtin
    """The team's key file cannot be used (one line naming it)."""


@dataclass(frozen=True)
class TeamKey:
    """One team's signing key (held in memory; ``repr`` never shows it)."""

    team: str
    secret: bytes = field(repr=False)

    def hex(self) -> str:
        return self.secret.hex()

    @classmethod
    def from_hex(cls, team: str, text: str) -> TeamKey:
        try:
            secret = bytes.fromhex(text.strip())
        except ValueError:
            raise KeyError_(f"the key of team {team!r} is not hex") from None
        if len(secret) < 16:
            raise KeyError_(f"the key of team {team!r} is too short")
        return cls(team, secret)

    def _mac(self, frame: dict[str, Any], to: str, origin: str) -> str:
        body = json.dumps(
            {"team": self.team, "to": to, "origin": origin, "frame": frame},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hmac.new(self.secret, _DOMAIN + body.encode(), hashlib.sha256).hexdigest()

    def sign(self, frame: dict[str, Any], *, to: str, origin: str) -> dict[str, Any]:
        """``frame`` (a frame's JSON object) with its signature for recipient ``to``."""
        if origin not in ORIGINS:
            raise ValueError(f"unknown origin {origin!r}")
        data = {k: v for k, v in frame.items() if k != FIELD}
        return {**data, FIELD: {"origin": origin, "sig": self._mac(data, to, origin)}}

    def sign_text(self, text: str, *, to: str, origin: str) -> str:
        """A frame's compact JSON text, signed (``text`` must be a JSON object)."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("only a JSON object can be signed")
        return json.dumps(self.sign(data, to=to, origin=origin), separators=(",", ":"),
                          ensure_ascii=False)  # fmt: skip

    def check(self, text: str, *, to: str) -> str | None:
        """The origin of ``text`` if it is a frame this team's key signed for ``to``, else
        ``None`` (unsigned, tampered, for someone else, or not JSON). Never raises."""
        if FIELD not in text:
            return None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        stamp = data.pop(FIELD, None)
        if not isinstance(stamp, dict):
            return None
        origin, sig = stamp.get("origin"), stamp.get("sig")
        if not isinstance(origin, str) or origin not in ORIGINS or not isinstance(sig, str):
            return None
        try:
            expected = self._mac(data, to, origin)
        except (TypeError, ValueError):
            return None
        return origin if hmac.compare_digest(expected, sig) else None


def origin_of(key: TeamKey | None, text: str | None, *, to: str) -> str | None:
    """Who answered in ``text`` for ``to``: an origin, ``None`` when it must be taken as plain
    text, or :data:`UNSIGNED` in a team without a key (see the module docstring)."""
    if not isinstance(text, str):
        return None
    if key is None:
        return UNSIGNED
    return key.check(text, to=to)


def sign_text(key: TeamKey | None, text: str, *, to: str, origin: str) -> str:
    """``text`` signed with ``key``; unchanged in a team without a key."""
    return text if key is None else key.sign_text(text, to=to, origin=origin)


# ----------------------------------------------------------------------------- the key file


def key_path(root: Path, team: str) -> Path:
    """``<home>/keys/<team>.key``."""
    return root / KEYS_DIR / f"{path_component(team, 'team name')}.key"


def load_key(root: Path, team: str) -> TeamKey | None:
    """The team's key, ``None`` if it has none; KeyError_ (one line) if it cannot be read. A
    file others can read is made private first (0600)."""
    path = key_path(root, team)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise KeyError_(f"cannot read the key of team {team!r} ({path}): {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if mode & 0o077:
            log.warning("%s was readable by others: made private (0600)", path)
            os.fchmod(fd, 0o600)
        data = os.read(fd, 4096)
    except OSError as exc:
        raise KeyError_(f"cannot read the key of team {team!r} ({path}): {exc.strerror}") from None
    finally:
        os.close(fd)
    return TeamKey.from_hex(team, data.decode("ascii", "replace"))


def ensure_key(root: Path, team: str) -> TeamKey:
    """The team's key, made now (0600, never overwritten: a racing maker's key wins) if it
    has none."""
    existing = load_key(root, team)
    if existing is not None:
        return existing
    path = key_path(root, team)
    folder = path.parent
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
        key = TeamKey(team, secrets.token_bytes(_KEY_BYTES))
        tmp = folder / f".{path.name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, key.hex().encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # never replaces a key another process made meanwhile
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    except OSError as exc:
        raise KeyError_(f"cannot make the key of team {team!r} ({path}): {exc.strerror}") from None
    made = load_key(root, team)
    assert made is not None
    return made

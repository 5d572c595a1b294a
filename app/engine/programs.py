"""Finding and running PostgreSQL's programs for ``app.engine.server``: which installation,
as which user (PostgreSQL refuses root) and whether a postmaster still runs (the TLS
certificates are ``app.engine.certificates``')."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
from pathlib import Path

from app.engine.errors import EngineError

INSTALL_HINT = "install PostgreSQL 15 or later (Debian/Ubuntu: apt-get install postgresql)"


def find_bin() -> Path | None:
    """The newest PostgreSQL (>= 15) programs' folder: ``$TEAMDECK_PG_BIN``, else Debian's
    ``/usr/lib/postgresql/N/bin``, else ``initdb`` on the PATH."""
    env = os.environ.get("TEAMDECK_PG_BIN")
    if env:
        return Path(env) if (Path(env) / "initdb").is_file() else None
    versions = []
    for path in Path("/usr/lib/postgresql").glob("*/bin/initdb"):
        with contextlib.suppress(ValueError):
            versions.append((int(path.parent.parent.name), path.parent))
    if versions:
        version, folder = max(versions)
        return folder if version >= 15 else None
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def run_as() -> tuple[int, int] | None:
    """``(uid, gid)`` to run PostgreSQL as, ``None`` for this process's own user."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        raise EngineError(
            "PostgreSQL does not run as root and there is no postgres user: run teamdeck "
            f"server as a normal user, or {INSTALL_HINT}"
        ) from None
    return entry.pw_uid, entry.pw_gid


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"

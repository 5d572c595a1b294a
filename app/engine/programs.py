"""Finding and running PostgreSQL's programs for ``app.engine.server``: which installation,
as which user (PostgreSQL refuses root), whether a postmaster still runs, and the TLS
certificate a server that listens off loopback presents (the joiner pins it)."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import pwd
import shutil
import socket
import subprocess
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


WILDCARDS = ("*", "0.0.0.0", "::")


def certificate_names(addresses: list[str]) -> list[str]:
    """What the server's certificate names (its subjectAltName): every address it listens on
    (for a wildcard, this machine's own addresses), this machine's host name and
    ``localhost``, so a joiner may check the host name too (``sslmode=verify-full``)."""
    hosts: list[str] = []
    for address in addresses:
        if address in WILDCARDS:
            with contextlib.suppress(OSError):
                hosts += [str(i[4][0]) for i in socket.getaddrinfo(socket.gethostname(), None)]
        else:
            hosts.append(address)
    hosts += [socket.gethostname(), "localhost"]
    names: list[str] = []
    for host in hosts:
        try:
            name = f"IP:{ipaddress.ip_address(host.split('%', 1)[0])}"
        except ValueError:
            name = f"DNS:{host}"
        if name not in names:
            names.append(name)
    return names


def make_certificate(data: Path, addresses: list[str]) -> tuple[Path, Path]:
    """A self-signed certificate for this machine in ``data`` naming ``addresses``: (key,
    certificate)."""
    key, crt = data / "server.key", data / "server.crt"
    keyed = ["-newkey", "rsa:2048", "-keyout", str(key)]
    done = subprocess.run(
        ["openssl", "req", "-new", "-x509", "-days", "3650", "-nodes", *keyed,
         "-subj", f"/CN={socket.gethostname()}",
         "-addext", "subjectAltName=" + ",".join(certificate_names(addresses)),
         "-out", str(crt)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise EngineError("could not make a TLS certificate (is openssl installed?)")
    key.chmod(0o600)
    return key, crt


def names(crt: Path, host: str) -> bool:
    """Whether the certificate ``crt`` names ``host`` (an address or a host name)."""
    try:
        ipaddress.ip_address(host)
        check = "-checkip"
    except ValueError:
        check = "-checkhost"
    try:
        done = subprocess.run(
            ["openssl", "x509", "-noout", "-in", str(crt), check, host],
            capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and "does match" in done.stdout

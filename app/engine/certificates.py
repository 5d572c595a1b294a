"""The TLS certificates of the home's own server (``app.engine.server``), which a joiner pins.

The server has a certificate authority of its own (``data/ca.crt``, its key ``data/ca.key``)
and presents a certificate it signed (``data/server.crt``) that names every address the
server listens on, the machine's host name and ``localhost``, so a joiner checks the host
name too (``sslmode=verify-full``). An invitation carries the authority's certificate: when
the server's certificate is made again (``server start`` finds an address it does not name),
the joined machines' pins still check it. An earlier teamdeck made one self-signed
certificate (itself a CA) and invitations carried that: it becomes the authority, so those
pins hold too.
"""

from __future__ import annotations

import contextlib
import ipaddress
import secrets
import socket
import subprocess
from pathlib import Path

from app.engine.errors import EngineError

WILDCARDS = ("*", "0.0.0.0", "::")
KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1")
"""New keys: P-256 (made at once, where an RSA key takes a noticeable while)."""


def certificate_names(addresses: list[str]) -> list[str]:
    """What the server's certificate names (its subjectAltName): every address it listens on
    (for a wildcard, this machine's own addresses), this machine's host name and
    ``localhost``."""
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


def authority(data: Path) -> Path:
    """The certificate an invitation carries for the server in ``data`` (its authority's;
    an earlier teamdeck's server, until its next start: its self-signed one)."""
    ca = data / "ca.crt"
    return ca if ca.is_file() else data / "server.crt"


def _openssl(*argv: str) -> None:
    done = subprocess.run(["openssl", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise EngineError("could not make a TLS certificate (is openssl installed?)")


def make_certificate(data: Path, addresses: list[str]) -> tuple[Path, Path]:
    """The server's key and certificate in ``data``, naming ``addresses``, signed by the
    server's authority (made the first time; see the module docstring)."""
    ca_key, ca_crt = data / "ca.key", data / "ca.crt"
    key, crt = data / "server.key", data / "server.crt"
    if not ca_crt.is_file():
        if key.is_file() and crt.is_file():  # an earlier teamdeck's: the one joiners pinned
            key.rename(ca_key)
            crt.rename(ca_crt)
        else:
            _openssl("req", "-new", "-x509", "-days", "3650", "-nodes", *KEY,
                     "-subj", f"/CN=teamdeck CA on {socket.gethostname()}",
                     "-keyout", str(ca_key), "-out", str(ca_crt))  # fmt: skip
        ca_key.chmod(0o600)
    request, extensions = data / "server.csr", data / "server.ext"
    extensions.write_text(
        "basicConstraints = CA:FALSE\nsubjectAltName = "
        + ",".join(certificate_names(addresses))
        + "\n",
        encoding="utf-8",
    )
    try:
        _openssl("req", "-new", "-nodes", *KEY, "-subj", "/CN=teamdeck server",
                 "-keyout", str(key), "-out", str(request))  # fmt: skip
        _openssl("x509", "-req", "-in", str(request), "-CA", str(ca_crt), "-CAkey", str(ca_key),
                 "-set_serial", str(secrets.randbits(63)), "-days", "3650",
                 "-extfile", str(extensions), "-out", str(crt))  # fmt: skip
    finally:
        request.unlink(missing_ok=True)
        extensions.unlink(missing_ok=True)
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

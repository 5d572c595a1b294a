"""Inviting an agent's machine and joining from it.

``invite`` (the administrator) creates the agent's role with a one-time password and returns
a join URL: a ``postgresql://`` URL with that password, plus, when a certificate to check the
server by is known (always when the server listens off loopback), TLS: the certificate
(base64, in the URL's ``td_cert`` parameter) and ``sslmode=verify-full`` when the server's
certificate names the host the URL reaches (the home's own server's names the addresses it
listens on), else ``verify-ca``. The certificate is the home's own server's authority
(``app.engine.certificates``), or a managed server's CA (``invite --ca FILE``, or the
administrator's URL's ``sslrootcert``), so the joiner checks it is talking to this server.
``join`` (on the other machine) connects with it, at once replaces the one-time password
with a long secret of its own (``ALTER ROLE CURRENT_USER``: a second use of the URL fails),
keeps the new URL in a 0600 file under the home, and registers the machine: its hostname,
folder, git remote and HEAD (the member row's ``machine`` and a ``joined`` event).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from app.core.files import atomic_write_bytes
from app.engine import roles
from app.engine.certificates import names
from app.engine.errors import EngineError
from app.engine.link import Link, one_line, safe_url

CERT_PARAM = "td_cert"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def invite(
    admin: Link,
    team: str,
    member: str,
    *,
    machine: str | None = None,
    cert: Path | None = None,
    host: str | None = None,
    presented: Path | None = None,
) -> str:
    """A one-time join URL for ``member`` of ``team`` (created in the engine if need be),
    reaching the server at ``host`` (default: the administrator's URL's); ``cert`` is what
    the joiner checks the server by, ``presented`` the certificate the server presents, when
    known (the home's own server's: whether it names ``host``)."""
    roles.create_team(admin, team)
    creds = roles.agent(admin, team, member, machine=machine)
    url = creds.url(admin.url)
    if host:
        parts = urlsplit(url)
        url = urlunsplit(
            parts._replace(netloc=f"{parts.netloc.rsplit('@', 1)[0]}@{host}:{parts.port}")
        )
    host = urlsplit(url).hostname or ""
    known = cert is not None and cert.is_file()
    if host not in LOOPBACK and not known:
        raise EngineError(
            f"the server at {host} is off this machine and no certificate is known to "
            "check it by: pass its CA's with --ca FILE (a managed PostgreSQL's provider "
            "publishes it), or set a server up with `teamdeck server init --listen ADDRESS`"
        )
    if cert is not None and known:
        pem = base64.urlsafe_b64encode(cert.read_bytes()).decode()
        # The host name checked too when the certificate names it (the home's own server's
        # names the addresses it listens on) or the administrator's own URL asks for it (a
        # managed server's certificate names its host; the CA given does not).
        asked = psycopg.conninfo.conninfo_to_dict(admin.url).get("sslmode")
        full = asked == "verify-full" or names(presented or cert, host)
        url = _with_params(
            url, {"sslmode": "verify-full" if full else "verify-ca", CERT_PARAM: pem}
        )
    return url


def _with_params(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


@dataclass
class Joined:
    url: str
    team: str
    member: str
    path: Path


def join(url: str, folder: Path, engine_dir: Path) -> Joined:
    """Redeem a join URL; the long-lived URL (kept in ``engine_dir``, mode 0600)."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise EngineError("a join URL starts with postgresql:// (as `teamdeck invite` prints)")
    query = dict(parse_qsl(parts.query))
    engine_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    engine_dir.chmod(0o700)  # the secrets below are kept here
    pem = query.pop(CERT_PARAM, None)
    if pem is not None:
        cert = engine_dir / "server.crt"
        atomic_write_bytes(cert, base64.urlsafe_b64decode(pem.encode()))
        query["sslrootcert"] = str(cert)
    elif (parts.hostname or "") not in LOOPBACK:
        raise EngineError(
            "this join URL leaves the machine without TLS: ask for a new invitation from a "
            "server set up with --listen (it carries the certificate)"
        )
    url = urlunsplit(parts._replace(query=urlencode(query)))
    secret = secrets.token_urlsafe(48)
    try:
        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            me = conn.execute(
                "SELECT team, member FROM teamdeck.identities WHERE role = current_user"
            ).fetchone()
            if me is None:
                raise EngineError("this join URL's role is no agent of any team")
            conn.execute(sql.SQL("ALTER ROLE CURRENT_USER PASSWORD {}").format(sql.Literal(secret)))
            team, member = str(me[0]), str(me[1])
            register(conn, team, member, folder)
    except psycopg.OperationalError as exc:
        raise EngineError(f"cannot join through {safe_url(url)}: {_why(exc)}") from None
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["password"] = secret
    from app.engine.link import make_url

    kept = make_url(info)
    path = engine_dir / f"{team}.{member}.url"
    atomic_write_bytes(path, (kept + "\n").encode())
    path.chmod(0o600)
    return Joined(kept, team, member, path)


def _why(exc: psycopg.OperationalError) -> str:
    """A failed join's reason in one line: a server that is not the one the invitation
    names (its certificate) is said as such, not as libpq's SSL error alone."""
    said = one_line(exc)
    if "certificate verify failed" in said:
        return (
            "the server's certificate is not signed by the one the invitation carries: this "
            "is not the server that invited you (or the URL was altered); ask for a new one"
        )
    if "does not match host name" in said:
        return f"the server's certificate does not name the host it was reached at ({said})"
    return f"{said} (a join URL works once)"


def machine_facts(folder: Path) -> dict[str, str | None]:
    def git(*argv: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(folder), *argv], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() or None if done.returncode == 0 else None

    return {
        "hostname": socket.gethostname(),
        "folder": str(folder),
        "git_remote": git("remote", "get-url", "origin"),
        "git_head": git("rev-parse", "HEAD"),
    }


def register(conn: psycopg.Connection, team: str, member: str, folder: Path) -> None:
    facts = machine_facts(folder)
    conn.execute(
        "UPDATE teamdeck.members SET machine = coalesce(machine, %s), pid = %s, heartbeat = now(),"
        " state = 'joined' WHERE team = %s AND name = %s",
        (facts["hostname"], os.getpid(), team, member),
    )
    conn.execute(
        "INSERT INTO teamdeck.events (team, actor, kind, body) VALUES (%s, %s, 'joined', %s)",
        (team, member, Jsonb(facts)),
    )


def describe(joined: Joined) -> str:
    return json.dumps({"team": joined.team, "member": joined.member, "url_file": str(joined.path)})

"""``teamdeck server init|start|stop|status``, ``teamdeck invite`` and ``teamdeck join``:
a team across machines on the PostgreSQL engine (``app.engine``).

The local server lives in ``{home}/engine/server``; ``server init`` makes the home use it
(``{home}/engine/settings.json``, mode 0600, holds the administrator's URL: the lead's and
the desk's machine). ``join`` writes the joined agent's own URL there instead.

Registered in ``app.cli.main`` by ``register``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.engine.errors import EngineError

if TYPE_CHECKING:
    from app.core.home import Home
    from app.engine.server import LocalServer

Handler = Callable[["Home", argparse.Namespace], int]


def local_server(home: Home, args: argparse.Namespace | None = None) -> LocalServer:
    from app.engine.server import LocalServer

    listen = getattr(args, "listen", None) or "127.0.0.1"
    port = getattr(args, "port", None) or 0
    return LocalServer(home.root / "engine" / "server", port=port, listen=listen)


def write_settings(home: Home, url: str) -> Path:
    from app.core.files import atomic_write_bytes
    from app.engine.choose import settings_path

    path = settings_path(home)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write_bytes(path, (json.dumps({"url": url}, indent=2) + "\n").encode())
    path.chmod(0o600)
    return path


def cmd_server_init(home: Home, args: argparse.Namespace) -> int:
    server = local_server(home, args)
    url = server.init()
    path = write_settings(home, url)
    print(f"set up a PostgreSQL server in {server.folder} ({server.status()})")
    print(f"this home now uses it: {path}")
    return 0


def cmd_server_start(home: Home, args: argparse.Namespace) -> int:
    server = local_server(home)
    pid = server.start()
    print(f"running, pid {pid}")
    return 0


def cmd_server_stop(home: Home, args: argparse.Namespace) -> int:
    server = local_server(home)
    print("stopped" if server.stop() else "was not running")
    return 0


def cmd_server_status(home: Home, args: argparse.Namespace) -> int:
    print(local_server(home).status())
    return 0


def _admin_url(home: Home, args: argparse.Namespace) -> str:
    from app.engine.choose import engine_url

    url = engine_url(home, getattr(args, "engine", None))
    if url is None:
        raise EngineError(
            "no engine: run `teamdeck server init` first, or pass --engine postgresql://..."
        )
    return url


def cmd_invite(home: Home, args: argparse.Namespace) -> int:
    from app.engine.certificates import authority
    from app.engine.joining import invite
    from app.engine.link import Link

    server = local_server(home)
    admin_url = _admin_url(home, args)
    own = authority(server.data)
    cert = _certificate(own, admin_url, args.ca)
    presented = server.data / "server.crt" if cert == own else None
    host = args.host
    if host is None and (server.data / "postgresql.conf").is_file():
        host = server.listen_address()  # where the home's own server listens for others
    with Link(admin_url) as admin:
        url = invite(admin, args.team, args.name, machine=args.machine, cert=cert, host=host,
                     presented=presented)  # fmt: skip
        desk = desk_path(home, args.team)
        if not desk.exists():  # the lead's run uses the team's desk, never the administrator
            from app.engine import roles

            write_secret(desk, roles.desk(admin, args.team).url(admin.url))
    print(url)
    return 0


def _certificate(own: Path, admin_url: str, ca: str | None) -> Path | None:
    """What the joiner checks the server by: ``--ca``, else the administrator's URL's
    ``sslrootcert`` (a managed server's CA), else the home's own server's certificate."""
    import psycopg

    if ca is not None:
        if not Path(ca).is_file():
            raise EngineError(f"no CA certificate at {ca}")
        return Path(ca)
    given = psycopg.conninfo.conninfo_to_dict(admin_url).get("sslrootcert")
    if given and Path(str(given)).is_file():
        return Path(str(given))
    return own if own.is_file() else None


def desk_path(home: Home, team: str) -> Path:
    return home.root / "engine" / f"desk.{team}.url"


def write_secret(path: Path, text: str) -> None:
    from app.core.files import atomic_write_bytes

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write_bytes(path, (text + "\n").encode())
    path.chmod(0o600)


def across_for(home: Home, engine: str | None, *, spread: bool) -> Any:
    """``run --engine``: the lead's side of the team its desk role stands for. Given the
    administrator's URL (``server init`` writes it), the desk ``invite`` made is used instead:
    the lead and the dashboard never act as the administrator."""
    from app.engine.choose import engine_url
    from app.engine.relay import identity
    from app.runtime.team.across import Across

    url = engine_url(home, engine)
    if url is None:
        raise EngineError("no engine: run `teamdeck server init` first, or pass --engine URL")
    who = identity(url)
    if who is None:
        desks = sorted((home.root / "engine").glob("desk.*.url"))
        if not desks:
            raise EngineError("no team in the engine yet: `teamdeck invite TEAM --name NAME` first")
        if len(desks) > 1:
            raise EngineError(
                "the engine has several teams: pass --engine with the desk URL of the one to "
                f"lead (in {home.root / 'engine'}/desk.TEAM.url)"
            )
        url = desks[0].read_text(encoding="utf-8").strip()
        who = identity(url)
    if who is None or not who.desk:
        raise EngineError(
            "this engine URL is an agent's (a joined machine runs `teamdeck join`); the lead's "
            "run needs its team's desk"
        )
    return Across(url=url, team=who.team, spread=spread)


def cmd_join(home: Home, args: argparse.Namespace) -> int:
    """Redeem the invitation, then run the teammate the lead places here until it leaves the
    team (``--register-only``: redeem and return). Without a URL: run again with the one kept
    by an earlier join (after a restart)."""
    import asyncio

    from app.engine.joining import join

    folder = Path(args.folder or os.getcwd()).absolute()
    if args.url:
        joined = join(args.url, folder, home.root / "engine")
        write_settings(home, joined.url)
        print(f"joined team {joined.team} as {joined.member}; its key is in {joined.path}")
        url = joined.url
        if args.register_only:
            return 0
    else:
        kept = sorted((home.root / "engine").glob("*.*.url"))
        kept = [p for p in kept if not p.name.startswith("desk.")]
        if len(kept) != 1:
            raise EngineError("give the join URL `teamdeck invite` printed")
        url = kept[0].read_text(encoding="utf-8").strip()
    from app.runtime.model.credentials import hold_credentials
    from app.runtime.sandbox import SandboxConfig
    from app.runtime.team.joined import Joined

    hold_credentials()
    offline = args.offline or not (
        os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
    )
    sandbox = SandboxConfig(enabled=not args.no_sandbox)
    host = Joined(home, url, folder=folder, offline=offline, sandbox=sandbox)
    print(f"waiting for the lead to place {host.member} here (team {host.team})", flush=True)
    try:
        code = asyncio.run(host.run())
    except KeyboardInterrupt:
        return 130
    for line in host.said:
        print(line)
    return code


def cmd_sync(home: Home, args: argparse.Namespace) -> int:
    """Keep this home's files for ``--team`` in step with the engine (``app.engine.sync``).
    A joined home projects its joined members; the home whose engine URL is the
    administrator's (``server init``) projects the lead and the person, and reaps."""
    import asyncio

    from app.engine.link import Link
    from app.engine.sync import Sync

    joined = sorted((home.root / "engine").glob(f"{args.team}.*.url"))
    if joined:
        urls = {p.name[len(args.team) + 1 : -len(".url")]: p.read_text().strip() for p in joined}
        local, desk = set(urls), False
        url = next(iter(urls.values()))
    else:
        url = _admin_url(home, args)
        urls = {"team-lead": url, "user": url}
        local, desk = {"team-lead", "user"}, True
    links = {name: Link(u) for name, u in urls.items()}
    sync = Sync(home, args.team, url, local=local, links=links, desk=desk)
    try:
        if args.once:
            copied, sent = sync.one_pass()
            print(f"copied {copied} message(s) here, sent {sent} to the engine")
            return 0
        print(f"keeping team {args.team} in step on this machine ({', '.join(sorted(local))})")
        asyncio.run(sync.run())
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        sync.close()
        for link in links.values():
            link.close()


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``server``, ``invite`` and ``join`` to the ``teamdeck`` parser."""
    server = command(commands, "server", "a local PostgreSQL for a team across machines")
    actions = server.add_subparsers(dest="server_command", metavar="ACTION", required=True)
    sub = command(actions, "init", "set up and start a server under the home", cmd_server_init)
    sub.add_argument("--listen", metavar="ADDRESS", help="listen here (not 127.0.0.1: TLS)")
    sub.add_argument("--port", type=int, metavar="N", help="port (default: a free one)")
    command(actions, "start", "start the home's server", cmd_server_start)
    command(actions, "stop", "stop the home's server", cmd_server_stop)
    command(actions, "status", "whether the home's server runs", cmd_server_status)
    sub = command(commands, "invite", "make a one-time join URL for an agent", cmd_invite)
    sub.add_argument("team", metavar="TEAM")
    sub.add_argument("--name", required=True, metavar="NAME", help="the agent's name")
    sub.add_argument("--machine", metavar="M", help="the machine it will run on")
    sub.add_argument("--engine", metavar="URL", help="the engine (default: the home's)")
    sub.add_argument("--host", metavar="ADDRESS", help="the server's address for the joiner")
    sub.add_argument("--ca", metavar="FILE", help="a managed server's CA certificate to pin")
    sub = command(commands, "join", "join a team from this machine", cmd_join)
    sub.add_argument("url", metavar="URL", nargs="?", help="the URL `teamdeck invite` printed")
    sub.add_argument("--folder", metavar="PATH", help="the working folder (default: here)")
    sub.add_argument(
        "--register-only", action="store_true", help="redeem and register, run nothing"
    )
    sub.add_argument("--offline", action="store_true", help="run the teammate offline")
    sub.add_argument("--no-sandbox", action="store_true", help="run its commands unconfined")
    sub = command(commands, "sync", "keep this machine's files in step with the engine", cmd_sync)
    sub.add_argument("--team", required=True, metavar="TEAM")
    sub.add_argument("--once", action="store_true", help="one pass, then exit")
    sub.add_argument("--engine", metavar="URL", help="the engine (default: the home's)")
    return {cmd_server_status}

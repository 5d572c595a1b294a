"""``teamdeck serve [--host 127.0.0.1] [--port 8000] [COMMAND ...]``: the dashboard in a browser,
through textual-serve, behind a token.

textual-serve runs the served command (default ``teamdeck tui``; ``teamdeck serve demo`` serves
the demo) once per browser connection and relays its screen and keys over a websocket. It has
no authentication of its own, and whoever reaches the page steers the team, so every request
goes through a check first: the URL printed at start carries a random token (``?token=...``);
the page that presents it gets it back as a cookie (HttpOnly, SameSite=Strict) for its own
scripts, styles and websocket; anything else is refused (403), and so is a websocket opened
from another origin. It listens on 127.0.0.1 unless told otherwise: see the README for
reaching it from elsewhere (an SSH tunnel, or a private network).
"""

from __future__ import annotations

import argparse
import hmac
import logging
import os
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from aiohttp import web

    from app.core.home import Home

Handler = Callable[["Home", argparse.Namespace], int]
COOKIE = "teamdeck_token"
REFUSED = "teamdeck serve: open the URL printed when it started (with its token)\n"


def served_command(args: argparse.Namespace) -> str:
    """The command line textual-serve runs per connection: this teamdeck, on this home."""
    where = ["--claude"] if args.claude else ["--home", args.home] if args.home else []
    command = list(args.served) or ["tui"]
    return shlex.join([sys.executable, "-m", "app.cli.entry", *where, *command])


def token_guard(token: str) -> Any:
    """aiohttp middleware: the token (query or cookie), and a websocket from the page's own
    origin only; sets the cookie on the page that presented the token."""
    from aiohttp import web

    @web.middleware
    async def guard(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            return web.Response(status=403, text=REFUSED)
        origin = request.headers.get("Origin")
        if origin and urlsplit(origin).netloc != request.host:
            return web.Response(status=403, text="teamdeck serve: another site's request\n")
        response = await handler(request)
        if request.query.get("token") and not response.prepared:
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
        return response

    return guard


def build_server(command: str, host: str, port: int, token: str) -> Any:
    """The textual-serve server whose web app checks ``token`` before anything else."""
    from textual_serve.server import Server

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(token_guard(token))
            return app

        async def on_startup(self, app: web.Application) -> None:
            pass  # the URL with its token is printed by ``cmd_serve``

        def initialize_logging(self) -> None:
            super().initialize_logging()
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # URLs carry the token

    return GuardedServer(command, host=host, port=port, title="teamdeck")


def cmd_serve(home: Home, args: argparse.Namespace) -> int:
    from app.runtime.model.credentials import held_credentials

    token = secrets.token_urlsafe(24)
    command = served_command(args)
    server = build_server(command, args.host, args.port, token)
    # The served dashboards are this desk's, started by it: they take the API key from their
    # environment and move it out of reach at once, as this process did (``hold_credentials``).
    os.environ.update(held_credentials())
    print(f"teamdeck serve: {server.public_url}/?token={token}", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"teamdeck serve: listening on {args.host}: anyone with the URL steers the team; "
            "use a private network or an SSH tunnel (plain HTTP is not encrypted)",
            file=sys.stderr,
            flush=True,
        )
    server.serve()
    return 0


def register(commands: Any, command: Callable[..., argparse.ArgumentParser]) -> set[Handler]:
    """Add ``serve``."""
    sub = command(commands, "serve", "the dashboard in a browser, behind a token", cmd_serve)
    sub.add_argument("--host", default="127.0.0.1", help="the address to listen on (127.0.0.1)")
    sub.add_argument("--port", type=int, default=8000, help="the port (8000)")
    sub.add_argument(
        "served",
        nargs=argparse.REMAINDER,
        metavar="COMMAND",
        help="the teamdeck command served (default: tui; e.g. demo, or tui --team T)",
    )
    return set()

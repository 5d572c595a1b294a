"""The one place that picks the team store's backend.

The engine URL comes from, in order: the ``--engine`` option (passed in as ``engine``), the
``TEAMDECK_ENGINE`` variable, the home's ``engine/settings.json`` (``{"url": ...}``, written
by ``teamdeck join``/``server init``). No URL: the files, as always. Callers get an
``app.core.store.TeamStore`` and never ask which backend it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from app.core.errors import CorruptFileError
from app.core.home import Home
from app.core.paths import LEAD_NAME
from app.core.store import TeamStore
from app.core.watch import Watcher
from app.engine.errors import EngineError

ENV = "TEAMDECK_ENGINE"


def settings_path(home: Home) -> Path:
    return home.root / "engine" / "settings.json"


def engine_url(home: Home, engine: str | None = None) -> str | None:
    """The engine URL in force for ``home`` (``None``: the files)."""
    if engine:
        return check_url(engine)
    if os.environ.get(ENV):
        return check_url(os.environ[ENV])
    path = settings_path(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CorruptFileError(path, str(exc)) from None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url:
        raise CorruptFileError(path, 'no engine "url"')
    return check_url(url)


def check_url(url: str) -> str:
    if not url.startswith(("postgresql://", "postgres://")):
        raise EngineError(
            f"engine URL must start with postgresql:// (got {url.split(':', 1)[0]!r}:...)"
        )
    return url


def open_store(
    home: Home, team: str, engine: str | None = None, *, me: str = LEAD_NAME
) -> TeamStore:
    """The store of ``team``: the engine at the URL in force, else ``home``'s files."""
    url = engine_url(home, engine)
    if url is None:
        return TeamStore(
            team=team,
            backend="files",
            messages=home.mailbox(team),
            tasks=home.tasks(team),
            members=home.teams,
            feed=lambda: Watcher(home),
        )
    from app.engine.link import Link
    from app.engine.members import EngineTeams
    from app.engine.messages import EngineMailbox
    from app.engine.requests import EngineRequests
    from app.engine.tasks import EngineTasks
    from app.engine.watch import EngineFeed

    link = Link(url)
    return TeamStore(
        team=team,
        backend="engine",
        messages=EngineMailbox(link, team),
        tasks=EngineTasks(link, team),
        members=EngineTeams(link),
        feed=lambda: EngineFeed(url, team),
        requests=EngineRequests(link, team, me),
        close=link.close,
    )

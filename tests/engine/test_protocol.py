"""Both backends satisfy the store Protocols, and the backend is chosen in one place: the
``--engine`` URL, else ``TEAMDECK_ENGINE``, else the home's engine settings, else the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.home import Home
from app.core.store import ChangeFeed, MemberStore, MessageStore, RequestStore, TaskStore
from app.core.watch import Watcher
from app.engine.choose import ENV, engine_url, open_store, settings_path
from app.engine.errors import EngineError
from app.engine.watch import EngineFeed
from tests.engine.pg import Engine


def test_the_files_are_the_default_and_satisfy_the_protocols(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    home = Home(tmp_path / "home")
    home.teams.create("alpha")
    store = open_store(home, "alpha")
    assert store.backend == "files" and store.requests is None
    assert isinstance(store.messages, MessageStore)
    assert isinstance(store.tasks, TaskStore)
    assert isinstance(store.members, MemberStore)
    assert isinstance(Watcher(home), ChangeFeed)
    assert store.tasks.create("write it").id == "1"


def test_the_engine_is_chosen_by_option_then_variable_then_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path / "home")
    monkeypatch.delenv(ENV, raising=False)
    assert engine_url(home) is None
    path = settings_path(home)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"url": "postgresql://settings@h/db"}))
    assert engine_url(home) == "postgresql://settings@h/db"
    monkeypatch.setenv(ENV, "postgresql://env@h/db")
    assert engine_url(home) == "postgresql://env@h/db"
    assert engine_url(home, "postgresql://option@h/db") == "postgresql://option@h/db"
    with pytest.raises(EngineError, match="must start with postgresql://"):
        engine_url(home, "mysql://x")


def test_the_engine_satisfies_the_protocols(engine: Engine, tmp_path: Path) -> None:
    team = engine.team(["alice"])
    store = open_store(Home(tmp_path / "home"), team.name, team.desk_url)
    try:
        assert store.backend == "engine"
        assert isinstance(store.messages, MessageStore)
        assert isinstance(store.tasks, TaskStore)
        assert isinstance(store.members, MemberStore)
        assert isinstance(store.requests, RequestStore)
        assert isinstance(store.feed(), EngineFeed)
        assert isinstance(store.feed(), ChangeFeed)
        config = store.members.require(team.name)
        assert [m.name for m in config.members] == ["alice"]
        assert store.tasks.create("write it").id == "1"
    finally:
        store.close()


def test_a_wrong_password_is_one_line(engine: Engine, tmp_path: Path) -> None:
    team = engine.team(["alice"])
    role, rest = team.urls["alice"].split(":", 2)[1:]
    wrong = f"postgresql:{role}:wrong{rest[rest.index('@') :]}"
    with pytest.raises(EngineError) as caught:
        open_store(Home(tmp_path / "home"), team.name, wrong)
    message = str(caught.value)
    assert "\n" not in message and "password authentication failed" in message
    assert "password=" not in message

"""Fixtures for the archive tests: an offline environment, a home, a small project."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.archive import connect
from app.core import Home


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TEAMDECK_OFFLINE_PACE", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("TEAMDECK_MODEL", raising=False)
    monkeypatch.setenv("TEAMDECK_HOME", str(tmp_path / "teamdeck-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    monkeypatch.setattr("app.runtime.agent.teammate.FALLBACK_POLL", 120.0)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "alpha.py").write_text('"""Alpha: the first module."""\n\n\ndef a():\n    pass\n')
    (root / "beta.py").write_text('"""Beta: the second module."""\n\n\nclass B:\n    pass\n')
    (root / "pkg" / "gamma.py").write_text("# gamma helpers\ndef c():\n    pass\n")
    return root


def db(home: Home) -> sqlite3.Connection:
    return connect(home.root / "history.db")


def rows(home: Home, sql: str, *params: object) -> list[tuple[object, ...]]:
    conn = db(home)
    try:
        return list(conn.execute(sql, params))
    finally:
        conn.close()
